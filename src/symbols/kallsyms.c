// SPDX-License-Identifier: MIT
// Symbol sources in kallsyms form: /proc/kallsyms and System.map text, and the
// kernel's compressed in-memory tables.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/vmcoreinfo.h"
#include "io/file.h"
#include "symbols/kallsyms.h"
#include "util/error.h"
#include "util/vec.h"

// KSYM_NAME_LEN is 512 since 6.1 (128 before); allow more, bound the rest.
#define MAX_NAME 1024
#define MAX_MODULE_NAME 256
// Per-CPU offsets and absolute values: never relocated by KASLR.
#define MIN_RELOCATED_ADDRESS 0x100000000ULL

// ---------------------------------------------------------------- text

// Debian ships /boot/System.map-* as a one-line placeholder:
//   ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package
#define DEBIAN_STUB "The real System.map is in the"

struct text_line {
	uint64_t address;
	char type;
	const char *name;
	size_t name_len;
	const char *module;	// NULL for core kernel
	size_t module_len;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

// /proc/kallsyms prints names as the kernel has them: module symbols of
// recent compilers include local labels such as ".L14472\x021" (gcc 16,
// seen in Debian's 7.2 arm64 modules). Only the separators end a name.
static bool is_name_char(unsigned char c)
{
	return c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\0';
}

// Parses one line [p, end) (no newline). Returns NULL or a static reason.
static const char *parse_line(const char *p, const char *end, struct text_line *ret)
{
	const char *start = p;
	uint64_t addr = 0;
	while (p < end && hex_digit(*p) >= 0) {
		if (p - start >= 16)
			return "address longer than 16 hex digits";
		addr = addr << 4 | hex_digit(*p++);
	}
	if (p == start)
		return "expected a hex address";
	if (p == end || !is_space(*p))
		return "expected a space after the address";
	while (p < end && is_space(*p))
		p++;
	if (p == end || !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  *p == '?'))
		return "expected a type letter";
	char type = *p++;
	if (p == end || !is_space(*p))
		return "expected a space after the type letter";
	while (p < end && is_space(*p))
		p++;
	const char *name = p;
	while (p < end && is_name_char(*p))
		p++;
	if (p == name)
		return "expected a symbol name";
	if (p - name > MAX_NAME)
		return "symbol name too long";
	size_t name_len = p - name;
	while (p < end && is_space(*p))
		p++;
	const char *module = NULL;
	size_t module_len = 0;
	if (p < end) {
		if (*p != '[')
			return "unexpected text after the symbol name";
		module = ++p;
		while (p < end && *p != ']' && is_name_char(*p))
			p++;
		if (p == end || *p != ']' || p == module)
			return "malformed [module] field";
		module_len = p - module;
		if (module_len > MAX_MODULE_NAME)
			return "module name too long";
		p++;
		while (p < end && is_space(*p))
			p++;
		if (p < end)
			return "unexpected text after the module name";
	}
	ret->address = addr;
	ret->type = type;
	ret->name = name;
	ret->name_len = name_len;
	ret->module = module;
	ret->module_len = module_len;
	return NULL;
}

