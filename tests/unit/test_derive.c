// SPDX-License-Identifier: MIT
// Variables of a kallsyms of functions only: the addresses an arm64
// function forms with ADRP (instruction words assembled by binutils'
// aarch64-linux-gnu-as, targets as its objdump printed them), the
// RIP-relative operands of x86-64 code (bytes from binutils' as, targets
// as objdump printed them), and the
// kernel's tables of exported symbols (__ksymtab) built here in the
// layout of include/linux/export.h (three 32-bit offsets, sorted by name).
#include <bpf/btf.h>

#include "test.h"
#include "arch/arm64/arm64.h"
#include "arch/x86_64/x86_64.h"
#include "core/derive.h"
#include "core/ksymtab.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "types/types.h"
#include "util/le.h"

// ---------------------------------------------------------------- ADRP

struct refs {
	uint64_t at[64];
	size_t n;
};

static void add_ref(uint64_t target, void *arg)
{
	struct refs *r = arg;
	if (r->n < 64)
		r->at[r->n++] = target;
}

static void decode(const uint32_t *words, size_t n, uint64_t addr, bool to_exit, struct refs *r)
{
	uint8_t code[64];
	for (size_t i = 0; i < n; i++)
		kp_put_le32(code + 4 * i, words[i]);
	r->n = 0;
	kp_arm64_data_refs(code, 4 * n, addr, to_exit, add_ref, r);
}

TEST(arm64_adrp_pairs)
{
	// adrp x1, var1; add x1, x1, #0x340; adrp x2, ..; ldr x3, [x2, #840];
	// adrp x4, ..; ldr w5, [x4, #848]; mov x4, #1; ret
	static const uint32_t f[] = { 0xd0008001, 0x910d0021, 0x90008022, 0xf941a443,
				      0x90008024, 0xb9435085, 0xd2800024, 0xd65f03c0 };
	struct refs r;
	decode(f, 8, 0xffff800008010000, false, &r);
	CHECK_U64(r.n, 3);
	CHECK_U64(r.at[0], 0xffff800009012340);	// var1
	CHECK_U64(r.at[1], 0xffff800009014348);	// var2 (64-bit load, scaled by 8)
	CHECK_U64(r.at[2], 0xffff800009014350);	// var3 (32-bit load, scaled by 4)
	// adrp x7, <a page below the code>; add x8, x7, #0x5, lsl #12; ret
	static const uint32_t g[] = { 0xd0ff8007, 0x914014e8, 0xd65f03c0 };
	decode(g, 3, 0xffff80000a010000, false, &r);
	CHECK_U64(r.n, 1);
	CHECK_U64(r.at[0], 0xffff800009017000);
	// An add on a register no adrp set, and an adrp whose register is
	// overwritten by the load it feeds: nothing, then one.
	static const uint32_t h[] = { 0x910d0021, 0x90008022, 0xf941a442, 0xf941a443 };
	decode(h, 4, 0xffff800008010000, false, &r);
	CHECK_U64(r.n, 1);
	// A neighbour formed from a variable's address in a callee-saved
	// register across a call; a page in x1 is lost to a call (AAPCS64).
	// adrp x19, v; add x19, x19, #0xa68; bl; add x0, x19, #0x30;
	// adrp x1, v; bl; add x2, x1, #0x8; ret
	static const uint32_t k[] = { 0xd0009b93, 0x9129a273, 0x97fffffe, 0x9100c260,
				      0xd0009b81, 0x97fffffb, 0x91002022, 0xd65f03c0 };
	decode(k, 8, 0xffff800008010000, false, &r);
	CHECK_U64(r.n, 2);
	CHECK_U64(r.at[0], 0xffff800009382a68);	// v
	CHECK_U64(r.at[1], 0xffff800009382a98);	// v + 0x30
	// To the first exit: f's refs after a ret are not its own.
	static const uint32_t f_ret[] = { 0xd0008001, 0x910d0021, 0xd65f03c0, 0x90008022, 0xf941a443 };
	decode(f_ret, 5, 0xffff800008010000, true, &r);
	CHECK_U64(r.n, 1);
	decode(f_ret, 5, 0xffff800008010000, false, &r);
	CHECK_U64(r.n, 2);
}

// ---------------------------------------------------------------- __ksymtab

