// SPDX-License-Identifier: MIT
// kallsyms sources: /proc/kallsyms and System.map text (modules, bias, the
// Debian stub, kptr_restrict, malformed lines) and the kernel's compressed
// in-memory tables (round trip through tests/gen/mkkallsyms, corrupt tables).
#include <time.h>

#include "test.h"
#include "symbols/kallsyms.h"
#include "../gen/mkkallsyms.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static struct kp_symtab *new_symtab(void)
{
	struct kp_symtab *st = NULL;
	CHECK_OK(kp_symtab_create(&st));
	return st;
}

// ---------------------------------------------------------------- text

static const char proc_kallsyms[] =
	"0000000000000000 A fixed_percpu_data\n"
	"000000000002f000 A runqueues\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81001000 t run_init_process\n"
	"ffffffff82a0c4a0 D avenrun\n"
	"ffffffffc0201000 t ext4_fill_super\t[ext4]\n"
	"ffffffffc0202000 T ext4_mount\t[ext4]\n"
	"ffffffffc0301000 t __this_module\t[nf_tables]\n";

TEST(proc_kallsyms_with_modules)
{
	struct kp_symtab *st = new_symtab();
	CHECK_OK(kp_kallsyms_parse_text(proc_kallsyms, sizeof(proc_kallsyms) - 1, 0,
					"/proc/kallsyms", false, st));
	CHECK_U64(kp_symtab_count(st), 9);
	struct kp_symbol sym;
	CHECK_OK(kp_symtab_by_name(st, "ext4_mount", &sym));
	CHECK_U64(sym.address, 0xffffffffc0202000);
	CHECK_STR(sym.module, "ext4");
	CHECK(sym.type == 'T');
	CHECK_OK(kp_symtab_by_name(st, "__this_module", &sym));
	CHECK_STR(sym.module, "nf_tables");
	CHECK_OK(kp_symtab_by_name(st, "avenrun", &sym));
	CHECK_U64(sym.address, 0xffffffff82a0c4a0);
	CHECK(sym.module == NULL && sym.type == 'D');
	CHECK_OK(kp_symtab_by_name(st, "runqueues", &sym));
	CHECK_U64(sym.address, 0x2f000);
	CHECK_OK(kp_symtab_by_address(st, 0xffffffff81000123, &sym));
	CHECK_STR(sym.name, "_text");
	CHECK_U64(sym.size, 0x1000);
	CHECK_OK(kp_symtab_by_address(st, 0xffffffffc0201010, &sym));
	CHECK_STR(sym.name, "ext4_fill_super");
	kp_symtab_destroy(st);
}

TEST(system_map_with_bias)
{
	const char map[] =
		"0000000000000000 D __per_cpu_start\n"
		"ffffffff81000000 T _text\r\n"
		"ffffffff81000040 T secondary_startup_64\n"
		"ffffffff81000100 T x86_64_start_kernel\n"
		"\n"
		"ffffffff82a0c4a0   D   avenrun\n"
		"ffffffff83200000 B _end";	// no final newline
	struct kp_symtab *st = new_symtab();
	const uint64_t kaslr = 0x17a00000;
	CHECK_OK(kp_kallsyms_parse_text(map, sizeof(map) - 1, kaslr, "System.map", true, st));
	struct kp_symbol sym;
	CHECK_OK(kp_symtab_by_name(st, "_text", &sym));
	CHECK_U64(sym.address, 0xffffffff81000000 + kaslr);
	CHECK_OK(kp_symtab_by_name(st, "avenrun", &sym));
	CHECK_U64(sym.address, 0xffffffff82a0c4a0 + kaslr);
	CHECK_OK(kp_symtab_by_name(st, "_end", &sym));
	CHECK_U64(sym.address, 0xffffffff83200000 + kaslr);
	// Per-CPU offsets are not relocated.
	CHECK_OK(kp_symtab_by_name(st, "__per_cpu_start", &sym));
	CHECK_U64(sym.address, 0);
	CHECK_OK(kp_symtab_by_address(st, 0xffffffff81000044 + kaslr, &sym));
	CHECK_STR(sym.name, "secondary_startup_64");
	CHECK_U64(sym.size, 0xc0);
	kp_symtab_destroy(st);
}

TEST(debian_stub_and_hidden_addresses)
{
	// Debian's /boot/System.map-6.1.0-*-amd64, verbatim.
	const char stub[] =
		"ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n";
	struct kp_symtab *st = new_symtab();
	CHECK_ERR(kp_kallsyms_parse_text(stub, sizeof(stub) - 1, 0,
					 "/boot/System.map-6.1.0-57-amd64", true, st),
		  KP_ERR_UNSUPPORTED, "/boot/System.map-6.1.0-57-amd64 is Debian's placeholder");
	struct kp_error *err = kp_kallsyms_parse_text(stub, sizeof(stub) - 1, 0, "map", false, st);
	CHECK(err && strstr(err->message, "-dbg") && strstr(err->message, "/usr/lib/debug/boot/System.map"));
	kp_error_destroy(err);

	// kernel.kptr_restrict: every address printed as zero.
	const char hidden[] =
		"0000000000000000 A fixed_percpu_data\n"
		"0000000000000000 T _text\n"
		"0000000000000000 T startup_64\n"
		"0000000000000000 t ext4_fill_super\t[ext4]\n";
	CHECK_ERR(kp_kallsyms_parse_text(hidden, sizeof(hidden) - 1, 0, "/proc/kallsyms", false, st),
		  KP_ERR_PERMISSION, "addresses are hidden (kernel.kptr_restrict): run as root with CAP_SYSLOG or set kernel.kptr_restrict=0");
	CHECK_ERR(kp_kallsyms_parse_text("", 0, 0, "empty.map", false, st), KP_ERR_FORMAT,
		  "empty.map has no symbols");
	CHECK_U64(kp_symtab_count(st), 0);	// failures add nothing
	kp_symtab_destroy(st);
}