// Calls each line of text in turn: the validation pass (st NULL) checks every
// line before the adding pass touches st, so bad input leaves st unchanged.
static struct kp_error *text_pass(const char *text, size_t len, uint64_t bias,
				  const char *what, struct kp_symtab *st,
				  size_t *lines_ret, bool *nonzero_ret)
{
	const char *p = text, *end = text + len;
	size_t lineno = 0, lines = 0;
	bool nonzero = false;
	char module[MAX_MODULE_NAME + 1];
	while (p < end) {
		lineno++;
		const char *eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		const char *line = p, *lend = eol;
		p = eol < end ? eol + 1 : end;
		if (lend > line && lend[-1] == '\r')
			lend--;
		if (lend == line)
			continue;
		struct text_line tl;
		const char *why = parse_line(line, lend, &tl);
		if (why) {
			if (!st && memmem(line, lend - line, DEBIAN_STUB, strlen(DEBIAN_STUB)))
				return kp_error_create(KP_ERR_UNSUPPORTED,
						       "%s is Debian's placeholder System.map (\"%.*s\"): install linux-image-<release>-dbg and pass /usr/lib/debug/boot/System.map-<release>, or leave out the System.map to use the kernel's own kallsyms",
						       what, (int)(lend - line > 120 ? 120 : lend - line), line);
			return kp_error_create(KP_ERR_FORMAT, "%s line %zu: %s", what, lineno, why);
		}
		lines++;
		nonzero |= tl.address != 0;
		if (!st)
			continue;
		uint64_t addr = tl.address;
		if (addr >= MIN_RELOCATED_ADDRESS)
			addr += bias;
		const char *mod = NULL;
		if (tl.module) {
			memcpy(module, tl.module, tl.module_len);
			module[tl.module_len] = '\0';
			mod = module;
		}
		struct kp_error *err = kp_symtab_add(st, tl.name, tl.name_len, addr, tl.type, mod);
		if (err)
			return kp_error_prefix(err, "%s line %zu", what, lineno);
	}
	*lines_ret = lines;
	*nonzero_ret = nonzero;
	return NULL;
}

struct kp_error *kp_kallsyms_parse_text(const char *text, size_t len, uint64_t bias,
					const char *what, struct kp_symtab *st)
{
	// A NUL ends the text (a buffer read from /proc may carry one).
	const char *nul = memchr(text, '\0', len);
	if (nul)
		len = nul - text;
	size_t lines;
	bool nonzero;
	struct kp_error *err = text_pass(text, len, bias, what, NULL, &lines, &nonzero);
	if (err)
		return err;
	if (lines == 0)
		return kp_error_create(KP_ERR_FORMAT, "%s has no symbols", what);
	// With kernel.kptr_restrict (or without CAP_SYSLOG) /proc/kallsyms
	// prints every address as zero.
	if (!nonzero)
		return kp_error_create(KP_ERR_PERMISSION,
				       "%s: all %zu symbol addresses are zero: addresses are hidden (kernel.kptr_restrict): run as root with CAP_SYSLOG or set kernel.kptr_restrict=0",
				       what, lines);
	err = kp_symtab_reserve(st, lines);
	if (err)
		return err;
	return text_pass(text, len, bias, what, st, &lines, &nonzero);
}

// ---------------------------------------------------------------- memory
//
// The in-memory tables (kernel/kallsyms.c, generated by scripts/kallsyms.c;
// little-endian here; where each table sits is in kallsyms_scan.c):
//
//   kallsyms_num_syms      unsigned int: number of symbols, N.
//   kallsyms_names         N records, in address order. A record is a length
//                          L followed by L token indices (bytes). L counts
//                          tokens, not characters. Until 6.0 L was one byte;
//                          since 6.1 (73bbb94466fd, "kallsyms: support big
//                          kernel symbols") an L >= 0x80 takes two bytes,
//                          L = (b0 & 0x7f) | b1 << 7 (b1 < 0x80). Older
//                          kernels never produce a first byte >= 0x80 in
//                          practice (KSYM_NAME_LEN was 128), so the 6.1 rule
//                          reads both.
//   kallsyms_token_table   256 NUL-terminated strings, concatenated. Token t
//                          expands to the string at token_table +
//                          token_index[t]. Codes that appear as plain
//                          characters in symbol names map to themselves;
//                          unused codes expand to "".
//   kallsyms_token_index   u16[256]: offsets into kallsyms_token_table.
//   kallsyms_markers       u32 offset into names of every 256th record (we
//                          decode sequentially and do not need it).
//
// Expanding a record's tokens gives the nm type letter followed by the name
// (scripts/kallsyms.c compresses the type together with the name).
//
// Addresses, symbol i, in one of three encodings:
//   kallsyms_addresses, unsigned long[N] (CONFIG_KALLSYMS_BASE_RELATIVE=n;
//     no such x86-64 or arm64 kernel since 4.6).
//   kallsyms_offsets, s32[N], and kallsyms_relative_base (u64), 4.6 to 6.x:
//     CONFIG_KALLSYMS_ABSOLUTE_PERCPU=y (x86-64 SMP): offset >= 0 is the
//       absolute value (per-CPU symbols), offset < 0 means
//       relative_base - 1 - offset;
//     else: relative_base + (u32)offset.
//     Nothing in memory says which; drgn compares _stext with VMCOREINFO.
//     Here: in the unsigned form relative_base is the lowest address and
//     the kernel spans far less than 2 GiB, so no offset has bit 31 set,
//     while in the absolute-percpu form every non-per-CPU symbol has it.
//     Any negative offset therefore means absolute-percpu.
//   kallsyms_offsets alone, PC-relative (Debian's 7.2; "kallsyms: Get rid
//     of kallsyms relative base", 2026): address = &kallsyms_offsets[i] +
//     (s32)offset. VMCOREINFO then names no kallsyms_relative_base.