#define TEXT 0xffffffff81000000ULL	// _stext; _etext 64 KiB above
#define RODATA 0xffffffff82000000ULL	// __start_rodata; 16 KiB
#define DATA 0xffffffff83000000ULL
#define BSS 0xffffffff84000000ULL	// __bss_start; 4 KiB
#define IMAGE_END 0xffffffff85000000ULL

struct image {
	uint8_t rodata[0x4000];
	struct kp_memory *mem;
	struct kp_symtab *st;
	size_t strings;	// next free byte of the name strings (from 0x3000)
};

// x86: kallsyms as x86-64's: _etext not 4-aligned, no rodata markers.
static void image_init_as(struct image *im, bool x86)
{
	memset(im, 0, sizeof(*im));
	im->strings = 0x3000;
	CHECK_OK(kp_memory_create(&im->mem));
	CHECK_OK(kp_memory_add(im->mem, KP_VIRT, RODATA, sizeof(im->rodata), kp_read_buffer,
			       im->rodata, 0));
	CHECK_OK(kp_symtab_create(&im->st));
	static const struct { const char *name; uint64_t a; } marks[] = {
		{ "_stext", TEXT }, { "_etext", TEXT + 0x10000 },
		{ "__bss_start", BSS }, { "__bss_stop", BSS + 0x1000 },
		{ "__start_rodata", RODATA }, { "__end_rodata", RODATA + 0x4000 },
	};
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]) - (x86 ? 2 : 0); i++)
		CHECK_OK(kp_symtab_add(im->st, marks[i].name, strlen(marks[i].name),
				       marks[i].a + (x86 && i == 1 ? 2 : 0), 'T', NULL));
}

static void image_init(struct image *im)
{
	image_init_as(im, false);
}

static void image_fini(struct image *im)
{
	kp_symtab_destroy(im->st);
	kp_memory_destroy(im->mem);
}

// Writes entry i of the table at rodata offset table: value, name.
static void put_entry(struct image *im, size_t table, size_t i, uint64_t value, const char *name)
{
	size_t off = table + 12 * i;
	uint64_t at = RODATA + off;
	memcpy(im->rodata + im->strings, name, strlen(name) + 1);
	kp_put_le32(im->rodata + off, (uint32_t)(int32_t)(int64_t)(value - at));
	kp_put_le32(im->rodata + off + 4, (uint32_t)(int32_t)(int64_t)(RODATA + im->strings - (at + 4)));
	kp_put_le32(im->rodata + off + 8, 0);
	im->strings += strlen(name) + 1;
}

// A table of 24 entries sorted by name: even ones functions kallsyms names
// (kNN_fn at TEXT + 0x100 * NN), odd ones variables kNN_var: in data, in
// bss (03), in rodata (05). name_of_fn_02 renames the second function in
// the table only.
static void put_table(struct image *im, size_t table, const char *name_of_fn_02, bool add_fns)
{
	char name[32];
	for (unsigned i = 0; i < 24; i++) {
		uint64_t v;
		if (i % 2 == 0) {
			snprintf(name, sizeof(name), "k%02u_fn", i);
			v = TEXT + 0x100 * i;
			if (add_fns)
				CHECK_OK(kp_symtab_add(im->st, name, strlen(name), v, 'T', NULL));
			if (i == 2 && name_of_fn_02)
				snprintf(name, sizeof(name), "%s", name_of_fn_02);
		} else {
			snprintf(name, sizeof(name), "k%02u_var", i);
			v = i == 3 ? BSS + 0x40 : i == 5 ? RODATA + 0x2000 : DATA + 8 * i;
		}
		put_entry(im, table, i, v, name);
	}
	CHECK_OK(kp_symtab_finalize(im->st));
}

// _text from the Image header below _stext: magic "ARM\x64" at 0x38, an
// image size past _stext; a magic without a plausible size is not it.
TEST(arm64_text_start)
{
	static uint8_t img[0x20000];
	memset(img, 0, sizeof(img));
	struct kp_memory *mem;
	CHECK_OK(kp_memory_create(&mem));
	CHECK_OK(kp_memory_add(mem, KP_VIRT, TEXT, sizeof(img), kp_read_buffer, img, 0));
	uint64_t t = 0;
	CHECK(!kp_arm64_text_start(mem, TEXT + 0x10000, &t));
	kp_put_le32(img + 0x38, 0x644d5241);
	CHECK(!kp_arm64_text_start(mem, TEXT + 0x10000, &t));	// image size 0
	kp_put_le64(img + 0x10, 0x2500000);
	CHECK(kp_arm64_text_start(mem, TEXT + 0x10000, &t));
	CHECK_U64(t, TEXT);
	kp_memory_destroy(mem);
}

