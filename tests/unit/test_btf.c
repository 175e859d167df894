// SPDX-License-Identifier: MIT
// BTF loading (file, memory, corrupt headers), type helpers, type names,
// member lookup through anonymous members and bitfields, layouts by name.
#include <bpf/btf.h>
#include <linux/btf.h>

#include "test.h"
#include "types/btf.h"
#include "lang/typename.h"
#include "types/btf_load.h"
#include "types/layout.h"
#include "types/types.h"
#include "core/kernel.h"
#include "../gen/mkbtf.h"

static char *type_name_of(struct kp_kernel *k, const char *type)
{
	uint32_t id = 0;
	struct btf *btf;
	char *name = NULL;
	btf = mkk_btf(k);
	struct kp_error *err = kp_parse_type(mkk_types(k), type, &id);
	if (err) {
		FAILF("kp_parse_type(%s): %s", type, err->message);
		kp_error_destroy(err);
		return strdup("?");
	}
	CHECK_OK(kp_btf_type_name(btf, id, &name));
	return name ? name : strdup("?");
}

TEST(load_from_file)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_FILE, NULL, 0);
	CHECK_OK(kp_kernel_load_btf(k));
	struct btf *btf = mkk_btf(k);
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(k, &info);
	CHECK_STR(info.btf_source, mkk_btf_path(k));
	CHECK(btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT) > 0);
	mkk_destroy(k);
}

TEST(load_from_memory)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_MEMORY, NULL, 0);
	CHECK_OK(kp_kernel_load_btf(k));
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(k, &info);
	CHECK(info.btf_source && strncmp(info.btf_source, ".BTF in memory (0xffffffff82010000, ",
					 36) == 0);
	uint64_t size;
	CHECK_OK(kp_type_size(k, "struct task_struct", &size));
	CHECK_U64(size, MKBTF_TASK_SIZE);
	mkk_destroy(k);
}

TEST(no_btf_symbols)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_NONE, NULL, 0);
	CHECK_ERR(kp_kernel_load_btf(k), KP_ERR_NOT_FOUND,
		  "no BTF: no symbols __start_BTF/__stop_BTF, and no BTF header in the kernel "
		  "image at 0xffffffff80000000-0xffffffffc0000000; pass --btf FILE");
	// The failure is remembered, and each call returns its own copy.
	CHECK_ERR(kp_kernel_load_btf(k), KP_ERR_NOT_FOUND, "__start_BTF");
	struct kp_value *v;
	CHECK_ERR(kp_eval(k, "1", &v), KP_ERR_NOT_FOUND, "no BTF");
	mkk_destroy(k);
}

// Kernels whose kallsyms lack data symbols (6.1 arm64) still carry .BTF:
// it is found by its header in the kernel image.
TEST(load_by_header_scan)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_UNNAMED, NULL, 0);
	CHECK_OK(kp_kernel_load_btf(k));
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(k, &info);
	CHECK(info.btf_source && strstr(info.btf_source, "0xffffffff82010000"));
	uint64_t size;
	CHECK_OK(kp_type_size(k, "struct task_struct", &size));
	CHECK_U64(size, MKBTF_TASK_SIZE);
	mkk_destroy(k);
}