#define MAX_SYMS 4000000u
#define MAX_TOKEN_LEN 4096	// one token can never exceed a whole name
#define NAMES_WINDOW (256u * 1024)
// Longest record: two length bytes and 0x3fff tokens.
#define MAX_RECORD (2 + 0x3fff)

struct reader {
	struct kp_memory *mem;
	uint64_t start;		// kallsyms_names
	uint64_t limit;		// bytes that may belong to the table
	uint8_t *buf;
	uint64_t buf_pos;	// table offset of buf[0]
	size_t buf_len;
};

// Makes sure buf holds at least want bytes from table offset pos, refilling
// in large reads. Near the end of mapped memory a large read may fault; it
// is retried with halved sizes down to what is needed.
static struct kp_error *reader_need(struct reader *r, uint64_t pos, size_t want)
{
	if (pos >= r->buf_pos && pos + want <= r->buf_pos + r->buf_len)
		return NULL;
	if (pos + want > r->limit)
		return kp_error_create(KP_ERR_FORMAT, "past the end");
	size_t keep = 0;
	if (pos >= r->buf_pos && pos < r->buf_pos + r->buf_len) {
		keep = r->buf_pos + r->buf_len - pos;
		memmove(r->buf, r->buf + (pos - r->buf_pos), keep);
	}
	uint64_t from = pos + keep;
	size_t chunk = NAMES_WINDOW - keep;
	if (chunk > r->limit - from)
		chunk = r->limit - from;
	size_t min = want - keep;
	for (;;) {
		struct kp_error *err = kp_memory_read(r->mem, KP_VIRT, r->start + from,
						      r->buf + keep, chunk);
		if (!err)
			break;
		if (err->code != KP_ERR_FAULT || chunk <= min) {
			r->buf_len = 0;
			return err;
		}
		kp_error_destroy(err);
		chunk = chunk / 2 > min ? chunk / 2 : min;
	}
	r->buf_pos = pos;
	r->buf_len = keep + chunk;
	return NULL;
}