TEST(malformed_lines_name_file_and_line)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
		{ "ffffffff81000000 T _text\nxyz T foo\n", "kallsyms line 2: expected a hex address" },
		{ "ffffffff81000000 T _text\n\nffffffff81000010\n", "kallsyms line 3: expected a space" },
		{ "ffffffff81000000 T\n", "line 1: expected a space after the type" },
		{ "ffffffff81000000 TT foo\n", "line 1: expected a space after the type" },
		{ "ffffffff81000000 1 foo\n", "line 1: expected a type letter" },
		{ "ffffffff81000000 T foo bar\n", "line 1: unexpected text after the symbol name" },
		{ "ffffffff81000000 T foo\t[ext4\n", "line 1: malformed [module]" },
		{ "ffffffff81000000 T foo\t[]\n", "line 1: malformed [module]" },
		{ "ffffffff81000000 T foo\t[ext4] x\n", "line 1: unexpected text after the module" },
		{ "1ffffffff81000000 T foo\n", "line 1: address longer than 16 hex digits" },
	};
	struct kp_symtab *st = new_symtab();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_ERR(kp_kallsyms_parse_text(cases[i].text, strlen(cases[i].text), 0,
						 "kallsyms", false, st),
			  KP_ERR_FORMAT, cases[i].want);
	char longname[2100] = "ffffffff81000000 T ";
	memset(longname + strlen(longname), 'a', 2000);
	CHECK_ERR(kp_kallsyms_parse_text(longname, strlen(longname), 0, "k", false, st), KP_ERR_FORMAT,
		  "symbol name too long");
	CHECK_U64(kp_symtab_count(st), 0);
	// A NUL is an error naming its line, wherever it is.
	const char nul[] = "ffffffff81000000 T _text\nffffffff81000010 T b\0c\nffffffff81000020 T d\n";
	CHECK_ERR(kp_kallsyms_parse_text(nul, sizeof(nul) - 1, 0, "k", false, st), KP_ERR_FORMAT,
		  "k line 2: a NUL byte (file offset 0x2d): not kallsyms or System.map text");
	CHECK_U64(kp_symtab_count(st), 0);
	// A System.map out of address order is an error; kallsyms text may be.
	const char unsorted[] = "ffffffff81000010 T b\nffffffff81000000 T _text\n";
	CHECK_ERR(kp_kallsyms_parse_text(unsorted, sizeof(unsorted) - 1, 0, "map", true, st),
		  KP_ERR_FORMAT, "map line 2: address ffffffff81000000 is below the previous "
		  "line's ffffffff81000010: a System.map is sorted by address (nm -n)");
	CHECK_OK(kp_kallsyms_parse_text(unsorted, sizeof(unsorted) - 1, 0, "k", false, st));
	CHECK_U64(kp_symtab_count(st), 2);
	// Names are bytes up to a separator, as /proc/kallsyms prints them:
	// gcc 16's local labels in modules (Debian 7.2 arm64) hold a \x02.
	const char odd[] = "ffffffffc0001000 r .L14472\x02" "1\t[virtio_blk]\n"
			   "ffffffffc0001010 t f\xc3\xa9\t[ext4]\n";
	CHECK_OK(kp_kallsyms_parse_text(odd, sizeof(odd) - 1, 0, "k", false, st));
	struct kp_symbol sym;
	CHECK_OK(kp_symtab_by_name(st, ".L14472\x02" "1", &sym));
	CHECK_U64(sym.address, 0xffffffffc0001000);
	CHECK_STR(sym.module, "virtio_blk");
	CHECK_OK(kp_symtab_by_name(st, "f\xc3\xa9", &sym));
	kp_symtab_destroy(st);
}

// ---------------------------------------------------------------- memory

#define TABLES_BASE 0xffffffff82600000ULL

struct gen {
	struct kp_mkkallsyms_sym *syms;
	char (*names)[520];
	size_t n;
};