// A stale copy with a damaged string section before the real .BTF (6.1
// x86-64's freed text/rodata gap): the scan goes on to the next header,
// and reports the first one's error if none parses.
TEST(header_scan_skips_bad_copies)
{
	size_t size;
	uint8_t *one = mkbtf_build(&size);
	size_t at = (size + 7) & ~(size_t)7;
	uint8_t *two = calloc(1, at + size);
	memcpy(two, one, size);
	two[size - 1] = 'x';		// the stale copy: strings not terminated
	memcpy(two + at, one, size);
	struct kp_kernel *k = mkk_create(MKK_BTF_UNNAMED, two, at + size);
	CHECK_OK(kp_kernel_load_btf(k));
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(k, &info);
	char want[32];
	snprintf(want, sizeof(want), "0x%llx", 0xffffffff82010000ULL + at);
	CHECK(info.btf_source && strstr(info.btf_source, want));
	mkk_destroy(k);
	memcpy(two + at, two, size);	// both stale
	k = mkk_create(MKK_BTF_UNNAMED, two, at + size);
	CHECK_ERR(kp_kernel_load_btf(k), KP_ERR_FORMAT,
		  ".BTF in memory at 0xffffffff82010000: bad BTF string section");
	mkk_destroy(k);
	free(two);
	// Twelve stale copies before the real one (a 6.1-l5 boot had more
	// than the eight the scan once tried): still found.
	enum { STALE = 12 };
	uint8_t *many = calloc(STALE + 1, at);
	for (int i = 0; i <= STALE; i++) {
		memcpy(many + i * at, one, size);
		if (i < STALE)
			many[i * at + size - 1] = 'x';
	}
	k = mkk_create(MKK_BTF_UNNAMED, many, STALE * at + size);
	CHECK_OK(kp_kernel_load_btf(k));
	kp_kernel_get_info(k, &info);
	snprintf(want, sizeof(want), "0x%llx", 0xffffffff82010000ULL + STALE * at);
	CHECK(info.btf_source && strstr(info.btf_source, want));
	mkk_destroy(k);
	free(many);
	free(one);
}

TEST(btf_memory_absent)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_NONE, NULL, 0);
	mkk_symbol(k, "__start_BTF", 0xffffffff90000000ULL, 'R');
	mkk_symbol(k, "__stop_BTF", 0xffffffff90001000ULL, 'R');
	CHECK_ERR(kp_kernel_load_btf(k), KP_ERR_FAULT, "reading .BTF at 0xffffffff90000000");
	mkk_destroy(k);
	k = mkk_create(MKK_BTF_NONE, NULL, 0);
	mkk_symbol(k, "__start_BTF", 0xffffffff90000000ULL, 'R');
	mkk_symbol(k, "__stop_BTF", 0xffffffff80000000ULL, 'R');
	CHECK_ERR(kp_kernel_load_btf(k), KP_ERR_FORMAT, "bad .BTF bounds");
	mkk_destroy(k);
}

static void corrupt_case(size_t off, const void *bytes, size_t n, const char *want)
{
	size_t size;
	uint8_t *blob = mkbtf_build(&size);
	memcpy(blob + off, bytes, n);
	CHECK_ERR(kp_btf_validate(blob, size, "test"), KP_ERR_FORMAT, want);
	// Through both loaders too.
	struct kp_kernel *k = mkk_create(MKK_BTF_MEMORY, blob, size);
	CHECK_ERR(kp_kernel_load_btf(k), KP_ERR_FORMAT, want);
	mkk_destroy(k);
	k = mkk_create(MKK_BTF_FILE, blob, size);
	CHECK_ERR(kp_kernel_load_btf(k), KP_ERR_FORMAT, want);
	mkk_destroy(k);
	free(blob);
}

TEST(corrupt_headers)
{
	uint16_t magic = 0x1234;
	corrupt_case(0, &magic, 2, "bad BTF magic 0x1234 at offset 0 (expected 0xeb9f)");
	// The magic byte-swapped: BTF of a big-endian machine.
	size_t bsize;
	uint8_t *bblob = mkbtf_build(&bsize);
	magic = 0x9feb;
	memcpy(bblob, &magic, 2);
	CHECK_ERR(kp_btf_validate(bblob, bsize, "be"), KP_ERR_UNSUPPORTED,
		  "be: big-endian BTF (magic 0x9feb at offset 0) is not supported");
	free(bblob);
	uint8_t version = 2;
	corrupt_case(2, &version, 1, "unsupported BTF version 2");
	uint32_t v = 8;
	corrupt_case(4, &v, 4, "bad BTF header length 8");
	v = 0x7fffffff;
	corrupt_case(4, &v, 4, "bad BTF header length 2147483647");
	v = 0x7ffffff0;
	corrupt_case(8, &v, 4, "type section [2147483632");	// type_off
	v = 0x7fffffff;
	corrupt_case(12, &v, 4, "runs past the end");		// type_len
	corrupt_case(16, &v, 4, "string section [2147483647");	// str_off
	corrupt_case(20, &v, 4, "string section");		// str_len
	v = 0xffffffff;
	corrupt_case(12, &v, 4, "runs past the end");		// 32-bit overflow
	v = 2;
	corrupt_case(8, &v, 4, "not 4-byte aligned");
	CHECK_ERR(kp_btf_validate("\x9f\xeb", 2, "tiny"), KP_ERR_FORMAT,
		  "tiny: truncated BTF: 2 bytes, the header needs 24");
	// Strings that are not NUL-terminated at the end of the section.
	size_t size;
	uint8_t *blob = mkbtf_build(&size);
	blob[size - 1] = 'x';
	CHECK_ERR(kp_btf_validate(blob, size, "t"), KP_ERR_FORMAT, "bad BTF string section");
	free(blob);
	// Not BTF at all: a text file.
	struct kp_kernel *k = mkk_create(MKK_BTF_FILE, "hello, world, this is not BTF", 30);
	CHECK_ERR(kp_kernel_load_btf(k), KP_ERR_FORMAT, "bad BTF magic");
	mkk_destroy(k);
}

