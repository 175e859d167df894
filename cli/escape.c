// SPDX-License-Identifier: MIT
// What strings from kernel memory become before the CLI prints them (see
// escape.h): terminal text that cannot drive the terminal, and JSON text
// checked before it is put into a document as it is.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

// Length of a valid UTF-8 sequence at s (at most n bytes), 0 if invalid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp_ret)
{
	unsigned c = s[0];
	size_t len;
	uint32_t cp, min;
	if (c < 0x80) {
		*cp_ret = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2; cp = c & 0x1f; min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3; cp = c & 0x0f; min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4; cp = c & 0x07; min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*cp_ret = cp;
	return len;
}

static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	return utf8_decode(s, n, &cp);
}

// Characters that are valid UTF-8 but reorder or hide text on a terminal
// (Unicode format characters: "init\u202eexe.hs" shows as "initsh.exe"):
// the bidi marks, embeddings, overrides and isolates, zero-width characters,
// the line and paragraph separators and the BOM. They are escaped like
// control characters.
static bool hides_text(uint32_t cp)
{
	return cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) ||
	       cp == 0xfeff;
}

char *esc_text(const char *s, bool keep_newlines)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	char *r = malloc(4 * n + 1), *q = r;
	if (!r)
		return NULL;
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		uint32_t cp = 0;
		size_t len = utf8_decode(p + i, n - i, &cp);
		bool c1 = len == 2 && c == 0xc2 && p[i + 1] < 0xa0;
		if (keep_newlines && (c == '\n' || c == '\t')) {
			*q++ = (char)c;
			i++;
		} else if (len && hides_text(cp)) {
			q += sprintf(q, "\\u%04x", (unsigned)cp);
			i += len;
		} else if (c < 0x20 || c == 0x7f || !len || c1) {
			size_t k = c1 ? 2 : 1;
			for (size_t m = 0; m < k; m++)
				q += sprintf(q, "\\x%02x", p[i + m]);
			i += k;
		} else {
			memcpy(q, p + i, len);
			q += len;
			i += len;
		}
	}
	*q = '\0';
	return r;
}

size_t esc_text_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

// Recursive-descent check that text is one JSON value (RFC 8259), so that raw
// values from elsewhere can never make the document invalid.
struct jcheck {
	const char *p;
	int depth;
};

static void jc_ws(struct jcheck *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static bool jc_value(struct jcheck *j);

static bool jc_string(struct jcheck *j)
{
	if (*j->p != '"')
		return false;
	j->p++;
	for (;;) {
		unsigned char c = (unsigned char)*j->p;
		if (c == '"') {
			j->p++;
			return true;
		}
		if (c < 0x20)
			return false;	// includes the terminating NUL
		if (c == '\\') {
			j->p++;
			c = (unsigned char)*j->p;
			if (c == 'u') {
				for (int i = 1; i <= 4; i++) {
					char h = j->p[i];
					if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') ||
					      (h >= 'A' && h <= 'F')))
						return false;
				}
				j->p += 5;
			} else if (c && strchr("\"\\/bfnrt", c)) {
				j->p++;
			} else {
				return false;
			}
			continue;
		}
		// At most 4 bytes: utf8_len() stops at the NUL, a non-continuation
		// byte (strlen() here made checking a document quadratic).
		size_t len = utf8_len((const unsigned char *)j->p, strnlen(j->p, 4));
		if (!len)
			return false;
		j->p += len;
	}
}

static bool jc_digits(struct jcheck *j)
{
	if (*j->p < '0' || *j->p > '9')
		return false;
	while (*j->p >= '0' && *j->p <= '9')
		j->p++;
	return true;
}

static bool jc_number(struct jcheck *j)
{
	if (*j->p == '-')
		j->p++;
	if (*j->p == '0')
		j->p++;
	else if (!jc_digits(j))
		return false;
	if (*j->p == '.') {
		j->p++;
		if (!jc_digits(j))
			return false;
	}
	if (*j->p == 'e' || *j->p == 'E') {
		j->p++;
		if (*j->p == '+' || *j->p == '-')
			j->p++;
		if (!jc_digits(j))
			return false;
	}
	return true;
}

static bool jc_seq(struct jcheck *j, char close, bool keys)
{
	j->p++;
	jc_ws(j);
	if (*j->p == close) {
		j->p++;
		return true;
	}
	for (;;) {
		if (keys) {
			if (!jc_string(j))
				return false;
			jc_ws(j);
			if (*j->p != ':')
				return false;
			j->p++;
		}
		if (!jc_value(j))
			return false;
		jc_ws(j);
		if (*j->p == close) {
			j->p++;
			return true;
		}
		if (*j->p != ',')
			return false;
		j->p++;
		jc_ws(j);
	}
}

static bool jc_value(struct jcheck *j)
{
	bool ok;
	jc_ws(j);
	switch (*j->p) {
	case '{':
	case '[':
		if (++j->depth > 200)
			return false;
		ok = jc_seq(j, *j->p == '{' ? '}' : ']', *j->p == '{');
		j->depth--;
		return ok;
	case '"':
		return jc_string(j);
	case 't':
		return strncmp(j->p, "true", 4) == 0 && (j->p += 4);
	case 'f':
		return strncmp(j->p, "false", 5) == 0 && (j->p += 5);
	case 'n':
		return strncmp(j->p, "null", 4) == 0 && (j->p += 4);
	default:
		return jc_number(j);
	}
}

bool esc_json_valid(const char *text)
{
	struct jcheck j = { text, 0 };
	if (!jc_value(&j))
		return false;
	jc_ws(&j);
	return *j.p == '\0';
}