// n symbols: kernel-like names, a per-CPU block, aliases, some long names
// (> 127 tokens even after compression), addresses ascending.
static bool gen_symbols(struct gen *g, size_t n, unsigned seed)
{
	static const char *const parts[] = {
		"vfs", "ext4", "tcp", "sched", "mm", "page", "read", "write", "init",
		"alloc", "free", "lock", "irq", "cpu", "dev", "net", "sock", "file",
	};
	const size_t np = sizeof(parts) / sizeof(parts[0]);
	g->n = n;
	g->syms = calloc(n, sizeof(*g->syms));
	g->names = calloc(n, sizeof(*g->names));
	if (!g->syms || !g->names)
		return false;
	uint64_t addr = 0xffffffff81000000;
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245 + 12345;
		char *name = g->names[i];
		if (i < 20) {
			// Per-CPU variables: absolute values in the offsets table.
			snprintf(name, 520, "percpu_var_%zu", i);
			g->syms[i].address = 0x1000 * i;
			g->syms[i].type = i ? 'D' : 'A';
		} else {
			if (i % 97 == 0) {
				// Long random name: no pair repeats enough to
				// compress it below 128 tokens.
				size_t len = 200 + seed % 300;
				for (size_t k = 0; k < len; k++) {
					seed = seed * 1103515245 + 12345;
					name[k] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"[(seed >> 16) % 63];
				}
				name[len] = '\0';
			} else if (i % 173 == 0) {
				// A mapping symbol, as 5.10's kallsyms has
				// (".LC4"): no address lookup gives it.
				snprintf(name, 520, ".LC%zu", i);
			} else {
				snprintf(name, 520, "%s_%s_%s%zu", parts[(seed >> 8) % np],
					 parts[(seed >> 13) % np], parts[(seed >> 18) % np], i);
			}
			if (i % 50 != 0)	// every 50th is an alias of the previous
				addr += 16 + (seed >> 20) % 4096;
			g->syms[i].address = addr;
			g->syms[i].type = "TtDdBbRr"[(seed >> 24) % 8];
		}
		g->syms[i].name = name;
	}
	return true;
}

static void gen_free(struct gen *g)
{
	free(g->syms);
	free(g->names);
}

static struct kp_memory *memory_over(struct kp_mkkallsyms *k, size_t size)
{
	struct kp_memory *mem = NULL;
	CHECK_OK(kp_memory_create(&mem));
	if (mem)
		CHECK_OK(kp_memory_add(mem, KP_VIRT, k->base, size, kp_read_buffer, k->buf, 0));
	return mem;
}

static void check_round_trip(const struct gen *g, unsigned flags)
{
	struct kp_mkkallsyms k;
	CHECK_OK(kp_mkkallsyms_build(g->syms, g->n, TABLES_BASE, flags, &k));
	CHECK(k.ntokens > 10);
	CHECK(k.long_records > 0);
	struct kp_memory *mem = memory_over(&k, k.size);
	struct kp_symtab *st = new_symtab();
	CHECK_OK(kp_kallsyms_read_memory(mem, &k.tables, st));
	CHECK_U64(kp_symtab_count(st), g->n);
	size_t bad = 0;
	for (size_t i = 0; i < g->n && bad < 5; i++) {
		struct kp_symbol sym;
		struct kp_error *err = kp_symtab_by_name(st, g->syms[i].name, &sym);
		if (err) {
			FAILF("symbol %zu '%.40s': %s", i, g->syms[i].name, err->message);
			kp_error_destroy(err);
			bad++;
			continue;
		}
		if (sym.address != g->syms[i].address || sym.type != g->syms[i].type) {
			FAILF("symbol %zu '%.40s': got 0x%" PRIx64 " %c, want 0x%" PRIx64 " %c",
			      i, sym.name, sym.address, sym.type, g->syms[i].address,
			      g->syms[i].type);
			bad++;
		}
	}
	kp_symtab_destroy(st);
	kp_memory_destroy(mem);
	kp_mkkallsyms_deinit(&k);
}

TEST(memory_round_trip)
{
	struct gen g;
	if (!gen_symbols(&g, 3000, 7))
		return;
	check_round_trip(&g, 0);			// x86-64 SMP: absolute per-CPU
	check_round_trip(&g, KP_MKKALLSYMS_SEQS);	// 6.1 stable layout
	check_round_trip(&g, KP_MKKALLSYMS_TABLES_LAST);	// 6.12 layout
	gen_free(&g);
	// 7.2: PC-relative offsets reach +-2 GiB around the table, no per-CPU
	// absolute values.
	if (!gen_symbols(&g, 3000, 9))
		return;
	for (size_t i = 0; i < 20; i++)
		g.syms[i].address += 0xffffffff80000000;
	check_round_trip(&g, KP_MKKALLSYMS_PC_RELATIVE);
	gen_free(&g);
	// Without per-CPU symbols the other two encodings can hold everything.
	if (!gen_symbols(&g, 3000, 8))
		return;
	for (size_t i = 0; i < 20; i++)
		g.syms[i].address += 0xffffffff80000000;
	check_round_trip(&g, KP_MKKALLSYMS_NO_PERCPU);	// unsigned offsets
	check_round_trip(&g, KP_MKKALLSYMS_ABSOLUTE);	// kallsyms_addresses
	gen_free(&g);
}