TEST(missing_btf_file)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_PATH, "/nonexistent/btf", 0);
	struct kp_error *err = kp_kernel_load_btf(k);
	CHECK(err && strstr(err->message, "/nonexistent/btf"));
	kp_error_destroy(err);
	mkk_destroy(k);
}

TEST(truncated_types_rejected)
{
	// Type section claims more bytes than the types hold: libbpf must refuse
	// it after our header checks pass (or our checks catch it).
	size_t size;
	uint8_t *blob = mkbtf_build(&size);
	struct btf_header *h = (struct btf_header *)blob;
	h->type_len -= 6;	// cuts the last type in half
	struct kp_kernel *k = mkk_create(MKK_BTF_MEMORY, blob, size);
	CHECK_ERR(kp_kernel_load_btf(k), KP_ERR_FORMAT, ".BTF in memory");
	mkk_destroy(k);
	free(blob);
}

TEST(type_names)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_FILE, NULL, 0);
	char *s;
	CHECK_STR(s = type_name_of(k, "struct task_struct *"), "struct task_struct *");
	free(s);
	CHECK_STR(s = type_name_of(k, "char[16]"), "char [16]");
	free(s);
	CHECK_STR(s = type_name_of(k, "unsigned long[3]"), "unsigned long [3]");
	free(s);
	CHECK_STR(s = type_name_of(k, "long unsigned int"), "unsigned long");
	free(s);
	CHECK_STR(s = type_name_of(k, "unsigned long long"), "unsigned long long");
	free(s);
	CHECK_STR(s = type_name_of(k, "u64 **"), "u64 **");
	free(s);
	CHECK_STR(s = type_name_of(k, "void *[]"), "void *[]");
	free(s);
	CHECK_STR(s = type_name_of(k, "const char *"), "const char *");
	free(s);
	CHECK_STR(s = type_name_of(k, "char const * const"), "const char *const");
	free(s);
	CHECK_STR(s = type_name_of(k, "struct list_head[2][3]"), "struct list_head [2][3]");
	free(s);
	CHECK_STR(s = type_name_of(k, "pgd_t[512]"), "pgd_t [512]");
	free(s);
	CHECK_STR(s = type_name_of(k, "enum task_state"), "enum task_state");
	free(s);
	CHECK_STR(s = type_name_of(k, "enum big_enum"), "enum big_enum");
	free(s);

	// Pointers to arrays and functions need parentheses.
	struct btf *btf;
	btf = mkk_btf(k);
	uint32_t arr, parr, fn;
	CHECK_OK(kp_parse_type(mkk_types(k), "char[16]", &arr));
	CHECK_OK(kp_types_pointer_to(mkk_types(k), arr, &parr));
	CHECK_OK(kp_btf_type_name(btf, parr, &s));
	CHECK_STR(s, "char (*)[16]");
	free(s);
	CHECK_OK(kp_types_find(mkk_types(k), BTF_KIND_FUNC, "do_thing", &fn));
	CHECK_OK(kp_btf_type_name(btf, fn, &s));
	CHECK_STR(s, "int (int)");
	free(s);
	CHECK_OK(kp_btf_decl_name(btf, parr, "p", &s));
	CHECK_STR(s, "char (*p)[16]");
	free(s);
	uint32_t task;
	CHECK_OK(kp_parse_type(mkk_types(k), "struct task_struct", &task));
	struct kp_btf_member m;
	CHECK_OK(kp_btf_member(btf, task, "fn", 2, &m));
	CHECK_OK(kp_btf_type_name(btf, m.type, &s));
	CHECK_STR(s, "int (*)(int)");
	free(s);
	uint32_t unk;
	CHECK_OK(kp_types_unknown_func(mkk_types(k), &unk));
	CHECK_OK(kp_btf_type_name(btf, unk, &s));
	CHECK_STR(s, "void (...)");
	free(s);
	// Synthesized types are cached.
	uint32_t again;
	CHECK_OK(kp_types_pointer_to(mkk_types(k), arr, &again));
	CHECK_U64(again, parr);
	mkk_destroy(k);
}

