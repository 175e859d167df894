// SPDX-License-Identifier: MIT
// Text and JSON output for every command (see output.h). Text mode buffers a
// run of key/value lines so that their values line up, and a whole table so
// that its columns line up; everything else streams. JSON mode streams one
// document, indented, with table rows on one line each.
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <kpeek/kpeek.h>

#include "escape.h"
#include "output.h"

enum { MAX_DEPTH = 32 };

enum level_kind { L_OBJ, L_LIST, L_TABLE };

struct level {
	enum level_kind kind;
	size_t count;	// items (or table rows) emitted so far
	int tindent;	// text: indentation of the level's lines
};

struct kvline {
	char *key;	// NULL: bare list item
	char *value;
};

struct out {
	bool json;
	bool text_only;	// text: only out_text() writes (out_text_only())
	FILE *f;
	struct level stack[MAX_DEPTH];
	int depth;	// stack[0] is the top-level object
	int overflow;	// levels opened beyond MAX_DEPTH (ignored, but balanced)
	// text: pending key/value run, printed aligned by flush_kv()
	struct kvline *kv;
	size_t nkv, kvcap;
	// current table
	struct column *cols;
	int ncols;
	int col;
	bool table_heading;	// text: the table is under a "key:" heading
	char **cells;	// text: formatted cells, row-major
	size_t ncells, cellcap;
};

// ---------------------------------------------------------------- helpers

// The output cannot be made: as for a failed write, exit 2 (1 would say
// "found" or "differs" for check and diff).
static void die_nomem(void)
{
	fputs("kpeek: out of memory\n", stderr);
	exit(2);
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		die_nomem();
	return p;
}

static char *xstrdup(const char *s)
{
	char *r = strdup(s);
	if (!r)
		die_nomem();
	return r;
}

// A reader that went away (kpeek ps | head) is not an error: stop quietly.
static void check_stream(struct out *o)
{
	if (ferror(o->f) && errno == EPIPE)
		_exit(0);
}

// The library's JSON string escaper, so that every string of every document
// (ps -j, dmesg -j, rd -j -a, print -j) is escaped the same way.
static void json_string(FILE *f, const char *s)
{
	char *q;
	struct kp_error *err = kp_json_quote(s, strlen(s), &q);
	if (err)
		die_nomem();
	fputs(q, f);
	free(q);
}

// Text-mode copy of s (escape.h).
static char *text_clean(const char *s, bool keep_newlines)
{
	char *r = esc_text(s, keep_newlines);
	if (!r)
		die_nomem();
	return r;
}

static void indent(FILE *f, int n)
{
	for (int i = 0; i < n; i++)
		fputs("  ", f);
}

// JSON key of a column header: lower case, spaces as '_'.
static char *json_key(const char *name)
{
	char *k = xstrdup(name);
	for (char *p = k; *p; p++) {
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
		else if (*p == ' ')
			*p = '_';
	}
	return k;
}

// ---------------------------------------------------------------- text runs

static struct level *top(struct out *o)
{
	return &o->stack[o->depth];
}


static void flush_kv(struct out *o)
{
	if (!o->nkv)
		return;
	size_t w = 0;
	for (size_t i = 0; i < o->nkv; i++)
		if (o->kv[i].key && esc_text_width(o->kv[i].key) > w)
			w = esc_text_width(o->kv[i].key);
	for (size_t i = 0; i < o->nkv; i++) {
		indent(o->f, top(o)->tindent);
		if (o->kv[i].key) {
			fputs(o->kv[i].key, o->f);
			putc(':', o->f);
			for (size_t k = esc_text_width(o->kv[i].key); k < w + 1; k++)
				putc(' ', o->f);
		}
		fputs(o->kv[i].value, o->f);
		putc('\n', o->f);
		free(o->kv[i].key);
		free(o->kv[i].value);
	}
	o->nkv = 0;
	check_stream(o);
}