// ---------------------------------------------------------------- x86-64

// as of: f: endbr64; nopl 0x0(%rax,%rax,1) (the kernel's fentry nop);
// movq tainted_mask(%rip),%rax; ret; int3 -- g: endbr64; nop5; movl
// %edi,%esi; leaq irq_desc_tree(%rip),%rdi; jmp radix_tree_lookup -- h:
// pushq %rbx; movl $5,modules(%rip); cmpq $0x10,slab_caches(%rip); movzbl
// taint_flags(%rip),%eax; ud2; leaq chained_action(%rip),%rdi; ret, linked
// at text 0xffffffff81000000, data 0xffffffff82000000 (8 bytes each).
static const uint8_t X86_CODE[] = {
	0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x48, 0x8b, 0x05,
	0xf0, 0xff, 0xff, 0x00, 0xc3, 0xcc, 0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f,
	0x44, 0x00, 0x00, 0x89, 0xfe, 0x48, 0x8d, 0x3d, 0xe4, 0xff, 0xff, 0x00,
	0xe9, 0xd7, 0xff, 0xff, 0x7e, 0x53, 0xc7, 0x05, 0xdc, 0xff, 0xff, 0x00,
	0x05, 0x00, 0x00, 0x00, 0x48, 0x83, 0x3d, 0xdc, 0xff, 0xff, 0x00, 0x10,
	0x0f, 0xb6, 0x05, 0xdd, 0xff, 0xff, 0x00, 0x0f, 0x0b, 0x48, 0x8d, 0x3d,
	0xdc, 0xff, 0xff, 0x00, 0xc3,
};
#define X86_TEXT 0xffffffff81000000ULL
#define X86_DATA 0xffffffff82000000ULL

static bool has_ref(const struct refs *r, uint64_t a)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->at[i] == a)
			return true;
	return false;
}

TEST(x86_rip_relative)
{
	struct refs r = { .n = 0 };
	// Small functions, decoded from their entry to their exit.
	kp_x86_data_refs(X86_CODE, 0x12, X86_TEXT, true, add_ref, &r);
	CHECK_U64(r.n, 1);
	CHECK_U64(r.at[0], X86_DATA);				// tainted_mask
	r.n = 0;
	kp_x86_data_refs(X86_CODE + 0x12, 0x17, X86_TEXT + 0x12, true, add_ref, &r);
	CHECK_U64(r.n, 1);
	CHECK_U64(r.at[0], X86_DATA + 8);			// irq_desc_tree
	// An instruction it does not know (ud2) ends the walk: chained_action,
	// after it, is not taken.
	r.n = 0;
	kp_x86_data_refs(X86_CODE + 0x29, sizeof(X86_CODE) - 0x29, X86_TEXT + 0x29, true, add_ref, &r);
	CHECK_U64(r.n, 3);
	CHECK_U64(r.at[0], X86_DATA + 0x10);			// modules, after imm32
	CHECK_U64(r.at[1], X86_DATA + 0x18);			// slab_caches, after imm8
	CHECK_U64(r.at[2], X86_DATA + 0x20);			// taint_flags, 0f b6
	// The whole text tried at every byte: each target among the candidates.
	r.n = 0;
	kp_x86_data_refs(X86_CODE, sizeof(X86_CODE), X86_TEXT, false, add_ref, &r);
	for (uint64_t a = X86_DATA; a <= X86_DATA + 0x28; a += 8)
		CHECK(has_ref(&r, a));
	// as of: nopl -0x2a(%rax) (7.2's endbr poison); nop5; movq
	// tainted_mask(%rip),%rax; ret; movzbl taint_flags(%rcx),%ecx; movq
	// sys_call_table(,%rax,8),%rax -- absolute 32-bit addresses, indexed.
	static const uint8_t code2[] = {
		0x0f, 0x1f, 0x40, 0xd6, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x48, 0x8b, 0x05,
		0xf0, 0xff, 0xff, 0x00, 0xc3, 0x0f, 0xb6, 0x89, 0x08, 0x00, 0x00, 0x82,
		0x48, 0x8b, 0x04, 0xc5, 0x10, 0x00, 0x00, 0x82,
	};
	r.n = 0;
	kp_x86_data_refs(code2, sizeof(code2), X86_TEXT, true, add_ref, &r);
	CHECK_U64(r.n, 1);
	CHECK_U64(r.at[0], X86_DATA);
	r.n = 0;
	kp_x86_data_refs(code2, sizeof(code2), X86_TEXT, false, add_ref, &r);
	CHECK(has_ref(&r, X86_DATA) && has_ref(&r, X86_DATA + 8) && has_ref(&r, X86_DATA + 0x10));
	// A buffer cut inside an operand forms nothing past its end.
	r.n = 0;
	kp_x86_data_refs(X86_CODE, 14, X86_TEXT, false, add_ref, &r);
	CHECK_U64(r.n, 0);
}