TEST(type_parse_errors)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_FILE, NULL, 0);
	uint32_t id;
	CHECK_ERR(kp_parse_type(mkk_types(k), "struct nosuch", &id), KP_ERR_NOT_FOUND,
		  "struct nosuch not found in BTF");
	CHECK_ERR(kp_parse_type(mkk_types(k), "nosuch_t *", &id), KP_ERR_NOT_FOUND,
		  "unknown type name 'nosuch_t'");
	CHECK_ERR(kp_parse_type(mkk_types(k), "short", &id), KP_ERR_NOT_FOUND, "type 'short' not found");
	CHECK_ERR(kp_parse_type(mkk_types(k), "char char", &id), KP_ERR_SYNTAX, "bad combination");
	CHECK_ERR(kp_parse_type(mkk_types(k), "int [3", &id), KP_ERR_SYNTAX, "column 7: expected ']'");
	CHECK_ERR(kp_parse_type(mkk_types(k), "int x", &id), KP_ERR_SYNTAX, "column 5");
	CHECK_ERR(kp_parse_type(mkk_types(k), "", &id), KP_ERR_SYNTAX, "expected a type name");
	mkk_destroy(k);
}

TEST(members_through_anonymous_and_bitfields)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_FILE, NULL, 0);
	uint64_t off, size;
	CHECK_OK(kp_member_offset(k, "struct task_struct", "a_uint", &off, &size));
	CHECK_U64(off, 4);
	CHECK_U64(size, 4);
	CHECK_OK(kp_member_offset(k, "struct task_struct", "y", &off, &size));
	CHECK_U64(off, 84);
	CHECK_OK(kp_member_offset(k, "struct task_struct", "tasks.prev", &off, &size));
	CHECK_U64(off, 16);
	CHECK_U64(size, 8);
	CHECK_OK(kp_member_offset(k, "struct task_struct", "comm[3]", &off, &size));
	CHECK_U64(off, 35);
	CHECK_U64(size, 1);
	CHECK_OK(kp_member_offset(k, "struct task_struct", "comm", &off, &size));
	CHECK_U64(size, 16);
	CHECK_OK(kp_member_offset(k, "struct task_struct", "utime", &off, &size));
	CHECK_U64(off, 72);
	CHECK_U64(size, 8);	// through typedef u64 -> __u64 -> unsigned long long
	CHECK_OK(kp_member_offset(k, "pgd_t", "pgd", &off, &size));
	CHECK_U64(off, 0);
	CHECK_U64(size, 8);
	// Repeated calls hit the cache and give the same answer.
	for (int i = 0; i < 3; i++) {
		CHECK_OK(kp_member_offset(k, "struct task_struct", "tasks.prev", &off, &size));
		CHECK_U64(off, 16);
	}

	struct btf *btf;
	btf = mkk_btf(k);
	uint32_t task;
	CHECK_OK(kp_parse_type(mkk_types(k), "struct task_struct", &task));
	struct kp_btf_member m;
	CHECK_OK(kp_btf_member(btf, task, "flag_b", 6, &m));
	CHECK_U64(m.bit_offset, 385);
	CHECK_U64(m.bit_size, 3);
	CHECK_OK(kp_btf_member(btf, task, "neg", 3, &m));
	CHECK_U64(m.bit_offset, 388);
	CHECK_U64(m.bit_size, 4);
	CHECK(kp_btf_is_signed(btf, m.type));
	CHECK_OK(kp_btf_member(btf, task, "pid", 3, &m));
	CHECK_U64(m.bit_size, 0);
	CHECK(kp_btf_kind(btf, m.type) == BTF_KIND_INT);	// pid_t stripped

	CHECK_ERR(kp_member_offset(k, "struct task_struct", "com", &off, &size), KP_ERR_TYPE,
		  "struct task_struct has no member 'com' (did you mean: comm?)");
	CHECK_ERR(kp_member_offset(k, "struct task_struct", "flagb", &off, &size), KP_ERR_TYPE,
		  "did you mean: flag_b");
	CHECK_ERR(kp_member_offset(k, "struct task_struct", "pid.x", &off, &size), KP_ERR_TYPE,
		  "non-struct");
	CHECK_ERR(kp_member_offset(k, "struct task_struct", "pid[0]", &off, &size), KP_ERR_TYPE,
		  "not an array");
	CHECK_ERR(kp_member_offset(k, "struct task_struct", "comm[", &off, &size), KP_ERR_SYNTAX,
		  "bad index");
	CHECK_ERR(kp_member_offset(k, "struct task_struct", "", &off, &size), KP_ERR_INVALID,
		  "empty member");
	CHECK_ERR(kp_member_offset(k, "struct nosuch", "x", &off, &size), KP_ERR_NOT_FOUND,
		  "struct nosuch");
	mkk_destroy(k);
}

