// SPDX-License-Identifier: MIT
// mkcore SPEC OUT: writes a synthetic x86-64 ELF core (tests/gen/mkcore.h)
// from a text spec ("-" = stdin), for shell tests.
//
// One directive per line; '#' starts a comment; numbers are C literals with
// an optional K/M/G suffix (binary units):
//   load VADDR PADDR FILESZ [MEMSZ] [zero | fill BYTE | words | file PATH [OFF]]
//        zero (default): a hole in the file; fill: every byte BYTE;
//        words: each aligned u64 holds its own physical address (PADDR + i);
//        file: FILESZ bytes of PATH from offset OFF
//   vmcoreinfo TEXT        TEXT with \n escapes, e.g. OSRELEASE=6.1\nPAGESIZE=4096\n
//   vmcoreinfo-file PATH
//   prstatus PID RIP RSP [CS [GS_BASE]]
//   qemu KEY=VALUE...      keys: rip rsp cr0 cr3 cr4 idt idtlimit gdt gdtlimit
//                          gs kgs cs; the word "old" omits kernel_gs_base
//   note NAME TYPE HEX     raw note, desc as hex digits
//   xnum                   PN_XNUM extended program-header numbering
//   type E_TYPE E_MACHINE  header fields (default 4 = ET_CORE, 62 = EM_X86_64)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gen/mkcore.h"

static const char *spec_name;
static int lineno;

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "mkcore: %s:%d: %s%s%s\n", spec_name, lineno, msg,
		arg ? ": " : "", arg ? arg : "");
	exit(1);
}

static uint64_t num(const char *s)
{
	if (!s)
		die("missing number", NULL);
	char *end;
	errno = 0;
	uint64_t v = strtoull(s, &end, 0);
	if (errno || end == s)
		die("bad number", s);
	int shift = 0;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	}
	if (*end)
		die("bad number", s);
	return v << shift;
}

static uint8_t *read_file(const char *path, uint64_t off, uint64_t len)
{
	FILE *f = fopen(path, "rb");
	if (!f || fseeko(f, (off_t)off, SEEK_SET) != 0)
		die("cannot open", path);
	uint8_t *buf = calloc(1, len ? len : 1);
	if (!buf || fread(buf, 1, len, f) != len)
		die("short file", path);
	fclose(f);
	return buf;
}

static void do_load(struct mkcore *mc, char **tok, int n)
{
	if (n < 4)
		die("load needs VADDR PADDR FILESZ", NULL);
	uint64_t vaddr = num(tok[1]), paddr = num(tok[2]), filesz = num(tok[3]);
	int i = 4;
	uint64_t memsz = filesz;
	if (i < n && (tok[i][0] >= '0' && tok[i][0] <= '9'))
		memsz = num(tok[i++]);
	uint8_t *data = NULL;
	const char *how = i < n ? tok[i++] : "zero";
	if (strcmp(how, "fill") == 0) {
		uint64_t byte = num(i < n ? tok[i] : NULL);
		data = malloc(filesz ? filesz : 1);
		if (!data)
			die("out of memory", NULL);
		memset(data, (int)byte, filesz);
	} else if (strcmp(how, "words") == 0) {
		data = calloc(1, filesz ? filesz : 1);
		if (!data)
			die("out of memory", NULL);
		for (uint64_t o = 0; o + 8 <= filesz; o += 8) {
			uint64_t v = paddr + o;
			memcpy(data + o, &v, 8);
		}
	} else if (strcmp(how, "file") == 0) {
		if (i >= n)
			die("load ... file needs PATH", NULL);
		data = read_file(tok[i], i + 1 < n ? num(tok[i + 1]) : 0, filesz);
	} else if (strcmp(how, "zero") != 0) {
		die("unknown load contents", how);
	}
	mkcore_add_load(mc, vaddr, paddr, data, filesz, memsz);
	free(data);
}

