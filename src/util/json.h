// SPDX-License-Identifier: MIT
// JSON string literals: the one escaper behind the library's JSON values and
// (through kp_json_quote()) the CLI's documents.
#ifndef KP_UTIL_JSON_H
#define KP_UTIL_JSON_H

#include <stddef.h>

struct kp_sb;

// Appends s (n bytes, NULs included) as a quoted JSON string. Valid UTF-8 is
// kept; control characters (C0, DEL and the C1 range U+0080..U+009F, which
// terminals obey too) and bytes that are not UTF-8 become \u00XX; the
// format characters that reorder or hide text (bidi controls, zero-width
// characters, U+2028/U+2029, U+FEFF) become \uXXXX, as in text output.
void kp_json_put_string(struct kp_sb *sb, const void *s, size_t n);

#endif