TEST(memory_record_formats)
{
	// A 6.1 two-byte length exactly at the boundary: 127 and 128 tokens.
	char n127[128], n128[129], n300[301];
	for (int i = 0; i < 126; i++)
		n127[i] = "qwertyuiopasdfghjklzxcvbnm"[i * 7 % 26];
	n127[126] = '\0';	// + type = 127 tokens uncompressed
	memcpy(n128, n127, 126);
	n128[126] = 'Q';
	n128[127] = '\0';
	memset(n300, 'Z', 300);
	n300[300] = '\0';
	const struct kp_mkkallsyms_sym syms[] = {
		{ n127, 't', 0xffffffff81000000 },
		{ n128, 't', 0xffffffff81000100 },
		{ n300, 'T', 0xffffffff81000200 },
		{ "x", 'T', 0xffffffff81000300 },
	};
	struct kp_mkkallsyms k;
	// No compression: records have exactly 127, 128 and 301 tokens.
	CHECK_OK(kp_mkkallsyms_build(syms, 4, TABLES_BASE, KP_MKKALLSYMS_NO_COMPRESSION, &k));
	CHECK_U64(k.long_records, 2);
	CHECK_U64(k.ntokens, 0);
	const uint8_t *names = k.buf + kp_mkkallsyms_off(&k, k.tables.names);
	CHECK_U64(names[0], 0x7f);
	CHECK_U64(names[1 + 127], 0x80);
	CHECK_U64(names[1 + 127 + 1], 0x01);
	struct kp_memory *mem = memory_over(&k, k.size);
	struct kp_symtab *st = new_symtab();
	CHECK_OK(kp_kallsyms_read_memory(mem, &k.tables, st));
	struct kp_symbol sym;
	for (int i = 0; i < 4; i++) {
		CHECK_OK(kp_symtab_by_name(st, syms[i].name, &sym));
		CHECK_U64(sym.address, syms[i].address);
	}
	CHECK_OK(kp_symtab_by_address(st, 0xffffffff81000210, &sym));
	CHECK_STR(sym.name, n300);
	kp_symtab_destroy(st);
	kp_memory_destroy(mem);
	kp_mkkallsyms_deinit(&k);
}

struct corrupt_case {
	const char *what;
	enum kp_error_code code;
	const char *want;
};