static struct kp_error *read_token_table(struct kp_memory *mem,
					 const struct kp_kallsyms_tables *t,
					 char **table_ret, uint16_t index[256])
{
	uint8_t raw[512];
	struct kp_error *err = kp_memory_read(mem, KP_VIRT, t->token_index, raw, sizeof(raw));
	if (err)
		return kp_error_prefix(err, "kallsyms_token_index at 0x%" PRIx64, t->token_index);
	size_t max = 0;
	for (int i = 0; i < 256; i++) {
		index[i] = raw[2 * i] | raw[2 * i + 1] << 8;
		if (index[i] > max)
			max = index[i];
	}
	// The table ends with the NUL of the token at the highest offset; read
	// up to it plus the longest token that can follow.
	size_t size = max + MAX_TOKEN_LEN + 1;
	char *table = malloc(size + 1);
	if (!table)
		return &kp_enomem;
	size_t got = max + 1;
	err = kp_memory_read(mem, KP_VIRT, t->token_table, table, got);
	while (!err && !memchr(table + max, '\0', got - max) && got < size) {
		size_t more = size - got < 256 ? size - got : 256;
		err = kp_memory_read(mem, KP_VIRT, t->token_table + got, table + got, more);
		got += more;
	}
	if (err) {
		free(table);
		return kp_error_prefix(err, "kallsyms_token_table at 0x%" PRIx64, t->token_table);
	}
	table[got] = '\0';
	for (int i = 0; i < 256; i++) {
		if (strnlen(table + index[i], MAX_TOKEN_LEN + 1) > MAX_TOKEN_LEN) {
			free(table);
			return kp_error_create(KP_ERR_FORMAT,
					       "kallsyms_token_table at 0x%" PRIx64 ": token %d (offset %u) is not NUL-terminated within %u bytes",
					       t->token_table, i, index[i], MAX_TOKEN_LEN);
		}
	}
	*table_ret = table;
	return NULL;
}

static struct kp_error *read_addresses(struct kp_memory *mem,
				       const struct kp_kallsyms_tables *t, uint32_t n,
				       uint64_t **ret)
{
	uint64_t *addrs = malloc((size_t)n * sizeof(*addrs) + 1);
	if (!addrs)
		return &kp_enomem;
	struct kp_error *err;
	if (kp_kallsyms_pc_relative(t)) {
		int32_t *offs = malloc((size_t)n * sizeof(*offs));
		if (!offs) {
			err = &kp_enomem;
			goto fail;
		}
		err = kp_memory_read(mem, KP_VIRT, t->offsets, offs, (size_t)n * 4);
		if (err) {
			free(offs);
			err = kp_error_prefix(err, "kallsyms_offsets at 0x%" PRIx64, t->offsets);
			goto fail;
		}
		for (uint32_t i = 0; i < n; i++)
			addrs[i] = t->offsets + 4ULL * i + (int64_t)offs[i];
		free(offs);
	} else if (t->offsets) {
		uint64_t base;
		err = kp_memory_read(mem, KP_VIRT, t->relative_base, &base, sizeof(base));
		if (err) {
			err = kp_error_prefix(err, "kallsyms_relative_base at 0x%" PRIx64,
					      t->relative_base);
			goto fail;
		}
		int32_t *offs = malloc((size_t)n * sizeof(*offs));
		if (!offs) {
			err = &kp_enomem;
			goto fail;
		}
		err = kp_memory_read(mem, KP_VIRT, t->offsets, offs, (size_t)n * 4);
		if (err) {
			free(offs);
			err = kp_error_prefix(err, "kallsyms_offsets at 0x%" PRIx64, t->offsets);
			goto fail;
		}
		bool percpu = false;
		for (uint32_t i = 0; i < n && !percpu; i++)
			percpu = offs[i] < 0;
		for (uint32_t i = 0; i < n; i++) {
			int32_t o = offs[i];
			if (!percpu)
				addrs[i] = base + (uint32_t)o;
			else if (o >= 0)
				addrs[i] = (uint64_t)o;
			else
				addrs[i] = base - 1 - (int64_t)o;
		}
		free(offs);
	} else if (t->addresses) {
		err = kp_memory_read(mem, KP_VIRT, t->addresses, addrs, (size_t)n * 8);
		if (err) {
			err = kp_error_prefix(err, "kallsyms_addresses at 0x%" PRIx64, t->addresses);
			goto fail;
		}
	} else {
		err = kp_error_create(KP_ERR_INVALID,
				      "neither kallsyms_offsets nor kallsyms_addresses is known");
		goto fail;
	}
	*ret = addrs;
	return NULL;
fail:
	free(addrs);
	return err;
}

