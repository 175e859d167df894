// SPDX-License-Identifier: MIT
// A growable NUL-terminated string. After an allocation failure it stays
// failed: later appends do nothing and kp_sb_take() returns NULL, so callers
// check once at the end.
#ifndef KP_UTIL_STRBUF_H
#define KP_UTIL_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct kp_sb {
	char *buf;
	size_t len, cap;
	bool failed;
};

void kp_sb_printf(struct kp_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kp_sb_putn(struct kp_sb *sb, const char *s, size_t n);
void kp_sb_puts(struct kp_sb *sb, const char *s);
// Room for extra more bytes (and the NUL); false once failed.
bool kp_sb_reserve(struct kp_sb *sb, size_t extra);
// Drops the text after the first len bytes.
void kp_sb_truncate(struct kp_sb *sb, size_t len);
char *kp_sb_take(struct kp_sb *sb);	// caller frees; NULL if failed
void kp_sb_free(struct kp_sb *sb);

// snprintf into a fixed buffer of size >= 4 whose text, when it does not
// fit, ends in "..." where it was cut (a note that stops mid-word reads as
// the whole of it).
void kp_str_fit(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