// Builds fresh tables, lets mutate() damage them, and checks the error.
static void expect_corrupt(const struct gen *g, void (*mutate)(struct kp_mkkallsyms *k,
							      size_t *mapped),
			   enum kp_error_code code, const char *want)
{
	struct kp_mkkallsyms k;
	CHECK_OK(kp_mkkallsyms_build(g->syms, g->n, TABLES_BASE, 0, &k));
	size_t mapped = k.size;
	mutate(&k, &mapped);
	struct kp_memory *mem = memory_over(&k, mapped);
	struct kp_symtab *st = new_symtab();
	CHECK_ERR(kp_kallsyms_read_memory(mem, &k.tables, st), code, want);
	CHECK_U64(kp_symtab_count(st), 0);	// nothing half-loaded
	kp_symtab_destroy(st);
	// The name index refuses them alike.
	st = new_symtab();
	CHECK_ERR(kp_kallsyms_attach(mem, &k.tables, st), code, want);
	CHECK(kp_symtab_empty(st));
	kp_symtab_destroy(st);
	kp_memory_destroy(mem);
	kp_mkkallsyms_deinit(&k);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void absurd_num_syms(struct kp_mkkallsyms *k, size_t *mapped)
{
	put32(k->buf + kp_mkkallsyms_off(k, k->tables.num_syms), 40000000);
}

static void zero_num_syms(struct kp_mkkallsyms *k, size_t *mapped)
{
	put32(k->buf + kp_mkkallsyms_off(k, k->tables.num_syms), 0);
}

static void more_syms_than_names(struct kp_mkkallsyms *k, size_t *mapped)
{
	uint32_t n;
	memcpy(&n, k->buf + kp_mkkallsyms_off(k, k->tables.num_syms), 4);
	put32(k->buf + kp_mkkallsyms_off(k, k->tables.num_syms), n + 100);
}

static void zero_length_record(struct kp_mkkallsyms *k, size_t *mapped)
{
	k->buf[kp_mkkallsyms_off(k, k->tables.names)] = 0;
}

static void three_byte_length(struct kp_mkkallsyms *k, size_t *mapped)
{
	uint8_t *p = k->buf + kp_mkkallsyms_off(k, k->tables.names);
	p[0] = 0x85;
	p[1] = 0x81;
}

static void token_index_out_of_table(struct kp_mkkallsyms *k, size_t *mapped)
{
	// A token offset past every NUL that the mapping holds.
	uint8_t *idx = k->buf + kp_mkkallsyms_off(k, k->tables.token_index);
	size_t past = k->size - kp_mkkallsyms_off(k, k->tables.token_table) + 64;
	idx[2 * 'a'] = past & 0xff;
	idx[2 * 'a' + 1] = past >> 8;
}

static void unterminated_token(struct kp_mkkallsyms *k, size_t *mapped)
{
	// The token table moved onto the names area, overwritten with 'x's:
	// tokens point into tens of KiB without a NUL.
	uint8_t *idx = k->buf + kp_mkkallsyms_off(k, k->tables.token_index);
	size_t tt = kp_mkkallsyms_off(k, k->tables.token_table);
	size_t names = kp_mkkallsyms_off(k, k->tables.names);
	// Reuse the names area as a bogus token table of 'x's.
	memset(k->buf + names, 'x', tt - names);
	k->tables.token_table = k->tables.names;
	idx[2 * 'a'] = 0;
	idx[2 * 'a' + 1] = 0;
}

static void binary_token(struct kp_mkkallsyms *k, size_t *mapped)
{
	size_t tt = kp_mkkallsyms_off(k, k->tables.token_table);
	uint8_t *idx = k->buf + kp_mkkallsyms_off(k, k->tables.token_index);
	// Every token's first character becomes a control byte.
	for (int c = 0; c < 256; c++) {
		size_t off = idx[2 * c] | idx[2 * c + 1] << 8;
		if (k->buf[tt + off])
			k->buf[tt + off] = 0x01;
	}
}

static void truncated_names(struct kp_mkkallsyms *k, size_t *mapped)
{
	// Move the token table and index in front of the buffer (so that
	// they stay mapped and no longer bound the names table), then map
	// only the first half of kallsyms_names.
	size_t tt = kp_mkkallsyms_off(k, k->tables.token_table);
	size_t ti = kp_mkkallsyms_off(k, k->tables.token_index);
	size_t tsize = ti + 512 - tt;
	uint8_t *nbuf = calloc(1, tsize + k->size);
	memcpy(nbuf, k->buf + tt, tsize);
	memcpy(nbuf + tsize, k->buf, k->size);
	*mapped = tsize + kp_mkkallsyms_off(k, k->tables.names) + k->names_size / 2;
	free(k->buf);
	k->buf = nbuf;
	k->base -= tsize;
	k->tables.token_table = k->base;
	k->tables.token_index = k->base + (ti - tt);
}

static void unmapped_offsets(struct kp_mkkallsyms *k, size_t *mapped)
{
	k->tables.offsets = 0xffff888000000000ULL;
}

static void no_address_table(struct kp_mkkallsyms *k, size_t *mapped)
{
	k->tables.offsets = 0;
	k->tables.addresses = 0;
}

TEST(memory_corrupt_tables)
{
	struct gen g;
	if (!gen_symbols(&g, 2000, 11))
		return;
	expect_corrupt(&g, absurd_num_syms, KP_ERR_FORMAT, "kallsyms_num_syms at 0x");
	expect_corrupt(&g, absurd_num_syms, KP_ERR_FORMAT, "is 40000000 (expected 1..4000000)");
	expect_corrupt(&g, zero_num_syms, KP_ERR_FORMAT, "is 0");
	expect_corrupt(&g, more_syms_than_names, KP_ERR_FORMAT, "kallsyms_names");
	expect_corrupt(&g, zero_length_record, KP_ERR_FORMAT, "symbol 0 at 0x");
	expect_corrupt(&g, three_byte_length, KP_ERR_FORMAT, "more than two bytes");
	expect_corrupt(&g, token_index_out_of_table, KP_ERR_FAULT, "kallsyms_token_table at 0x");
	expect_corrupt(&g, unterminated_token, KP_ERR_FORMAT, "is not NUL-terminated within 4096 bytes");
	expect_corrupt(&g, binary_token, KP_ERR_FORMAT, "has byte 0x01 in its name");
	expect_corrupt(&g, truncated_names, KP_ERR_FORMAT, "truncated at symbol");
	expect_corrupt(&g, unmapped_offsets, KP_ERR_FAULT, "kallsyms_offsets at 0xffff888000000000");
	expect_corrupt(&g, no_address_table, KP_ERR_INVALID, "neither kallsyms_offsets");
	gen_free(&g);
}

// Random damage to every table: never a crash or sanitizer report, only
// FORMAT/FAULT errors or (harmlessly wrong) symbols.
TEST(memory_fuzzed_tables)
{
	struct gen g;
	if (!gen_symbols(&g, 600, 13))
		return;
	struct kp_mkkallsyms k;
	CHECK_OK(kp_mkkallsyms_build(g.syms, g.n, TABLES_BASE, 0, &k));
	uint8_t *pristine = malloc(k.size);
	memcpy(pristine, k.buf, k.size);
	unsigned seed = 99;
	for (int round = 0; round < 300; round++) {
		memcpy(k.buf, pristine, k.size);
		for (int hits = 0; hits < 1 + round % 8; hits++) {
			seed = seed * 1103515245 + 12345;
			k.buf[(seed >> 8) % k.size] = seed >> 24;
		}
		seed = seed * 1103515245 + 12345;
		size_t mapped = round % 5 == 0 ? (seed >> 8) % k.size : k.size;
		struct kp_memory *mem = memory_over(&k, mapped ? mapped : 1);
		struct kp_symtab *st = new_symtab();
		struct kp_error *err = kp_kallsyms_read_memory(mem, &k.tables, st);
		if (err) {
			CHECK(err->code == KP_ERR_FORMAT || err->code == KP_ERR_FAULT);
			kp_error_destroy(err);
		}
		kp_symtab_destroy(st);
		kp_memory_destroy(mem);
	}
	free(pristine);
	kp_mkkallsyms_deinit(&k);
	gen_free(&g);
}

// The symbols a table gives by name, from st and from ref (decoded whole).
static void check_same_by_name(struct kp_symtab *st, struct kp_symtab *ref, const char *name)
{
	struct kp_symbol a, b;
	bool fa = kp_symtab_find(st, name, &a), fb = kp_symtab_find(ref, name, &b);
	if (fa != fb) {
		FAILF("'%.40s': found %d by the index, %d by the whole table", name, fa, fb);
		return;
	}
	if (fa && (strcmp(a.name, b.name) || a.address != b.address || a.type != b.type ||
		   a.size != b.size || a.module != b.module))
		FAILF("'%.40s': index 0x%" PRIx64 " %c size %" PRIu64 ", whole table 0x%" PRIx64
		      " %c size %" PRIu64, name, a.address, a.type, a.size, b.address, b.type,
		      b.size);
}

// An address lookup gives the same symbol, size and type, or fails the
// same way, in both tables.
static void check_same_by_address(struct kp_symtab *st, struct kp_symtab *ref, uint64_t at)
{
	struct kp_symbol a, b;
	struct kp_error *ea = kp_symtab_by_address(st, at, &a);
	struct kp_error *eb = kp_symtab_by_address(ref, at, &b);
	bool fa = kp_ok(ea), fb = kp_ok(eb);
	kp_error_destroy(ea);
	kp_error_destroy(eb);
	if (fa != fb)
		FAILF("0x%" PRIx64 ": %s by the index, %s in the whole table", at,
		      fa ? a.name : "nothing", fb ? b.name : "nothing");
	else if (fa && (strcmp(a.name, b.name) || a.address != b.address || a.size != b.size ||
			a.type != b.type))
		FAILF("0x%" PRIx64 ": %s 0x%" PRIx64 " %c size %" PRIu64 " by the index, %s 0x%" PRIx64
		      " %c size %" PRIu64 " in the whole table", at, a.name, a.address, a.type,
		      a.size, b.name, b.address, b.type, b.size);
}

// Every alias at an address (kp_symtab_alias), in order, the same in both.
static void check_same_aliases(struct kp_symtab *st, struct kp_symtab *ref, uint64_t at)
{
	struct kp_symbol a, b;
	for (size_t i = 0; i < 64; i++) {
		bool fa = kp_symtab_alias(st, at, i, &a), fb = kp_symtab_alias(ref, at, i, &b);
		if (fa != fb)
			FAILF("0x%" PRIx64 " alias %zu: %s by the index, %s in the whole table", at, i,
			      fa ? a.name : "nothing", fb ? b.name : "nothing");
		if (!fa || !fb)
			return;
		if (strcmp(a.name, b.name) || a.address != b.address || a.type != b.type ||
		    a.size != b.size)
			FAILF("0x%" PRIx64 " alias %zu: %s %c size %" PRIu64 " by the index, %s %c "
			      "size %" PRIu64 " in the whole table", at, i, a.name, a.type, a.size,
			      b.name, b.type, b.size);
	}
}

// Every symbol in address order, name, address, type, size and module,
// the same in both.
static void check_same_walk(struct kp_symtab *st, struct kp_symtab *ref)
{
	struct kp_symtab_pos pa = { 0 }, pb = { 0 };
	struct kp_symbol a, b;
	for (size_t i = 0;; i++) {
		struct kp_error *ea = kp_symtab_next(st, &pa, &a), *eb = kp_symtab_next(ref, &pb, &b);
		if (ea || eb) {
			if (ea != &kp_not_found || eb != &kp_not_found)
				FAILF("symbol %zu: %s by the index, %s in the whole table", i,
				      ea ? kp_error_message(ea) : a.name, eb ? kp_error_message(eb) : b.name);
			kp_error_destroy(ea);
			kp_error_destroy(eb);
			return;
		}
		if (strcmp(a.name, b.name) || a.address != b.address || a.type != b.type ||
		    a.size != b.size || !a.module != !b.module ||
		    (a.module && strcmp(a.module, b.module))) {
			FAILF("symbol %zu: %s 0x%" PRIx64 " %c size %" PRIu64 " by the index, %s 0x%"
			      PRIx64 " %c size %" PRIu64 " in the whole table", i, a.name, a.address,
			      a.type, a.size, b.name, b.address, b.type, b.size);
			return;
		}
	}
}

// An unknown name fails the same way, suggestions included, in both.
static void check_same_unknown(struct kp_symtab *st, struct kp_symtab *ref, const char *name)
{
	struct kp_symbol s;
	struct kp_error *ea = kp_symtab_by_name(st, name, &s), *eb = kp_symtab_by_name(ref, name, &s);
	CHECK(ea && eb);
	if (ea && eb && strcmp(ea->message, eb->message))
		FAILF("'%s': by the index \"%s\", whole table \"%s\"", name, ea->message, eb->message);
	else if (ea && !strstr(ea->message, "unknown symbol"))
		FAILF("'%s': %s", name, ea->message);
	kp_error_destroy(ea);
	kp_error_destroy(eb);
}

// A second source as VMCOREINFO and System.map add them: duplicates of
// kallsyms symbols ('?' and real types), a new name, a global twin of a
// local kallsyms name elsewhere, and _end.
static void add_second_source(struct kp_symtab *st, const struct gen *g)
{
	kp_symtab_next_source(st);
	CHECK_OK(kp_symtab_add(st, g->syms[30].name, strlen(g->syms[30].name),
			       g->syms[30].address, '?', NULL));
	CHECK_OK(kp_symtab_add(st, g->syms[31].name, strlen(g->syms[31].name),
			       g->syms[31].address, 'D', NULL));
	CHECK_OK(kp_symtab_add(st, "only_in_vmcoreinfo", 18, g->syms[40].address + 8, '?', NULL));
	// A mapping symbol (a module's local label): no extent of its own.
	CHECK_OK(kp_symtab_add(st, ".LC0", 4, g->syms[41].address + 4, 'r', "mod"));
	for (size_t i = 20; i < g->n; i++) {
		if (g->syms[i].type == 't') {
			CHECK_OK(kp_symtab_add(st, g->syms[i].name, strlen(g->syms[i].name),
					       g->syms[g->n - 1].address + 0x100, 'T', NULL));
			break;
		}
	}
	CHECK_OK(kp_symtab_add(st, "_end", 4, g->syms[g->n - 1].address + 0x40, 'B', NULL));
}

// Lookups by name through the lazy index equal those of the table decoded
// whole, in every address encoding, with and without a second source, and
// the index loads nothing until an address lookup needs the whole table.
TEST(memory_name_index_matches_whole_table)
{
	static const unsigned layouts[] = {
		0, KP_MKKALLSYMS_SEQS, KP_MKKALLSYMS_TABLES_LAST, KP_MKKALLSYMS_PC_RELATIVE,
		KP_MKKALLSYMS_NO_PERCPU, KP_MKKALLSYMS_ABSOLUTE,
	};
	for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		struct gen g;
		if (!gen_symbols(&g, 3000, 21 + l))
			return;
		if (layouts[l] & (KP_MKKALLSYMS_PC_RELATIVE | KP_MKKALLSYMS_NO_PERCPU |
				  KP_MKKALLSYMS_ABSOLUTE)) {
			for (size_t i = 0; i < 20; i++)
				g.syms[i].address += 0xffffffff80000000;
		}
		// Names shared by symbols at other addresses, local and global.
		for (size_t i = 120; i < g.n; i += 113) {
			g.syms[i].name = g.syms[i - 7].name;
			g.syms[i].type = i % 2 ? 't' : 'T';
		}
		struct kp_mkkallsyms k;
		CHECK_OK(kp_mkkallsyms_build(g.syms, g.n, TABLES_BASE, layouts[l], &k));
		struct kp_memory *mem = memory_over(&k, k.size);
		for (int second = 0; second < 2; second++) {
			struct kp_symtab *st = new_symtab(), *ref = new_symtab();
			CHECK_OK(kp_kallsyms_attach(mem, &k.tables, st));
			CHECK_OK(kp_kallsyms_read_memory(mem, &k.tables, ref));
			if (second) {
				add_second_source(st, &g);
				add_second_source(ref, &g);
			}
			for (size_t i = 0; i < g.n; i++)
				check_same_by_name(st, ref, g.syms[i].name);
			check_same_by_name(st, ref, "only_in_vmcoreinfo");
			check_same_by_name(st, ref, "_end");
			check_same_by_name(st, ref, "no_such_symbol");
			CHECK(!kp_symtab_loaded(st));
			size_t types[256];
			kp_symtab_count_types(st, types);
			CHECK_U64(types['T'] + types['t'] + types['D'] + types['d'] + types['B'] +
				  types['b'] + types['R'] + types['r'] + types['A'],
				  g.n + (second ? 4 : 0));
			CHECK(!kp_symtab_loaded(st));
			// Address lookups answer through the index too, as
			// the reference does: at, inside, just below and far
			// past every symbol, and past the second source's.
			for (size_t i = 0; i < g.n; i++) {
				uint64_t base = g.syms[i].address;
				const uint64_t at[] = { base, base + 3, base - 1, base + 0x10000 };
				for (size_t j = 0; j < sizeof(at) / sizeof(at[0]); j++)
					check_same_by_address(st, ref, at[j]);
			}
			check_same_by_address(st, ref, g.syms[g.n - 1].address + 0x108);
			check_same_by_address(st, ref, 0);
			// And the aliases at an address, the second source's
			// after the index's.
			for (size_t i = 0; i < g.n; i++)
				check_same_aliases(st, ref, g.syms[i].address);
			check_same_aliases(st, ref, g.syms[40].address + 8);
			check_same_aliases(st, ref, g.syms[g.n - 1].address + 0x100);
			CHECK(!kp_symtab_loaded(st));
			// An unknown name's suggestions, from every name walked
			// (each once, the walk's names kept past their step).
			char typo[64];
			snprintf(typo, sizeof(typo), "%.20sx", g.syms[300].name);
			check_same_unknown(st, ref, typo);
			check_same_unknown(st, ref, "only_in_vmcoreinf");
			check_same_unknown(st, ref, "zzzzzzzzzzzz");
			// The count too, less the second source's duplicates,
			// and every symbol in order.
			CHECK_U64(kp_symtab_count(st), kp_symtab_count(ref));
			check_same_walk(st, ref);
			CHECK(!kp_symtab_loaded(st));
			for (size_t i = 0; i < g.n; i += 7)
				check_same_by_name(st, ref, g.syms[i].name);
			kp_symtab_destroy(st);
			kp_symtab_destroy(ref);
		}
		kp_memory_destroy(mem);
		kp_mkkallsyms_deinit(&k);
		gen_free(&g);
	}
}