struct kp_error *kp_kallsyms_read_memory(struct kp_memory *mem,
					 const struct kp_kallsyms_tables *t,
					 struct kp_symtab *st)
{
	uint32_t n;
	struct kp_error *err = kp_memory_read(mem, KP_VIRT, t->num_syms, &n, sizeof(n));
	if (err)
		return kp_error_prefix(err, "kallsyms_num_syms at 0x%" PRIx64, t->num_syms);
	if (n == 0 || n > MAX_SYMS)
		return kp_error_create(KP_ERR_FORMAT,
				       "kallsyms_num_syms at 0x%" PRIx64 " is %" PRIu32 " (expected 1..%u)",
				       t->num_syms, n, MAX_SYMS);

	char *table = NULL;
	uint64_t *addrs = NULL;
	uint8_t *window = NULL;
	char *text = NULL;
	size_t *starts = NULL;
	uint16_t index[256];
	uint16_t toklen[256];
	err = read_token_table(mem, t, &table, index);
	if (err)
		return err;
	for (int i = 0; i < 256; i++)
		toklen[i] = strlen(table + index[i]);
	err = read_addresses(mem, t, n, &addrs);
	if (err)
		goto out;
	window = malloc(NAMES_WINDOW);
	if (!window) {
		err = &kp_enomem;
		goto out;
	}
	// In every layout (5.10 to 7.2) the token table comes after the names
	// (and markers): names cannot extend into it.
	struct reader r = {
		.mem = mem, .start = t->names, .buf = window,
		.limit = t->token_table > t->names ? t->token_table - t->names :
			 (uint64_t)n * (MAX_RECORD + 1),
	};
	if (r.limit > (uint64_t)n * (MAX_RECORD + 1))
		r.limit = (uint64_t)n * (MAX_RECORD + 1);
	if (r.limit > UINT64_MAX - t->names)
		r.limit = UINT64_MAX - t->names;

	// Decoded "TNAME" strings, back to back; added to st only once every
	// record decoded, so corrupt tables leave st as it was.
	size_t text_cap = (size_t)n * 24, text_len = 0;
	text = malloc(text_cap);
	starts = malloc(((size_t)n + 1) * sizeof(*starts));
	if (!text || !starts) {
		err = &kp_enomem;
		goto out;
	}
	char name[MAX_NAME + 2];
	uint64_t pos = 0;
	uint32_t i;
	for (i = 0; i < n; i++) {
		uint64_t rec = pos;
		err = reader_need(&r, pos, 1);
		if (err)
			goto truncated;
		size_t len = r.buf[pos - r.buf_pos];
		size_t hdr = 1;
		if (len & 0x80) {
			err = reader_need(&r, pos, 2);
			if (err)
				goto truncated;
			uint8_t b1 = r.buf[pos + 1 - r.buf_pos];
			if (b1 & 0x80) {
				err = kp_error_create(KP_ERR_FORMAT,
						      "kallsyms_names: symbol %" PRIu32 " at 0x%" PRIx64 " has a length of more than two bytes",
						      i, t->names + rec);
				goto out;
			}
			len = (len & 0x7f) | (size_t)b1 << 7;
			hdr = 2;
		}
		if (len == 0) {
			err = kp_error_create(KP_ERR_FORMAT,
					      "kallsyms_names: symbol %" PRIu32 " at 0x%" PRIx64 " has length 0",
					      i, t->names + rec);
			goto out;
		}
		err = reader_need(&r, pos, hdr + len);
		if (err)
			goto truncated;
		const uint8_t *tok = r.buf + (pos + hdr - r.buf_pos);
		pos += hdr + len;

		size_t out = 0;
		for (size_t k = 0; k < len; k++) {
			size_t tl = toklen[tok[k]];
			if (out + tl > sizeof(name) - 1) {
				err = kp_error_create(KP_ERR_FORMAT,
						      "kallsyms_names: symbol %" PRIu32 " at 0x%" PRIx64 " expands to more than %u characters",
						      i, t->names + rec, MAX_NAME);
				goto out;
			}
			memcpy(name + out, table + index[tok[k]], tl);
			out += tl;
		}
		if (out < 2) {
			err = kp_error_create(KP_ERR_FORMAT,
					      "kallsyms_names: symbol %" PRIu32 " at 0x%" PRIx64 " expands to %zu characters (type and name expected)",
					      i, t->names + rec, out);
			goto out;
		}
		for (size_t k = 0; k < out; k++) {
			unsigned char c = name[k];
			if (c <= 0x20 || c >= 0x7f) {
				err = kp_error_create(KP_ERR_FORMAT,
						      "kallsyms_names: symbol %" PRIu32 " at 0x%" PRIx64 " has byte 0x%02x in its name (wrong token table?)",
						      i, t->names + rec, c);
				goto out;
			}
		}
		if (!KP_VEC_RESERVE(text, text_cap, text_len + out)) {
			err = &kp_enomem;
			goto out;
		}
		starts[i] = text_len;
		memcpy(text + text_len, name, out);
		text_len += out;
	}
	starts[n] = text_len;
	err = kp_symtab_reserve(st, n);
	for (i = 0; !err && i < n; i++)
		err = kp_symtab_add(st, text + starts[i] + 1, starts[i + 1] - starts[i] - 1,
				    addrs[i], text[starts[i]], NULL);
	goto out;
truncated:
	if (err->code == KP_ERR_FAULT || err->code == KP_ERR_FORMAT) {
		struct kp_error *why = err;
		err = kp_error_create(KP_ERR_FORMAT,
				      "kallsyms_names at 0x%" PRIx64 " truncated at symbol %" PRIu32 " of %" PRIu32 " (offset %" PRIu64 "): %s",
				      t->names, i, n, pos, why->message);
		kp_error_destroy(why);
	}
out:
	free(text);
	free(starts);
	free(window);
	free(addrs);
	free(table);
	return err;
}