static void text_kv(struct out *o, const char *key, const char *value)
{
	if (o->nkv == o->kvcap) {
		o->kvcap = o->kvcap ? 2 * o->kvcap : 16;
		o->kv = xrealloc(o->kv, o->kvcap * sizeof(*o->kv));
	}
	o->kv[o->nkv].key = key ? text_clean(key, false) : NULL;
	o->kv[o->nkv].value = text_clean(value, false);
	o->nkv++;
}

// ---------------------------------------------------------------- JSON items

// Starts an item at the current level: separator, indentation and the key
// (objects only; list items have none).
static void json_item(struct out *o, const char *key)
{
	struct level *l = top(o);
	if (l->count++)
		putc(',', o->f);
	putc('\n', o->f);
	indent(o->f, o->depth + 1);
	if (l->kind == L_OBJ) {
		json_string(o->f, key ? key : "value");
		fputs(": ", o->f);
	}
}

static bool in_table(struct out *o)
{
	return top(o)->kind == L_TABLE;
}

// ---------------------------------------------------------------- public

struct out *out_create(bool json)
{
	return out_create_file(json, stdout);
}

struct out *out_create_file(bool json, FILE *f)
{
	struct out *o = calloc(1, sizeof(*o));
	if (!o)
		die_nomem();
	o->json = json;
	o->f = f;
	o->stack[0].kind = L_OBJ;
	if (json)
		putc('{', o->f);
	return o;
}

void out_destroy(struct out *o)
{
	if (!o)
		return;
	while (o->overflow)
		out_end_object(o);
	if (in_table(o))
		out_table_end(o);
	while (o->depth > 0)
		out_end_object(o);	// closes lists too
	if (o->json) {
		if (o->stack[0].count)
			putc('\n', o->f);
		fputs("}\n", o->f);
	} else {
		flush_kv(o);
	}
	fflush(o->f);
	check_stream(o);
	free(o->kv);
	free(o);
}

void out_text_only(struct out *o)
{
	o->text_only = true;
}

void out_flush(struct out *o)
{
	if (!o->json)
		flush_kv(o);
	fflush(o->f);
	check_stream(o);
}

// One scalar at the current level; json is its JSON text, text its text form.
static void kv_scalar(struct out *o, const char *key, const char *json, const char *text,
		      bool json_is_string)
{
	if (o->overflow || in_table(o))
		return;	// misuse: keep the document valid
	if (o->json) {
		json_item(o, key);
		if (json_is_string)
			json_string(o->f, json);
		else
			fputs(json, o->f);
	} else if (!o->text_only) {
		text_kv(o, top(o)->kind == L_LIST ? NULL : key, text);
	}
}

void out_kv_str(struct out *o, const char *key, const char *value)
{
	if (o->json && !value)
		kv_scalar(o, key, "null", NULL, false);
	else
		kv_scalar(o, key, value ? value : "-", value ? value : "-", o->json);
}

void out_kv_int(struct out *o, const char *key, int64_t value)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRId64, value);
	kv_scalar(o, key, buf, buf, false);
}

void out_kv_uint(struct out *o, const char *key, uint64_t value)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	kv_scalar(o, key, buf, buf, false);
}

void out_kv_hex(struct out *o, const char *key, uint64_t value)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "0x%" PRIx64, value);
	kv_scalar(o, key, buf, buf, true);
}

void out_kv_int_known(struct out *o, const char *key, bool known, int64_t value)
{
	if (known)
		out_kv_int(o, key, value);
	else
		kv_scalar(o, key, "null", "unknown", false);
}

void out_kv_hex_known(struct out *o, const char *key, bool known, uint64_t value)
{
	if (known)
		out_kv_hex(o, key, value);
	else
		kv_scalar(o, key, "null", "unknown", false);
}

void out_kv_bool(struct out *o, const char *key, bool value)
{
	kv_scalar(o, key, value ? "true" : "false", value ? "yes" : "no", false);
}

