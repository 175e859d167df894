// SPDX-License-Identifier: MIT
// The one table / key-value / JSON printer every command uses. Text mode
// prints aligned tables and "key: value" lines; JSON mode prints one JSON
// document per command (an object; tables become arrays of objects).
#ifndef KPEEK_OUTPUT_H
#define KPEEK_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct out;

enum col_kind {
	COL_STR,	// text; JSON string
	COL_INT,	// signed decimal; JSON number
	COL_UINT,	// unsigned decimal; JSON number
	COL_HEX,	// text "ffff8880..." (no 0x, like ps/crash); JSON string "0x..."
};

struct column {
	const char *name;	// header (text) and key (JSON, lower-cased)
	enum col_kind kind;
	bool left;		// left-align (default: numbers right, strings left)
};

// json: JSON instead of text. Output goes to stdout.
struct out *out_create(bool json);
// The same to f (stderr: a summary beside data on stdout).
struct out *out_create_file(bool json, FILE *f);
// Finishes the document (closes JSON) and frees.
void out_destroy(struct out *o);

// Key/value pairs at the current level (top-level object or nested object).
void out_kv_str(struct out *o, const char *key, const char *value);	// NULL -> null / "-"
void out_kv_int(struct out *o, const char *key, int64_t value);
void out_kv_uint(struct out *o, const char *key, uint64_t value);
void out_kv_hex(struct out *o, const char *key, uint64_t value);	// text 0x..., JSON "0x..."
// The value if known, else null in JSON and "unknown" in text: a number
// kpeek could not read is never printed as 0 or -1.
void out_kv_int_known(struct out *o, const char *key, bool known, int64_t value);
void out_kv_hex_known(struct out *o, const char *key, bool known, uint64_t value);
void out_kv_bool(struct out *o, const char *key, bool value);
// Nested object / list of objects under key (text: indented section).
void out_begin_object(struct out *o, const char *key);
void out_end_object(struct out *o);

// A table under key (JSON: "key": [ {...}, ... ]; text: header + aligned rows,
// printed at out_table_end). Cells are given row by row, one per column.
void out_table_begin(struct out *o, const char *key, const struct column *cols, int ncols);
void out_cell_str(struct out *o, const char *value);
void out_cell_int(struct out *o, int64_t value);
void out_cell_int_known(struct out *o, bool known, int64_t value);	// unknown: null / "-"
void out_cell_uint(struct out *o, uint64_t value);
void out_cell_hex(struct out *o, uint64_t value);
void out_table_end(struct out *o);

// A list under key (JSON array; text: "key:" then indented items). Inside a
// list, keys are ignored: out_kv_*(o, NULL, v) appends a scalar and
// out_begin_object(o, NULL) an object (text: separated by blank lines).
void out_begin_list(struct out *o, const char *key);
void out_end_list(struct out *o);
// A value that is already JSON text (e.g. from kp_value_format with
// KP_FORMAT_JSON); text mode prints text (or json if text is NULL). Invalid
// JSON is emitted as a string, so the document always stays valid.
void out_kv_json(struct out *o, const char *key, const char *json, const char *text);
// Prints what is pending and flushes stdout (e.g. after each watch sample).
void out_flush(struct out *o);
bool out_is_json(const struct out *o);
// Text mode writes only what out_text() gives: the key/value, object and
// list calls build the JSON document alone (a command whose text is its
// own layout, such as report). Tables are not for such an output.
void out_text_only(struct out *o);
// Writes to a closed pipe (kpeek ps | head) end the process quietly with
// status 0. Text output never carries control bytes from kernel strings:
// they are shown as \xNN (out_text keeps newlines and tabs).

// Free text (text mode only; ignored in JSON mode), e.g. a hexdump line.
void out_text(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// CPU registers (output_regs.c): JSON {"name": "0x..."} under key; text three
// to a line, names upper-case ("      PC: ffff800080000000"), indented by four.
void out_regs(struct out *o, const char *key, unsigned nregs, const uint64_t *regs,
	      const char *const *names);

#endif