// Tables out of address order are decoded whole: same answers.
TEST(memory_unsorted_tables_decoded_whole)
{
	struct gen g;
	if (!gen_symbols(&g, 500, 31))
		return;
	struct kp_mkkallsyms k;
	CHECK_OK(kp_mkkallsyms_build(g.syms, g.n, TABLES_BASE, 0, &k));
	uint8_t *off = k.buf + kp_mkkallsyms_off(&k, k.tables.offsets);
	uint8_t t[4];
	memcpy(t, off + 4 * 100, 4);
	memcpy(off + 4 * 100, off + 4 * 300, 4);
	memcpy(off + 4 * 300, t, 4);
	struct kp_memory *mem = memory_over(&k, k.size);
	struct kp_symtab *st = new_symtab();
	CHECK_OK(kp_kallsyms_attach(mem, &k.tables, st));
	CHECK(kp_symtab_loaded(st));
	struct kp_symbol sym;
	CHECK_OK(kp_symtab_by_name(st, g.syms[100].name, &sym));
	CHECK_U64(sym.address, g.syms[300].address);
	kp_symtab_destroy(st);
	kp_memory_destroy(mem);
	kp_mkkallsyms_deinit(&k);
	gen_free(&g);
}

// One name repeated 100k times: no quadratic index build, no chain decoded
// again at each lookup (the whole table takes over).
TEST(memory_name_index_repeated_name)
{
	enum { N = 100000 };
	struct kp_mkkallsyms_sym *syms = calloc(N, sizeof(*syms));
	if (!syms) {
		FAILF("out of memory");
		return;
	}
	for (size_t i = 0; i < N; i++)
		syms[i] = (struct kp_mkkallsyms_sym){ "same", 't', 0xffffffff81000000 + 16 * i };
	syms[N - 1].name = "other";
	struct kp_mkkallsyms k;
	CHECK_OK(kp_mkkallsyms_build(syms, N, TABLES_BASE, KP_MKKALLSYMS_FEW_TOKENS, &k));
	struct kp_memory *mem = memory_over(&k, k.size);
	struct kp_symtab *st = new_symtab();
	double t0 = now_ms();
	CHECK_OK(kp_kallsyms_attach(mem, &k.tables, st));
	struct kp_symbol sym;
	CHECK(kp_symtab_find(st, "other", &sym));
	for (int i = 0; i < 50; i++) {
		CHECK(kp_symtab_find(st, "same", &sym));
		CHECK_U64(sym.address, 0xffffffff81000000);
	}
	CHECK(kp_symtab_loaded(st));
	double t1 = now_ms();
	printf("  100k symbols of one name, 50 lookups: %.1f ms\n", t1 - t0);
	CHECK(t1 - t0 < 3000);	// ASan+UBSan: 95 ms; quadratic: minutes
	kp_symtab_destroy(st);
	kp_memory_destroy(mem);
	kp_mkkallsyms_deinit(&k);

	// 400 of one name among distinct ones: the index is built, and a
	// lookup of that name hands over to the whole table.
	static char names[N][16];
	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "f%zu", i);
		syms[i].name = i % 250 == 3 ? "rep" : names[i];
	}
	CHECK_OK(kp_mkkallsyms_build(syms, N, TABLES_BASE, KP_MKKALLSYMS_FEW_TOKENS, &k));
	mem = memory_over(&k, k.size);
	st = new_symtab();
	CHECK_OK(kp_kallsyms_attach(mem, &k.tables, st));
	CHECK(kp_symtab_find(st, "f100", &sym));
	CHECK(!kp_symtab_loaded(st));
	CHECK(kp_symtab_find(st, "rep", &sym));
	CHECK_U64(sym.address, 0xffffffff81000000 + 16 * 3);
	CHECK(kp_symtab_loaded(st));
	kp_symtab_destroy(st);
	kp_memory_destroy(mem);
	kp_mkkallsyms_deinit(&k);
	free(syms);
}