static char *unescape(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;
	if (!out)
		die("out of memory", NULL);
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == 'n') {
			*o++ = '\n';
			s++;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

static void do_qemu(struct mkcore *mc, char **tok, int n)
{
	struct mkcore_qemu_cpu c = {0};
	for (int i = 1; i < n; i++) {
		if (strcmp(tok[i], "old") == 0) {
			c.old_layout = true;
			continue;
		}
		char *eq = strchr(tok[i], '=');
		if (!eq)
			die("qemu wants KEY=VALUE", tok[i]);
		*eq = '\0';
		uint64_t v = num(eq + 1);
		const char *k = tok[i];
		if (!strcmp(k, "rip")) c.rip = v;
		else if (!strcmp(k, "rsp")) c.rsp = v;
		else if (!strcmp(k, "cr0")) c.cr0 = v;
		else if (!strcmp(k, "cr3")) c.cr3 = v;
		else if (!strcmp(k, "cr4")) c.cr4 = v;
		else if (!strcmp(k, "idt")) c.idt_base = v;
		else if (!strcmp(k, "idtlimit")) c.idt_limit = (uint32_t)v;
		else if (!strcmp(k, "gdt")) c.gdt_base = v;
		else if (!strcmp(k, "gdtlimit")) c.gdt_limit = (uint32_t)v;
		else if (!strcmp(k, "gs")) c.gs_base = v;
		else if (!strcmp(k, "kgs")) c.kernel_gs_base = v;
		else if (!strcmp(k, "cs")) c.cs_selector = (uint32_t)v;
		else die("unknown qemu key", k);
	}
	mkcore_add_qemu_cpu(mc, &c);
}

static void do_note(struct mkcore *mc, char **tok, int n)
{
	if (n < 3)
		die("note needs NAME TYPE [HEX]", NULL);
	const char *hex = n > 3 ? tok[3] : "";
	size_t len = strlen(hex) / 2;
	uint8_t *desc = malloc(len + 1);
	if (!desc)
		die("out of memory", NULL);
	for (size_t i = 0; i < len; i++) {
		unsigned b;
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			die("bad hex", hex);
		desc[i] = (uint8_t)b;
	}
	mkcore_add_note(mc, tok[1], (uint32_t)num(tok[2]), desc, len);
	free(desc);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: mkcore SPEC OUT   (SPEC - = stdin)\n");
		return 2;
	}
	spec_name = argv[1];
	FILE *in = strcmp(argv[1], "-") == 0 ? stdin : fopen(argv[1], "r");
	if (!in) {
		fprintf(stderr, "mkcore: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	struct mkcore *mc = mkcore_create();
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, in) >= 0) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *tok[32];
		int n = 0;
		for (char *t = strtok(line, " \t\r\n"); t && n < 32; t = strtok(NULL, " \t\r\n"))
			tok[n++] = t;
		if (n == 0)
			continue;
		if (!strcmp(tok[0], "load")) {
			do_load(mc, tok, n);
		} else if (!strcmp(tok[0], "vmcoreinfo")) {
			if (n < 2)
				die("vmcoreinfo needs TEXT", NULL);
			char *text = unescape(tok[1]);
			mkcore_add_vmcoreinfo(mc, text);
			free(text);
		} else if (!strcmp(tok[0], "vmcoreinfo-file")) {
			if (n < 2)
				die("vmcoreinfo-file needs PATH", NULL);
			FILE *f = fopen(tok[1], "rb");
			if (!f)
				die("cannot open", tok[1]);
			char *text = NULL;
			size_t tcap = 0;
			ssize_t tl = getdelim(&text, &tcap, '\0', f);
			fclose(f);
			mkcore_add_vmcoreinfo(mc, tl > 0 ? text : "");
			free(text);
		} else if (!strcmp(tok[0], "prstatus")) {
			if (n < 4)
				die("prstatus needs PID RIP RSP", NULL);
			mkcore_add_prstatus(mc, (uint32_t)num(tok[1]), num(tok[2]), num(tok[3]),
					    n > 4 ? num(tok[4]) : 0x10, n > 5 ? num(tok[5]) : 0);
		} else if (!strcmp(tok[0], "qemu")) {
			do_qemu(mc, tok, n);
		} else if (!strcmp(tok[0], "note")) {
			do_note(mc, tok, n);
		} else if (!strcmp(tok[0], "xnum")) {
			mkcore_set_xnum(mc, true);
		} else if (!strcmp(tok[0], "type")) {
			if (n < 3)
				die("type needs E_TYPE E_MACHINE", NULL);
			mkcore_set_type(mc, (uint16_t)num(tok[1]), (uint16_t)num(tok[2]));
		} else {
			die("unknown directive", tok[0]);
		}
	}
	free(line);
	if (in != stdin)
		fclose(in);
	if (mkcore_write(mc, argv[2]) < 0) {
		fprintf(stderr, "mkcore: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	mkcore_destroy(mc);
	return 0;
}