// The walkers' member tables (types/layout.h): alternatives, optional
// members and structs, bitfields, the span, and the cache.
TEST(member_tables)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_FILE, NULL, 0);
	struct kp_types *t = mkk_types(k);
	enum { M_STATE, M_PREV, M_COMM3, M_FLAG_B, M_NEG, M_GONE, M_N };
	static const struct kp_member_spec members[M_N] = {
		[M_STATE] = { .name = "no_such_state|a_uint" },	// the second one is there
		[M_PREV] = { .name = "tasks.prev", .flags = KP_MEMBER_NOSPAN },
		[M_COMM3] = { .name = "comm[3]" },
		[M_FLAG_B] = { .name = "flag_b" },
		[M_NEG] = { .name = "neg" },
		[M_GONE] = { .name = "not_here", .flags = KP_MEMBER_OPTIONAL },
	};
	static const struct kp_struct_spec spec = KP_STRUCT_SPEC("struct task_struct", members);
	const struct kp_struct_layout *l, *again;
	CHECK_OK(kp_types_struct_layout(t, &spec, &l));
	CHECK(l->present);
	CHECK_U64(l->m[M_STATE].offset, 4);
	CHECK_U64(l->m[M_STATE].alt, 1);
	CHECK_U64(l->m[M_PREV].offset, 16);
	CHECK_U64(l->m[M_COMM3].offset, 35);
	CHECK_U64(l->m[M_FLAG_B].offset, 48);	// bit 385
	CHECK_U64(l->m[M_FLAG_B].bit_offset, 1);
	CHECK_U64(l->m[M_FLAG_B].bit_size, 3);
	CHECK(!kp_layout_has(l, M_GONE));
	// The span leaves tasks.prev out (NOSPAN): a_uint (4) to neg's byte.
	CHECK_U64(l->lo, 4);
	CHECK_U64(l->hi, 49);
	// Values from a copy of the span: bitfields shifted and masked,
	// signed ones extended.
	uint8_t buf[64] = { 0 };
	buf[0] = 0x2a;			// a_uint = 42
	buf[48 - 4] = (uint8_t)(5u << 1 | 0xfu << 4);	// flag_b = 5, neg = -1
	CHECK_U64(kp_layout_u64(l, buf, M_STATE), 42);
	CHECK_U64(kp_layout_u64(l, buf, M_FLAG_B), 5);
	CHECK(kp_layout_s64(l, buf, M_NEG) == -1);
	CHECK_U64(kp_layout_u64(l, buf, M_GONE), 0);
	CHECK_OK(kp_types_struct_layout(t, &spec, &again));
	CHECK(again == l);	// cached by the spec
	// A required member the kernel lacks names the struct and member.
	static const struct kp_member_spec bad_members[] = { { .name = "no_such|nor_this" } };
	static const struct kp_struct_spec bad = KP_STRUCT_SPEC("struct task_struct", bad_members);
	CHECK_ERR(kp_types_struct_layout(t, &bad, &l), KP_ERR_TYPE,
		  "struct task_struct has none of the members no_such|nor_this");
	static const struct kp_member_spec one[] = { { .name = "x" } };
	static const struct kp_struct_spec none = KP_STRUCT_SPEC("struct nosuch", one);
	static const struct kp_struct_spec none_opt = KP_STRUCT_SPEC_OPTIONAL("struct nosuch", one);
	CHECK_ERR(kp_types_struct_layout(t, &none, &l), KP_ERR_NOT_FOUND, "struct nosuch");
	CHECK_OK(kp_types_struct_layout(t, &none_opt, &l));
	CHECK(!l->present && !kp_layout_has(l, 0));
	mkk_destroy(k);
}