// ---------------------------------------------------------------- helpers

bool kp_kallsyms_tables_from_vmcoreinfo(const struct kp_vmcoreinfo *vi,
					struct kp_kallsyms_tables *t)
{
	memset(t, 0, sizeof(*t));
	if (!vi || !kp_vmcoreinfo_symbol(vi, "kallsyms_names", &t->names) ||
	    !kp_vmcoreinfo_symbol(vi, "kallsyms_num_syms", &t->num_syms) ||
	    !kp_vmcoreinfo_symbol(vi, "kallsyms_token_table", &t->token_table) ||
	    !kp_vmcoreinfo_symbol(vi, "kallsyms_token_index", &t->token_index))
		return false;
	// Without kallsyms_relative_base the offsets are PC-relative (7.x).
	if (kp_vmcoreinfo_symbol(vi, "kallsyms_offsets", &t->offsets)) {
		if (!kp_vmcoreinfo_symbol(vi, "kallsyms_relative_base", &t->relative_base))
			t->relative_base = 0;
		return true;
	}
	t->offsets = 0;
	return kp_vmcoreinfo_symbol(vi, "kallsyms_addresses", &t->addresses);
}

struct kp_error *kp_symtab_from_file(const char *path, uint64_t bias, struct kp_symtab **ret)
{
	char *text;
	size_t len;
	struct kp_error *err = kp_read_whole_file(path, &text, &len);
	if (err)
		return err;
	struct kp_symtab *st;
	err = kp_symtab_create(&st);
	if (!err) {
		err = kp_kallsyms_parse_text(text, len, bias, path, st);
		if (!err)
			err = kp_symtab_finalize(st);
		if (err)
			kp_symtab_destroy(st);
	}
	free(text);
	if (!err)
		*ret = st;
	return err;
}

struct kp_error *kp_symtab_from_tables(struct kp_memory *mem, const struct kp_kallsyms_tables *t,
				       struct kp_symtab **ret)
{
	struct kp_symtab *st;
	struct kp_error *err = kp_symtab_create(&st);
	if (err)
		return err;
	err = kp_kallsyms_read_memory(mem, t, st);
	if (!err)
		err = kp_symtab_finalize(st);
	if (err) {
		kp_symtab_destroy(st);
		return err;
	}
	*ret = st;
	return NULL;
}