TEST(ksymtab_variables)
{
	struct image im;
	image_init(&im);
	put_table(&im, 0x104, NULL, true);
	unsigned added = 0;
	CHECK_OK(kp_ksymtab_add_variables(im.mem, TEXT, IMAGE_END, im.st, &added));
	CHECK_U64(added, 12);
	struct kp_symbol s;
	CHECK(kp_symtab_find(im.st, "k01_var", &s) && s.address == DATA + 8 && s.type == 'D');
	CHECK(kp_symtab_find(im.st, "k03_var", &s) && s.address == BSS + 0x40 && s.type == 'B');
	CHECK(kp_symtab_find(im.st, "k05_var", &s) && s.address == RODATA + 0x2000 && s.type == 'R');
	CHECK(kp_symtab_find(im.st, "k23_var", &s) && s.address == DATA + 8 * 23);
	image_fini(&im);
}

// x86-64: rodata found from an _etext that is not 4-aligned, an exported
// per-CPU variable, whose value is its offset in .data..percpu (linked at
// 0), and a name of 288 characters inside the run: the run goes on past
// them, and each is added.
TEST(ksymtab_x86_layout)
{
	struct image im;
	image_init_as(&im, true);
	put_table(&im, 0x104, NULL, true);
	put_entry(&im, 0x104, 7, 0x1a000, "k07_var");
	// A name longer than C's 128 (a Rust symbol's mangled name; 7.2).
	char rust[300] = "k09_var_";
	memset(rust + 8, 'x', 280);
	rust[288] = 0;
	put_entry(&im, 0x104, 9, DATA + 8 * 9, rust);
	unsigned added = 0;
	CHECK_OK(kp_ksymtab_add_variables(im.mem, TEXT, IMAGE_END, im.st, &added));
	CHECK_U64(added, 12);
	struct kp_symbol s;
	CHECK(kp_symtab_find(im.st, "k07_var", &s) && s.address == 0x1a000);
	CHECK(kp_symtab_find(im.st, rust, &s) && s.address == DATA + 8 * 9);
	CHECK(kp_symtab_find(im.st, "k01_var", &s) && s.address == DATA + 8);
	CHECK(kp_symtab_find(im.st, "k23_var", &s) && s.address == DATA + 8 * 23);
	image_fini(&im);
}

// linux_banner: an 8-aligned string of release and version, printable,
// ending in " VERSION\n"; 6.1's weak copy without the build number and a
// copy with another release are not it; the first of two (rodata before
// the log buffer) is.
TEST(banner)
{
	struct image im;
	image_init(&im);
	static const char weak[] = "Linux version 6.1.0-9-arm64 (dk@debian) (gcc 12) # SMP Debian 6.1.1\n";
	static const char other[] = "Linux version 6.1.0-8-arm64 (dk@debian) (gcc 12) #1 SMP Debian 6.1.1\n";
	static const char real[] = "Linux version 6.1.0-9-arm64 (dk@debian) (gcc 12) #1 SMP Debian 6.1.1\n";
	const char *rel = "6.1.0-9-arm64", *ver = "#1 SMP Debian 6.1.1";
	memcpy(im.rodata + 0x100, weak, sizeof(weak));
	memcpy(im.rodata + 0x200, other, sizeof(other));
	memcpy(im.rodata + 0x404, real, sizeof(real));	// not aligned
	memcpy(im.rodata + 0xff8, real, sizeof(real));	// across a page
	memcpy(im.rodata + 0x3000, real, sizeof(real));
	CHECK_U64(kp_derive_banner(im.mem, rel, ver, RODATA, RODATA + 0x4000), RODATA + 0xff8);
	CHECK_U64(kp_derive_banner(im.mem, rel, ver, RODATA + 0x1000, RODATA + 0x4000), RODATA + 0x3000);
	CHECK_U64(kp_derive_banner(im.mem, rel, "#2 SMP", RODATA, RODATA + 0x4000), 0);
	// Not printable: not the banner.
	im.rodata[0x3010] = 1;
	CHECK_U64(kp_derive_banner(im.mem, rel, ver, RODATA + 0x1000, RODATA + 0x4000), 0);
	image_fini(&im);
}