void out_kv_json(struct out *o, const char *key, const char *json, const char *text)
{
	if (!text)
		text = json;
	if (o->json && !esc_json_valid(json))
		kv_scalar(o, key, json, text, true);	// keep it, as a string
	else
		kv_scalar(o, key, json, text, false);
}

static void begin_level(struct out *o, const char *key, enum level_kind kind)
{
	if (o->overflow || o->depth + 1 >= MAX_DEPTH || in_table(o)) {
		o->overflow++;
		return;
	}
	if (o->json) {
		json_item(o, key);
		putc(kind == L_OBJ ? '{' : '[', o->f);
	} else if (o->text_only) {
		top(o)->count++;
	} else {
		flush_kv(o);
		// A top-level table has no heading (commands print one with
		// out_text() if they want); nested, "key:" is the structure.
		if (key && top(o)->kind == L_OBJ && (kind != L_TABLE || o->depth > 0)) {
			char *k = text_clean(key, false);
			indent(o->f, top(o)->tindent);
			fprintf(o->f, "%s:\n", k);
			free(k);
		} else if (top(o)->kind == L_LIST && top(o)->count) {
			putc('\n', o->f);	// blank line between list items
		}
		top(o)->count++;
	}
	o->table_heading = kind == L_TABLE && key && top(o)->kind == L_OBJ && o->depth > 0;
	// Text: nested levels indent, except an object that is a list item
	// (the list already did) and a table without a heading.
	int ti = top(o)->tindent;
	if (kind == L_TABLE ? o->table_heading : top(o)->kind != L_LIST)
		ti++;
	o->depth++;
	o->stack[o->depth].kind = kind;
	o->stack[o->depth].count = 0;
	o->stack[o->depth].tindent = ti;
}

void out_begin_object(struct out *o, const char *key)
{
	begin_level(o, key, L_OBJ);
}

void out_begin_list(struct out *o, const char *key)
{
	begin_level(o, key, L_LIST);
}

void out_end_object(struct out *o)
{
	if (o->overflow) {
		o->overflow--;
		return;
	}
	if (o->depth == 0)
		return;
	if (in_table(o)) {
		out_table_end(o);
		if (o->depth == 0)
			return;
	}
	if (o->json) {
		if (top(o)->count) {
			putc('\n', o->f);
			indent(o->f, o->depth);
		}
		putc(top(o)->kind == L_OBJ ? '}' : ']', o->f);
	} else {
		flush_kv(o);
	}
	o->depth--;
}

void out_end_list(struct out *o)
{
	out_end_object(o);
}

void out_table_begin(struct out *o, const char *key, const struct column *cols, int ncols)
{
	begin_level(o, key ? key : "rows", L_TABLE);
	if (o->overflow)
		return;
	o->cols = xrealloc(NULL, (size_t)(ncols > 0 ? ncols : 1) * sizeof(*cols));
	o->ncols = ncols > 0 ? ncols : 0;
	for (int i = 0; i < o->ncols; i++) {
		o->cols[i] = cols[i];
		o->cols[i].name = o->json ? json_key(cols[i].name) : text_clean(cols[i].name, false);
	}
	o->col = 0;
	o->ncells = 0;
}

// One cell: JSON text (string or raw) and the text form.
static void cell(struct out *o, const char *json, bool json_is_string, const char *text)
{
	if (o->overflow || !in_table(o) || !o->ncols)
		return;
	if (o->json) {
		struct level *l = top(o);
		if (o->col == 0) {
			if (l->count)
				putc(',', o->f);
			putc('\n', o->f);
			indent(o->f, o->depth + 1);
			putc('{', o->f);
		} else {
			fputs(", ", o->f);
		}
		json_string(o->f, o->cols[o->col].name);
		fputs(": ", o->f);
		if (json_is_string)
			json_string(o->f, json);
		else
			fputs(json, o->f);
		if (++o->col == o->ncols) {
			putc('}', o->f);
			o->col = 0;
			l->count++;
			check_stream(o);
		}
	} else {
		if (o->ncells == o->cellcap) {
			o->cellcap = o->cellcap ? 2 * o->cellcap : 64;
			o->cells = xrealloc(o->cells, o->cellcap * sizeof(*o->cells));
		}
		o->cells[o->ncells++] = text_clean(text, false);
		if (++o->col == o->ncols)
			o->col = 0;
	}
}