TEST(type_sizes)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_FILE, NULL, 0);
	uint64_t size;
	CHECK_OK(kp_type_size(k, "struct list_head", &size));
	CHECK_U64(size, 16);
	CHECK_OK(kp_type_size(k, "u64", &size));
	CHECK_U64(size, 8);
	CHECK_OK(kp_type_size(k, "unsigned long[3]", &size));
	CHECK_U64(size, 24);
	CHECK_OK(kp_type_size(k, "struct task_struct *", &size));
	CHECK_U64(size, 8);
	CHECK_ERR(kp_type_size(k, "void", &size), KP_ERR_TYPE, "no size");
	mkk_destroy(k);
}

TEST(vars_and_int_names)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_FILE, NULL, 0);
	uint32_t type;
	bool percpu;
	CHECK(kp_types_var(mkk_types(k), "global_counter", &type, &percpu));
	CHECK(!percpu);
	CHECK(kp_types_var(mkk_types(k), "runqueue_cnt", &type, &percpu));
	CHECK(percpu);
	CHECK(!kp_types_var(mkk_types(k), "init_task", &type, &percpu));
	char buf[32];
	CHECK(kp_btf_int_cname("long unsigned int", buf, sizeof(buf)));
	CHECK_STR(buf, "unsigned long");
	CHECK(kp_btf_int_cname("short int", buf, sizeof(buf)));
	CHECK_STR(buf, "short");
	CHECK(kp_btf_int_cname("signed char", buf, sizeof(buf)));
	CHECK_STR(buf, "signed char");
	CHECK(kp_btf_int_cname("long long int", buf, sizeof(buf)));
	CHECK_STR(buf, "long long");
	CHECK(kp_btf_int_cname("unsigned", buf, sizeof(buf)));
	CHECK_STR(buf, "unsigned int");
	CHECK(!kp_btf_int_cname("long long long", buf, sizeof(buf)));
	CHECK(!kp_btf_int_cname("u64", buf, sizeof(buf)));
	uint32_t id;
	CHECK_OK(kp_types_int_type(mkk_types(k), 8, false, &id));
	struct btf *btf;
	btf = mkk_btf(k);
	char *s;
	CHECK_OK(kp_btf_type_name(btf, id, &s));
	CHECK_STR(s, "unsigned long");
	free(s);
	mkk_destroy(k);
}

// Module BTF: split BTF over the kernel's, appended to the working BTF with
// its own ids renumbered (the working BTF already has a synthesized type),
// its references to the kernel's types kept; looked for only on a miss,
// once, and never by a kernel-only lookup.
static struct btf *split_base(void)
{
	struct btf *b = btf__new_empty();
	CHECK(b && btf__add_int(b, "int", 4, BTF_INT_SIGNED) == 1);	// 1
	CHECK(btf__add_struct(b, "kern_s", 4) == 2);			// 2
	CHECK(btf__add_field(b, "a", 1, 0, 0) == 0);
	return b;
}

static int more_calls;
static const void *more_raw;
static uint32_t more_size;

static bool more_split(void *ctx, struct kp_types *t)
{
	(void)ctx;
	more_calls++;
	size_t added = 0;
	CHECK_OK(kp_types_add_split(t, more_raw, more_size, &added));
	CHECK_U64(added, 2);
	return added > 0;
}

