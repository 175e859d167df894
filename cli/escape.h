// SPDX-License-Identifier: MIT
// Strings from kernel memory made safe for where they are printed: a
// terminal (text mode) or a JSON document. JSON strings themselves are
// quoted by the library (kp_json_quote), so that every document quotes
// them the same way.
#ifndef KPEEK_ESCAPE_H
#define KPEEK_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

// A malloc'ed copy of s that cannot move the cursor or drive the terminal:
// control bytes (C0, DEL, C1 as U+0080..U+009F) and bytes that are not UTF-8
// become \xNN, and the format characters that reorder or hide text (bidi
// controls U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069, zero-width
// U+200B..U+200D, U+2060..U+206F, U+2028/U+2029, U+FEFF) become \uXXXX; other
// valid UTF-8 is kept. keep_newlines keeps '\n' and '\t' (free text). NULL
// when out of memory.
char *esc_text(const char *s, bool keep_newlines);
// Columns s takes on a UTF-8 terminal (continuation bytes take none).
size_t esc_text_width(const char *s);
// Whether text is exactly one JSON value (RFC 8259), so that raw values from
// elsewhere can never make a document invalid.
bool esc_json_valid(const char *text);

#endif