void out_cell_str(struct out *o, const char *value)
{
	if (!value)
		cell(o, "null", false, "-");
	else
		cell(o, value, true, value);
}

void out_cell_int(struct out *o, int64_t value)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRId64, value);
	cell(o, buf, false, buf);
}

void out_cell_int_known(struct out *o, bool known, int64_t value)
{
	if (known)
		out_cell_int(o, value);
	else
		out_cell_str(o, NULL);
}

void out_cell_uint(struct out *o, uint64_t value)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	cell(o, buf, false, buf);
}

void out_cell_hex(struct out *o, uint64_t value)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "0x%" PRIx64, value);
	cell(o, buf, true, buf + 2);
}

static void print_table(struct out *o)
{
	int n = o->ncols;
	size_t *w = xrealloc(NULL, (size_t)n * sizeof(*w));
	for (int c = 0; c < n; c++)
		w[c] = esc_text_width(o->cols[c].name);
	for (size_t i = 0; i < o->ncells; i++) {
		size_t tw = esc_text_width(o->cells[i]);
		if (tw > w[i % (size_t)n])
			w[i % (size_t)n] = tw;
	}
	size_t rows = (o->ncells + (size_t)n - 1) / (size_t)n;
	for (size_t r = 0; r <= rows; r++) {
		// Row 0 is the header; a last partial row is printed as given.
		int last = n - 1;
		if (r > 0 && (r - 1) * (size_t)n + (size_t)n > o->ncells)
			last = (int)(o->ncells - (r - 1) * (size_t)n) - 1;
		indent(o->f, top(o)->tindent);
		// Spaces are written only before something visible: no trailing
		// blanks when the last cells are empty.
		size_t spaces = 0;
		for (int c = 0; c <= last; c++) {
			const char *s = r == 0 ? o->cols[c].name : o->cells[(r - 1) * (size_t)n + (size_t)c];
			size_t pad = w[c] - esc_text_width(s);
			bool left = o->cols[c].left || o->cols[c].kind == COL_STR;
			if (c)
				spaces += 2;
			if (!left)
				spaces += pad;
			if (*s) {
				for (; spaces; spaces--)
					putc(' ', o->f);
				fputs(s, o->f);
			}
			if (left)
				spaces += pad;
		}
		putc('\n', o->f);
		check_stream(o);
	}
	free(w);
}

void out_table_end(struct out *o)
{
	if (o->overflow) {
		o->overflow--;
		return;
	}
	if (!in_table(o))
		return;
	if (o->json) {
		if (o->col) {
			// A partial last row: close it so the document stays valid.
			putc('}', o->f);
			top(o)->count++;
		}
		if (top(o)->count) {
			putc('\n', o->f);
			indent(o->f, o->depth);
		}
		putc(']', o->f);
	} else if (o->ncols) {
		print_table(o);
	}
	for (size_t i = 0; i < o->ncells; i++)
		free(o->cells[i]);
	free(o->cells);
	o->cells = NULL;
	o->ncells = o->cellcap = 0;
	for (int i = 0; i < o->ncols; i++)
		free((char *)o->cols[i].name);
	free(o->cols);
	o->cols = NULL;
	o->ncols = 0;
	o->col = 0;
	o->depth--;
}

void out_text(struct out *o, const char *fmt, ...)
{
	if (o->json)
		return;
	flush_kv(o);
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die_nomem();
	char *clean = text_clean(s, true);
	fputs(clean, o->f);
	free(clean);
	free(s);
	check_stream(o);
}

bool out_is_json(const struct out *o)
{
	return o->json;
}