TEST(module_split_btf)
{
	struct btf *base = split_base();
	struct btf *mod = btf__new_empty_split(base);
	CHECK(mod && btf__add_struct(mod, "mod_s", 24) == 3);		// 3
	CHECK(btf__add_field(mod, "x", 1, 0, 0) == 0);
	CHECK(btf__add_field(mod, "next", 4, 64, 0) == 0);
	CHECK(btf__add_field(mod, "s", 2, 128, 0) == 0);
	CHECK(btf__add_ptr(mod, 3) == 4);				// 4
	uint32_t size;
	const void *raw = btf__raw_data(mod, &size);
	CHECK(raw != NULL);

	uint32_t bsize;
	const void *braw = btf__raw_data(base, &bsize);
	struct kp_types *t;
	CHECK_OK(kp_types_create(btf__new(braw, bsize), "test", &t));
	uint32_t ptr, id;
	CHECK_OK(kp_types_pointer_to(t, 1, &ptr));			// 3 in the working BTF
	CHECK_U64(ptr, 3);
	more_raw = raw;
	more_size = size;
	more_calls = 0;
	kp_types_set_more(t, more_split, NULL);
	// The walkers' layouts are the kernel's own: they never load module BTF.
	static const struct kp_member_spec mod_members[] = { { .name = "x" } };
	static const struct kp_struct_spec mod_spec = KP_STRUCT_SPEC_OPTIONAL("struct mod_s", mod_members);
	const struct kp_struct_layout *ml;
	CHECK_OK(kp_types_struct_layout(t, &mod_spec, &ml));
	CHECK(!ml->present);
	CHECK(more_calls == 0);
	CHECK_OK(kp_parse_type(t, "struct mod_s", &id));
	CHECK(more_calls == 1);
	CHECK_U64(id, 4);
	struct btf *w = kp_types_btf(t);
	const struct btf_type *st = btf__type_by_id(w, id);
	CHECK(st && btf_is_struct(st) && btf_vlen(st) == 3);
	if (st && btf_vlen(st) == 3) {
		const struct btf_member *m = btf_members(st);
		CHECK_U64(m[0].type, 1);	// the kernel's int
		CHECK_U64(m[1].type, 5);	// the module's pointer, renumbered
		CHECK_U64(m[2].type, 2);	// the kernel's struct
		const struct btf_type *pt = btf__type_by_id(w, 5);
		CHECK(pt && btf_is_ptr(pt) && pt->type == 4);
	}
	// A miss after the modules are in looks no further.
	CHECK_ERR(kp_parse_type(t, "struct nowhere", &id), KP_ERR_NOT_FOUND, "nowhere");
	CHECK(more_calls == 1);
	// Garbage is an error, and adds nothing.
	size_t added = 0;
	uint8_t junk[64];
	memset(junk, 0x41, sizeof(junk));
	CHECK_ERR(kp_types_add_split(t, junk, sizeof(junk), &added), KP_ERR_FORMAT, "module BTF: bad BTF magic");
	CHECK_U64(added, 0);
	// A type naming an id past the module's last.
	struct btf *bad = btf__new_empty_split(base);
	CHECK(bad && btf__add_ptr(bad, 9) == 3);
	raw = btf__raw_data(bad, &size);
	uint32_t before = btf__type_cnt(kp_types_btf(t));
	CHECK_ERR(kp_types_add_split(t, raw, size, &added), KP_ERR_FORMAT, "type [3] at offset 0x18: referenced type id out of range (9)");
	CHECK_U64(added, 0);
	CHECK_U64(btf__type_cnt(kp_types_btf(t)), before);
	btf__free(bad);
	kp_types_destroy(t);
	btf__free(mod);
	btf__free(base);
}

int main(void)
{
	RUN(load_from_file);
	RUN(load_from_memory);
	RUN(no_btf_symbols);
	RUN(load_by_header_scan);
	RUN(header_scan_skips_bad_copies);
	RUN(btf_memory_absent);
	RUN(corrupt_headers);
	RUN(missing_btf_file);
	RUN(truncated_types_rejected);
	RUN(type_names);
	RUN(type_parse_errors);
	RUN(members_through_anonymous_and_bitfields);
	RUN(member_tables);
	RUN(type_sizes);
	RUN(vars_and_int_names);
	RUN(module_split_btf);
	return TEST_SUMMARY();
}
