// SPDX-License-Identifier: MIT
// Growable strings (strbuf.h).
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

bool kp_sb_reserve(struct kp_sb *sb, size_t extra)
{
	if (sb->failed)
		return false;
	if (extra < SIZE_MAX && sb->cap - sb->len > extra)
		return true;
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap - sb->len <= extra) {
		if (cap > SIZE_MAX / 2) {
			sb->failed = true;
			return false;
		}
		cap *= 2;
	}
	char *buf = realloc(sb->buf, cap);
	if (!buf) {
		sb->failed = true;
		return false;
	}
	sb->buf = buf;
	sb->cap = cap;
	return true;
}

void kp_sb_printf(struct kp_sb *sb, const char *fmt, ...)
{
	if (sb->failed)
		return;
	for (;;) {
		size_t avail = sb->cap - sb->len;
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL, avail, fmt, ap);
		va_end(ap);
		if (n < 0) {
			sb->failed = true;
			return;
		}
		if ((size_t)n < avail) {
			sb->len += (size_t)n;
			return;
		}
		if (!kp_sb_reserve(sb, (size_t)n))
			return;
	}
}

void kp_sb_putn(struct kp_sb *sb, const char *s, size_t n)
{
	if (!kp_sb_reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void kp_sb_puts(struct kp_sb *sb, const char *s)
{
	kp_sb_putn(sb, s, strlen(s));
}

void kp_sb_truncate(struct kp_sb *sb, size_t len)
{
	if (sb->buf && len < sb->len) {
		sb->len = len;
		sb->buf[len] = '\0';
	}
}

char *kp_sb_take(struct kp_sb *sb)
{
	if (sb->failed) {
		kp_sb_free(sb);
		return NULL;
	}
	if (!sb->buf)
		return strdup("");
	char *s = sb->buf;
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return s;
}

void kp_sb_free(struct kp_sb *sb)
{
	free(sb->buf);
	*sb = (struct kp_sb){ 0 };
}

void kp_str_fit(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0)
		buf[0] = '\0';
	else if ((size_t)n >= size)
		memcpy(buf + size - 4, "...", 4);
}