// A table whose function disagrees with kallsyms is not the kernel's: none
// of its variables is taken.
TEST(ksymtab_function_disagrees)
{
	struct image im;
	image_init(&im);
	put_table(&im, 0x104, "k02_fx", true);
	unsigned added = 0;
	CHECK_OK(kp_ksymtab_add_variables(im.mem, TEXT, IMAGE_END, im.st, &added));
	CHECK_U64(added, 0);
	image_fini(&im);
}

// Without functions kallsyms names (nothing anchors), or without the text
// markers, nothing is found; unsorted names break the run into pieces too
// short to be a table.
TEST(ksymtab_not_found)
{
	struct image im;
	unsigned added = 1;
	image_init(&im);
	put_table(&im, 0x104, NULL, false);
	CHECK_OK(kp_ksymtab_add_variables(im.mem, TEXT, IMAGE_END, im.st, &added));
	CHECK_U64(added, 0);
	image_fini(&im);

	image_init(&im);
	put_table(&im, 0x104, "zz_last", true);	// k02_fn named after every other entry
	for (unsigned i = 4; i < 24; i += 4)	// and more out of order
		put_entry(&im, 0x104, i, TEXT + 0x100 * i, "aaa");
	added = 1;
	CHECK_OK(kp_ksymtab_add_variables(im.mem, TEXT, IMAGE_END, im.st, &added));
	CHECK_U64(added, 0);
	image_fini(&im);
}

// ---------------------------------------------------------------- irq trees

// struct xarray and struct maple_tree as on 64-bit: a 4-byte lock, the
// 4-byte flags, the root pointer (include/linux/xarray.h, maple_tree.h).
static struct kp_types *tree_types(void)
{
	struct btf *b = btf__new_empty();
	int u32 = btf__add_int(b, "unsigned int", 4, 0), ptr = btf__add_ptr(b, 0);
	static const char *const trees[][4] = { { "xarray", "xa_lock", "xa_flags", "xa_head" },
						{ "maple_tree", "ma_lock", "ma_flags", "ma_root" } };
	for (size_t i = 0; i < 2; i++) {
		CHECK(btf__add_struct(b, trees[i][0], 16) > 0);
		CHECK(!btf__add_field(b, trees[i][1], u32, 0, 0));
		CHECK(!btf__add_field(b, trees[i][2], u32, 32, 0));
		CHECK(!btf__add_field(b, trees[i][3], ptr, 64, 0));
	}
	struct kp_types *t;
	CHECK_OK(kp_types_create(b, "test", &t));
	return t;
}

static uint32_t adrp_x0(uint64_t pc, uint64_t target)
{
	uint64_t imm = ((target >> 12) - (pc >> 12)) & 0x1fffff;
	return 0x90000000u | (uint32_t)(imm & 3) << 29 | (uint32_t)(imm >> 2) << 5;
}

