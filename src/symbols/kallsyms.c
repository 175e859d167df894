// SPDX-License-Identifier: MIT
// Symbol sources in kallsyms form: /proc/kallsyms and System.map text, and the
// kernel's compressed in-memory tables.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "io/file.h"
#include "symbols/kallsyms.h"
#include "util/error.h"

#define MAX_NAME KP_KALLSYMS_MAX_NAME
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
				  const char *what, bool sorted, struct kp_symtab *st,
				  size_t *lines_ret, bool *nonzero_ret)
{
	const char *p = text, *end = text + len;
	size_t lineno = 0, lines = 0;
	uint64_t prev = 0;
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
		if (sorted && tl.address < prev)
			return kp_error_create(KP_ERR_FORMAT, "%s line %zu: address %016" PRIx64
					       " is below the previous line's %016" PRIx64 ": a "
					       "System.map is sorted by address (nm -n)", what,
					       lineno, tl.address, prev);
		prev = tl.address;
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
					const char *what, bool sorted, struct kp_symtab *st)
{
	// Neither /proc/kallsyms nor a System.map holds a NUL: one means the
	// file is not what it claims (or was damaged), and reading on past it,
	// or stopping there, would both give a wrong symbol table.
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		size_t lineno = 1;
		for (const char *q = text; q < nul; q++)
			lineno += *q == '\n';
		return kp_error_create(KP_ERR_FORMAT, "%s line %zu: a NUL byte (file offset "
				       "0x%zx): not kallsyms or System.map text", what, lineno,
				       (size_t)(nul - text));
	}
	size_t lines;
	bool nonzero;
	struct kp_error *err = text_pass(text, len, bias, what, sorted, NULL, &lines, &nonzero);
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
	return text_pass(text, len, bias, what, sorted, st, &lines, &nonzero);
}

bool kp_kallsyms_text_find(const char *text, size_t len, uint64_t bias, const char *name,
			   uint64_t *ret)
{
	size_t n = strlen(name);
	const char *end = text + len;
	for (const char *p = text; p < end;) {
		const char *eol = memchr(p, '\n', end - p);
		const char *lend = eol ? eol : end;
		struct text_line tl;
		if (lend - p > (ptrdiff_t)n && !memcmp(lend - n - (lend[-1] == '\r'), name, n) &&
		    !parse_line(p, lend - (lend[-1] == '\r'), &tl) && tl.name_len == n &&
		    !tl.module) {
			// The same rule as the parse: absolute values stay put.
			*ret = tl.address + (tl.address >= MIN_RELOCATED_ADDRESS ? bias : 0);
			return true;
		}
		p = eol ? eol + 1 : end;
	}
	return false;
}

// ---------------------------------------------------------------- helpers

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
		err = kp_kallsyms_parse_text(text, len, bias, path, false, st);
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
