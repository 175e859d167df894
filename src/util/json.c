// SPDX-License-Identifier: MIT
// JSON string escaping (RFC 8259 section 7), see json.h.
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/error.h"
#include "util/json.h"
#include "util/strbuf.h"

// Length of the valid UTF-8 sequence at s (at most n bytes), 0 if there is
// none: overlong forms, surrogates and code points past U+10FFFF are invalid.
static size_t utf8_decode(const uint8_t *s, size_t n, uint32_t *cp_ret)
{
	uint8_t c = s[0];
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

void kp_json_put_string(struct kp_sb *sb, const void *str, size_t n)
{
	const uint8_t *s = str;
	kp_sb_putn(sb, "\"", 1);
	for (size_t i = 0; i < n;) {
		uint8_t c = s[i];
		uint32_t cp = 0;
		size_t len = utf8_decode(s + i, n - i, &cp);
		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			kp_sb_putn(sb, esc, 2);
		} else if (c == '\n') {
			kp_sb_putn(sb, "\\n", 2);
		} else if (c == '\t') {
			kp_sb_putn(sb, "\\t", 2);
		} else if (c == '\r') {
			kp_sb_putn(sb, "\\r", 2);
		} else if (len == 2 && c == 0xc2 && s[i + 1] < 0xa0) {
			kp_sb_printf(sb, "\\u%04x", s[i + 1]);	// C1: U+0080..U+009F
			i += 2;
			continue;
		} else if (len && hides_text(cp)) {
			kp_sb_printf(sb, "\\u%04x", (unsigned)cp);
			i += len;
			continue;
		} else if (c < 0x20 || c == 0x7f || !len) {
			// Not UTF-8 (kernel strings are bytes): the byte as the code
			// point of the same value, so the document stays valid.
			kp_sb_printf(sb, "\\u%04x", c);
		} else {
			kp_sb_putn(sb, (const char *)s + i, len);
			i += len;
			continue;
		}
		i++;
	}
	kp_sb_putn(sb, "\"", 1);
}

struct kp_error *kp_json_quote(const void *s, size_t len, char **ret)
{
	struct kp_sb sb = { 0 };
	kp_json_put_string(&sb, s, len);
	char *r = kp_sb_take(&sb);
	if (!r)
		return &kp_enomem;
	*ret = r;
	return NULL;
}