// Whether the one tree a user (irq_to_desc, bpf_prog_by_id) forms is
// named want, with data as it holds it; want NULL: none is.
static void tree_of(const char *user, const uint8_t data[0x40], const char *want)
{
	struct image im;
	image_init(&im);
	// 7.2 arm64's irq_to_desc: adrp x0, anchor; add x0, x0, #0xb10;
	// add x0, x0, #0x20; bl mtree_load -- it forms the anchor 0x20 below
	// sparse_irqs (the end of another file's data) as well.
	static uint8_t code[1024], mem[0x40];	// the 1 KiB of code derive reads
	uint32_t w[] = { 0xd503201f, 0xaa1e03e9, 0xd503233f, 0xa9bf7bfd, 0x2a0003e1,
			 adrp_x0(TEXT + 0x100 + 20, DATA), 0x910003fd, 0x912c4000, 0x91008000,
			 0x944248d3, 0xa8c17bfd, 0xd50323bf, 0xd65f03c0 };
	for (size_t i = 0; i < 13; i++)
		kp_put_le32(code + 4 * i, w[i]);
	memcpy(mem, data, sizeof(mem));
	CHECK_OK(kp_memory_add(im.mem, KP_VIRT, TEXT + 0x100, sizeof(code), kp_read_buffer, code, 0));
	CHECK_OK(kp_memory_add(im.mem, KP_VIRT, DATA + 0xb10, sizeof(mem), kp_read_buffer, mem, 0));
	CHECK_OK(kp_symtab_add(im.st, user, strlen(user), TEXT + 0x100, 'T', NULL));
	CHECK_OK(kp_symtab_finalize(im.st));
	struct kp_types *t = tree_types();
	unsigned added = 0;
	CHECK_OK(kp_derive_refs(im.mem, &kp_arch_arm64, t, TEXT, IMAGE_END, im.st, &added));
	struct kp_symbol s;
	static const char *const trees[] = { "irq_desc_tree", "sparse_irqs", "prog_idr" };
	CHECK_U64(added, want ? 1 : 0);
	for (size_t i = 0; i < 3; i++)
		CHECK(kp_symtab_find(im.st, trees[i], &s) == (want && !strcmp(want, trees[i])));
	if (want && kp_symtab_find(im.st, want, &s))
		CHECK_U64(s.address, DATA + 0xb30);
	kp_types_destroy(t);
	image_fini(&im);
}

// A radix tree's flags are exactly GFP_KERNEL, a maple tree's its own
// bits below 0x400: the upper half of a pointer beside sparse_irqs whose
// KASLR offset sets GFP_KERNEL's bits (a 7.2 arm64 boot: 0xffff9ecf) is
// neither.
TEST(irq_tree_by_flags)
{
	uint8_t d[0x40] = { 0 };
	kp_put_le64(d, 0xffff9ecf731eb108);		// anchor: a pointer
	kp_put_le32(d + 0x24, 0x30b);			// sparse_irqs: flags, height 2
	kp_put_le64(d + 0x28, 0xfff0000003dad71e);
	tree_of("irq_to_desc", d, "sparse_irqs");
	kp_put_le32(d + 0x24, 0xcc0);			// a radix tree
	tree_of("irq_to_desc", d, "irq_desc_tree");
	kp_put_le32(d + 0x24, 0xffff9ecf);		// a pointer's upper half
	tree_of("irq_to_desc", d, NULL);
	memset(d, 0, sizeof(d));			// flags 0: no tree
	tree_of("irq_to_desc", d, NULL);
}

// An idr's flags are ROOT_IS_IDR and the IDR_FREE root tag, one bit
// wherever __GFP_BITS_SHIFT puts it (bit 26 on 6.1): not a pointer's upper
// half that has bit 2 and none of GFP_KERNEL's.
TEST(prog_idr_by_flags)
{
	uint8_t d[0x40] = { 0 };
	kp_put_le32(d + 0x24, 4 | 1u << 26);
	tree_of("bpf_prog_by_id", d, "prog_idr");
	kp_put_le32(d + 0x24, 4 | 1u << 23);
	tree_of("bpf_prog_by_id", d, "prog_idr");
	kp_put_le32(d + 0x24, 0xffff8004);
	tree_of("bpf_prog_by_id", d, NULL);
	kp_put_le32(d + 0x24, 4);			// no IDR_FREE tag
	tree_of("bpf_prog_by_id", d, NULL);
}

int main(void)
{
	RUN(arm64_adrp_pairs);
	RUN(arm64_text_start);
	RUN(x86_rip_relative);
	RUN(ksymtab_variables);
	RUN(ksymtab_x86_layout);
	RUN(banner);
	RUN(ksymtab_function_disagrees);
	RUN(ksymtab_not_found);
	RUN(irq_tree_by_flags);
	RUN(prog_idr_by_flags);
	return TEST_SUMMARY();
}