TEST(memory_decode_speed_150k)
{
	struct gen g;
	if (!gen_symbols(&g, 150000, 5))
		return;
	struct kp_mkkallsyms k;
	double t0 = now_ms();
	CHECK_OK(kp_mkkallsyms_build(g.syms, g.n, TABLES_BASE, KP_MKKALLSYMS_FEW_TOKENS, &k));
	double t1 = now_ms();
	struct kp_memory *mem = memory_over(&k, k.size);
	struct kp_symtab *st = new_symtab();
	CHECK_OK(kp_kallsyms_read_memory(mem, &k.tables, st));
	double t2 = now_ms();
	CHECK_OK(kp_symtab_finalize(st));
	double t3 = now_ms();
	CHECK_U64(kp_symtab_count(st), 150000);
	printf("  150k symbols (%zu KiB of names): build %.0f ms, decode+add %.1f ms, finalize %.1f ms\n",
	       k.names_size / 1024, t1 - t0, t2 - t1, t3 - t2);
	CHECK(t2 - t1 < 1000);
	kp_symtab_destroy(st);
	kp_memory_destroy(mem);
	kp_mkkallsyms_deinit(&k);
	gen_free(&g);
}

int main(void)
{
	RUN(proc_kallsyms_with_modules);
	RUN(system_map_with_bias);
	RUN(debian_stub_and_hidden_addresses);
	RUN(malformed_lines_name_file_and_line);
	RUN(memory_round_trip);
	RUN(memory_record_formats);
	RUN(memory_corrupt_tables);
	RUN(memory_fuzzed_tables);
	RUN(memory_name_index_matches_whole_table);
	RUN(memory_unsorted_tables_decoded_whole);
	RUN(memory_name_index_repeated_name);
	RUN(memory_decode_speed_150k);
	return TEST_SUMMARY();
}
