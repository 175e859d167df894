// SPDX-License-Identifier: MIT
// Typed values: formatting of every kind (text, one-line, hex, JSON, no
// symbols), scalars, addresses, sizes, reread, faults, and formatting over
// corrupted BTF (must never crash).
#include <bpf/btf.h>
#include <linux/btf.h>

#include "test.h"
#include "types/btf.h"
#include "core/kernel.h"
#include "lang/value.h"
#include "types/types.h"
#include "../gen/mkbtf.h"

// Evaluates expr in k and formats it with flags; "ERR: message" on failure.
static char *fmt(struct kp_kernel *k, const char *expr, unsigned flags)
{
	struct kp_value *v;
	char *s = NULL;
	struct kp_error *err = kp_eval(k, expr, &v);
	if (!err) {
		err = kp_value_format(v, flags, &s);
		kp_value_destroy(v);
	}
	if (err) {
		if (asprintf(&s, "ERR: %s", err->message) < 0)
			s = NULL;
		kp_error_destroy(err);
	}
	return s ? s : strdup("(null)");
}

#define CHECK_FMT(k, expr, flags, want)                                        \
	do {                                                                   \
		char *s_ = fmt(k, expr, flags);                                \
		CHECK_STR(s_, want);                                           \
		free(s_);                                                      \
	} while (0)

static const char task_text[] =
	"(struct task_struct){\n"
	"\t.__state = (unsigned int)1,\n"
	"\t(union <anonymous>){\n"
	"\t\t.a_int = (int)-2,\n"
	"\t\t.a_uint = (unsigned int)4294967294,\n"
	"\t},\n"
	"\t.tasks = (struct list_head){\n"
	"\t\t.next = (struct list_head *)0xffffffff82002008 <other_task+0x8>,\n"
	"\t\t.prev = (struct list_head *)0xffffffff82002008 <other_task+0x8>,\n"
	"\t},\n"
	"\t.pid = (pid_t)0,\n"
	"\t.tgid = (pid_t)0,\n"
	"\t.comm = (char [16])\"swapper/0\",\n"
	"\t.flag_a = (unsigned int)1,\n"
	"\t.flag_b = (unsigned int)5,\n"
	"\t.neg = (int)-3,\n"
	"\t.parent = (struct task_struct *)0xffffffff82001000 <init_task>,\n"
	"\t.state = (enum task_state)TASK_DEAD,\n"
	"\t.on_cpu = (_Bool)true,\n"
	"\t.utime = (u64)1234567,\n"
	"\t(struct <anonymous>){\n"
	"\t\t.x = (int)7,\n"
	"\t\t.y = (int)-8,\n"
	"\t},\n"
	"\t.fn = (int (*)(int))0xffffffff81000100 <do_thing>,\n"
	"\t.name = (const char *)0xffffffff82003100 = \"Linux version 6.1.0-test\\n\",\n"
	"}";

TEST(struct_text)
{
	struct kp_kernel *k = mkk_scene();
	CHECK_FMT(k, "init_task", 0, task_text);
	CHECK_FMT(k, "init_task.tasks", KP_FORMAT_ONE_LINE,
		  "(struct list_head){ .next = (struct list_head *)0xffffffff82002008 "
		  "<other_task+0x8>, .prev = (struct list_head *)0xffffffff82002008 "
		  "<other_task+0x8> }");
	CHECK_FMT(k, "init_task.tasks", KP_FORMAT_ONE_LINE | KP_FORMAT_NO_SYMBOLS,
		  "(struct list_head){ .next = (struct list_head *)0xffffffff82002008, "
		  ".prev = (struct list_head *)0xffffffff82002008 }");
	// An all-zero struct still lists its members.
	CHECK_FMT(k, "*(struct list_head *)(0xffffffff82000000 + 0x800)", KP_FORMAT_ONE_LINE,
		  "(struct list_head){ .next = (struct list_head *)0x0, "
		  ".prev = (struct list_head *)0x0 }");
	mkk_destroy(k);
}

TEST(scalars_text)
{
	struct kp_kernel *k = mkk_scene();
	CHECK_FMT(k, "jiffies", 0, "(unsigned long)4294967301");
	CHECK_FMT(k, "jiffies", KP_FORMAT_HEX, "(unsigned long)0x100000005");
	CHECK_FMT(k, "global_counter", 0, "(long)-5");
	CHECK_FMT(k, "global_counter", KP_FORMAT_HEX, "(long)-0x5");
	CHECK_FMT(k, "init_task.on_cpu", 0, "(_Bool)true");
	CHECK_FMT(k, "init_task.state", 0, "(enum task_state)TASK_DEAD");
	CHECK_FMT(k, "(enum task_state)5", 0, "(enum task_state)5");
	CHECK_FMT(k, "BIG_TWO", 0, "(enum big_enum)BIG_TWO");
	CHECK_FMT(k, "init_task.neg", 0, "(int)-3");
	CHECK_FMT(k, "init_task.flag_b", 0, "(unsigned int)5");
	CHECK_FMT(k, "init_task.comm[0]", 0, "(char)115");
	CHECK_FMT(k, "init_task.utime", 0, "(u64)1234567");
	CHECK_FMT(k, "(void *)0", 0, "(void *)0x0");
	mkk_destroy(k);
}

TEST(arrays_and_strings)
{
	struct kp_kernel *k = mkk_scene();
	CHECK_FMT(k, "init_task.comm", 0, "(char [16])\"swapper/0\"");
	CHECK_FMT(k, "avenrun", 0, "(unsigned long [3]){ 1, 2 }");	// trailing zero elided
	CHECK_FMT(k, "(unsigned long[2])avenrun", 0, "(unsigned long [2]){ 1, 2 }");
	CHECK_FMT(k, "*(unsigned long (*)[4])0xffffffff82000800", 0, "(unsigned long [4]){}");
	CHECK_FMT(k, "(unsigned long (*)[4])0xffffffff82000800", 0,
		  "(unsigned long (*)[4])0xffffffff82000800");
	CHECK_FMT(k, "(unsigned long [4])*(unsigned long *)0xffffffff82000800", 0,
		  "(unsigned long [4]){}");
	CHECK_FMT(k, "linux_banner", 0, "(char [64])\"Linux version 6.1.0-test\\n\"");
	CHECK_FMT(k, "(pgd_t[2])init_task", KP_FORMAT_ONE_LINE | KP_FORMAT_HEX,
		  "(pgd_t [2]){ { .pgd = (unsigned long)0xfffffffe00000001 }, "
		  "{ .pgd = (unsigned long)0xffffffff82002008 } }");
	CHECK_FMT(k, "(struct list_head[2])init_task.tasks", KP_FORMAT_NO_SYMBOLS,
		  "(struct list_head [2]){\n"
		  "\t{\n"
		  "\t\t.next = (struct list_head *)0xffffffff82002008,\n"
		  "\t\t.prev = (struct list_head *)0xffffffff82002008,\n"
		  "\t},\n"
		  "\t{\n"
		  "\t\t.next = (struct list_head *)0x0,\n"
		  "\t\t.prev = (struct list_head *)0x2f72657070617773,\n"	// "swapper/"
		  "\t},\n"
		  "}");
	// Escapes: quotes, backslashes and control bytes.
	mkk_put(k, MKK_BASE + 0x900, "a\"b\\c\001", 7);
	CHECK_FMT(k, "(char[8])*(char *)0xffffffff82000900", 0, "(char [8])\"a\\\"b\\\\c\\x01\"");
	mkk_destroy(k);
}

TEST(pointers_and_functions)
{
	struct kp_kernel *k = mkk_scene();
	CHECK_FMT(k, "&init_task", 0, "(struct task_struct *)0xffffffff82001000 <init_task>");
	CHECK_FMT(k, "&init_task", KP_FORMAT_NO_SYMBOLS, "(struct task_struct *)0xffffffff82001000");
	CHECK_FMT(k, "init_task.fn", 0, "(int (*)(int))0xffffffff81000100 <do_thing>");
	CHECK_FMT(k, "do_thing", 0, "(int (int))0xffffffff81000100 <do_thing>");
	CHECK_FMT(k, "schedule", 0, "(void (...))0xffffffff81000200 <schedule>");
	CHECK_FMT(k, "&schedule", 0, "(void (*)(...))0xffffffff81000200 <schedule>");
	CHECK_FMT(k, "init_task.name", 0,
		  "(const char *)0xffffffff82003100 = \"Linux version 6.1.0-test\\n\"");
	// A char pointer into nothing prints just the address.
	CHECK_FMT(k, "(char *)0xffffffff90000000", 0, "(char *)0xffffffff90000000");
	// Small numbers are not symbolized (per-CPU offsets, flags).
	CHECK_FMT(k, "(void *)0x20", 0, "(void *)0x20");
	mkk_destroy(k);
}

TEST(json)
{
	struct kp_kernel *k = mkk_scene();
	CHECK_FMT(k, "init_task", KP_FORMAT_JSON,
		  "{\"__state\": 1, \"a_int\": -2, \"a_uint\": 4294967294, \"tasks\": "
		  "{\"next\": \"0xffffffff82002008\", \"prev\": \"0xffffffff82002008\"}, "
		  "\"pid\": 0, \"tgid\": 0, \"comm\": \"swapper/0\", \"flag_a\": 1, \"flag_b\": 5, "
		  "\"neg\": -3, \"parent\": \"0xffffffff82001000\", \"state\": \"TASK_DEAD\", "
		  "\"on_cpu\": true, \"utime\": 1234567, \"x\": 7, \"y\": -8, "
		  "\"fn\": \"0xffffffff81000100\", \"name\": \"0xffffffff82003100\"}");
	CHECK_FMT(k, "avenrun", KP_FORMAT_JSON, "[1, 2, 0]");
	CHECK_FMT(k, "jiffies", KP_FORMAT_JSON, "4294967301");
	CHECK_FMT(k, "*(unsigned long *)&mystery", KP_FORMAT_JSON, "\"0x1122334455667788\"");
	CHECK_FMT(k, "-(long)0x1122334455667788", KP_FORMAT_JSON, "\"-1234605616436508552\"");
	CHECK_FMT(k, "do_thing", KP_FORMAT_JSON, "\"0xffffffff81000100\"");
	CHECK_FMT(k, "linux_banner", KP_FORMAT_JSON, "\"Linux version 6.1.0-test\\n\"");
	mkk_put(k, MKK_BASE + 0x900, "\x80\x01", 3);
	CHECK_FMT(k, "(char[4])*(char *)0xffffffff82000900", KP_FORMAT_JSON, "\"\\u0080\\u0001\"");
	mkk_destroy(k);
}

// An output cap is visible: in text, a marker whose count and the elements
// shown are the array's length; in JSON, an array of integers only (a JSON
// parser reading it never meets a string) and the count beside it.
TEST(output_cap_is_shown)
{
	struct kp_kernel *k = mkk_scene();
	struct kp_types *types;
	CHECK_OK(kp_kernel_types(k, &types));
	uint32_t ulong, arr;
	CHECK_OK(kp_types_int_type(types, 8, false, &ulong));
	CHECK_OK(kp_types_array_of(types, ulong, 300000, &arr));
	size_t size = 300000 * 8;
	uint8_t *bytes = malloc(size);
	CHECK(bytes != NULL);
	memset(bytes, 0, size);
	for (size_t i = 0; i < size; i += 8)
		bytes[i] = 7;	// every element 7, little-endian
	struct kp_value *v;
	CHECK_OK(kp_value_rvalue(k, arr, bytes, size, &v));
	char *s = NULL;
	CHECK_OK(kp_value_format(v, KP_FORMAT_ONE_LINE, &s));
	const char *mark = strstr(s, "<");
	size_t shown = 0;
	for (const char *p = s; mark && p < mark; p++)
		shown += *p == '7';
	unsigned long left = 0;
	CHECK(mark && sscanf(mark + 1, "%lu more elements not shown: output limit>", &left) == 1);
	CHECK_U64(shown + left, 300000);
	CHECK(left > 0);
	free(s);

	KP_INIT(kp_format_cap, cap);
	CHECK_OK(kp_value_format_capped(v, KP_FORMAT_ONE_LINE | KP_FORMAT_JSON, &s, &cap));
	// [7, 7, ..., 7]: nothing but integers between the brackets.
	size_t n = strlen(s);
	CHECK(n > 2 && s[0] == '[' && s[n - 1] == ']');
	CHECK(strspn(s + 1, "7, ") == n - 2);
	shown = 0;
	for (const char *p = s; *p; p++)
		shown += *p == '7';
	CHECK(cap.truncated);
	CHECK_STR(cap.limit, "output");
	CHECK_U64(shown + cap.not_shown, 300000);
	CHECK(cap.not_shown > 0);
	free(s);
	// Not capped: nothing said.
	struct kp_value *one;
	CHECK_OK(kp_value_rvalue(k, ulong, bytes, 8, &one));
	CHECK_OK(kp_value_format_capped(one, KP_FORMAT_JSON, &s, &cap));
	CHECK_STR(s, "7");
	CHECK(!cap.truncated && cap.not_shown == 0 && cap.limit == NULL);
	free(s);
	kp_value_destroy(one);
	kp_value_destroy(v);
	free(bytes);
	mkk_destroy(k);
}

TEST(accessors)
{
	struct kp_kernel *k = mkk_scene();
	struct kp_value *v;
	uint64_t x;
	char *s;
	CHECK_OK(kp_eval(k, "init_task.pid", &v));
	CHECK_OK(kp_value_address(v, &x));
	CHECK_U64(x, MKK_INIT_TASK + 24);
	CHECK_U64(kp_value_size(v), 4);
	CHECK_OK(kp_value_to_u64(v, &x));
	CHECK_U64(x, 0);
	CHECK_OK(kp_value_type_name(v, &s));
	CHECK_STR(s, "pid_t");
	free(s);
	// reread sees new bytes without re-evaluating.
	mkk_put_u32(k, MKK_INIT_TASK + 24, 77);
	uint8_t buf[16];
	size_t len;
	CHECK_OK(kp_value_reread(v, buf, sizeof(buf), &len));
	CHECK_U64(len, 4);
	CHECK_U64(buf[0], 77);
	CHECK_OK(kp_value_reread(v, buf, 2, &len));
	CHECK_U64(len, 2);
	kp_value_destroy(v);

	CHECK_OK(kp_eval(k, "global_counter", &v));
	CHECK_OK(kp_value_to_u64(v, &x));
	CHECK_U64(x, (uint64_t)-5);
	kp_value_destroy(v);

	CHECK_OK(kp_eval(k, "init_task.neg", &v));
	CHECK_OK(kp_value_to_u64(v, &x));
	CHECK_U64(x, (uint64_t)-3);
	CHECK_ERR(kp_value_address(v, &x), KP_ERR_TYPE, "bitfield");
	CHECK_U64(kp_value_size(v), 1);
	kp_value_destroy(v);

	// A computed value has no memory to read again: watch evaluates it
	// again instead (a reread that copied the first result would never
	// change).
	CHECK_OK(kp_eval(k, "jiffies + 1", &v));
	CHECK_ERR(kp_value_address(v, &x), KP_ERR_TYPE, "not an lvalue");
	CHECK(!kp_value_is_lvalue(v));
	CHECK_ERR(kp_value_reread(v, buf, sizeof(buf), &len), KP_ERR_TYPE, "evaluate it again");
	kp_value_destroy(v);
	CHECK_OK(kp_eval(k, "jiffies", &v));
	CHECK(kp_value_is_lvalue(v));
	CHECK_OK(kp_value_reread(v, buf, sizeof(buf), &len));
	CHECK_U64(len, 8);
	CHECK_U64(buf[0], 5);
	kp_value_destroy(v);

	CHECK_OK(kp_eval(k, "init_task.comm", &v));
	CHECK_ERR(kp_value_to_u64(v, &x), KP_ERR_TYPE, "char [16] as an integer");
	kp_value_destroy(v);

	CHECK_OK(kp_eval(k, "do_thing", &v));
	CHECK_OK(kp_value_to_u64(v, &x));
	CHECK_U64(x, MKK_DO_THING);
	kp_value_destroy(v);

	CHECK_OK(kp_eval(k, "init_task.state", &v));
	CHECK_OK(kp_value_to_u64(v, &x));
	CHECK_U64(x, 64);
	kp_value_destroy(v);
	mkk_destroy(k);
}

TEST(faults)
{
	struct kp_kernel *k = mkk_scene();
	struct kp_value *v;
	char *s;
	uint64_t x;
	CHECK_OK(kp_eval(k, "*(struct task_struct *)0xffffffff90000000", &v));
	CHECK_ERR(kp_value_format(v, 0, &s), KP_ERR_FAULT, "0xffffffff90000000");
	CHECK_ERR(kp_value_to_u64(v, &x), KP_ERR_TYPE, "struct task_struct");
	uint8_t buf[8];
	size_t len;
	CHECK_ERR(kp_value_reread(v, buf, sizeof(buf), &len), KP_ERR_FAULT, "0xffffffff90000000");
	kp_value_destroy(v);
	// Half inside the segment, half outside: one read, one fault.
	CHECK_OK(kp_eval(k, "*(struct task_struct *)(0xffffffff82000000 + 0x20000 - 8)", &v));
	CHECK_ERR(kp_value_format(v, 0, &s), KP_ERR_FAULT, "0xffffffff82020000");
	kp_value_destroy(v);
	CHECK_OK(kp_eval(k, "runqueue_cnt", &v));
	CHECK_ERR(kp_value_format(v, 0, &s), KP_ERR_FAULT,
		  "runqueue_cnt is a per-CPU variable: use per_cpu(runqueue_cnt, CPU)");
	kp_value_destroy(v);
	CHECK_OK(kp_eval(k, "*(char (*)[1])0", &v));
	CHECK_ERR(kp_value_format(v, 0, &s), KP_ERR_FAULT, "0x0");
	kp_value_destroy(v);
	mkk_destroy(k);
}

// Random corruption of the type section must give errors or output, never a
// crash (run under ASan+UBSan too).
TEST(corrupt_btf_formatting)
{
	size_t size;
	uint8_t *good = mkbtf_build(&size);
	const struct btf_header *h = (const struct btf_header *)good;
	uint32_t types = h->hdr_len + h->type_off, ntypes = h->type_len;
	uint32_t seed = 12345;
	const char *exprs[] = {
		"init_task", "init_task.comm", "init_task.tasks.next->next", "avenrun",
		"&init_task", "init_task.fn", "sizeof(struct task_struct)", "init_task.flag_b",
		"(pgd_t[2])init_task", "global_counter", "TASK_DEAD", "init_task.name",
	};
	uint8_t *blob = malloc(size);
	for (int iter = 0; iter < 300; iter++) {
		memcpy(blob, good, size);
		for (int j = 0; j < 1 + iter % 4; j++) {
			seed = seed * 1103515245u + 12345u;
			uint32_t off = types + (seed >> 8) % ntypes;
			seed = seed * 1103515245u + 12345u;
			blob[off] = (uint8_t)(seed >> 16);
		}
		struct kp_kernel *k = mkk_scene_btf(blob, size);
		for (size_t e = 0; e < sizeof(exprs) / sizeof(exprs[0]); e++) {
			for (unsigned flags = 0; flags < 2; flags++) {
				char *s = fmt(k, exprs[e], flags ? KP_FORMAT_JSON : 0);
				free(s);
			}
		}
		uint64_t off, msize;
		kp_error_destroy(kp_member_offset(k, "struct task_struct", "y", &off, &msize));
		mkk_destroy(k);
	}
	free(blob);
	free(good);
}

TEST(hostile_btf)
{
	size_t size;
	void *blob = mkbtf_build_hostile(false, &size);
	struct kp_kernel *k = mkk_scene_btf(blob, size);
	free(blob);
	uint64_t off, msize;
	CHECK_ERR(kp_member_offset(k, "struct evil", "nosuch", &off, &msize), KP_ERR_TYPE,
		  "struct evil has no member 'nosuch'");
	CHECK_OK(kp_member_offset(k, "struct evil", "v", &off, &msize));
	char *s = fmt(k, "*(struct evil *)&init_task", 0);
	CHECK(strncmp(s, "(struct evil){", 14) == 0);
	free(s);
	s = fmt(k, "*(struct evil *)&init_task", KP_FORMAT_JSON);
	CHECK(s[0] == '{');
	free(s);
	s = fmt(k, "(evil_fn)0", 0);
	CHECK_STR(s, "(evil_fn)0x0");
	free(s);
	s = fmt(k, "*(evil_fn)0", 0);
	CHECK(strlen(s) < 70000 && strstr(s, "..."));
	free(s);
	s = fmt(k, "*(cyc_t)&init_task", 0);
	free(s);
	s = fmt(k, "(loop_t)1", 0);
	CHECK(strncmp(s, "ERR", 3) == 0);
	free(s);
	mkk_destroy(k);
	// References to types that do not exist: the whole BTF is refused at
	// load, naming the record, so no later lookup meets them.
	blob = mkbtf_build_hostile(true, &size);
	k = mkk_scene_btf(blob, size);
	free(blob);
	CHECK_ERR(kp_member_offset(k, "struct dangling", "bad", &off, &msize), KP_ERR_FORMAT,
		  "corrupt BTF: type [");
	CHECK_ERR(kp_member_offset(k, "struct dangling", "bad", &off, &msize), KP_ERR_FORMAT,
		  "member type id out of range (50000)");
	s = fmt(k, "((struct dangling *)&init_task)->bad", 0);
	CHECK(strstr(s, "ERR: BTF file") && strstr(s, "corrupt BTF"));
	free(s);
	mkk_destroy(k);
}

int main(void)
{
	RUN(struct_text);
	RUN(scalars_text);
	RUN(arrays_and_strings);
	RUN(pointers_and_functions);
	RUN(json);
	RUN(output_cap_is_shown);
	RUN(accessors);
	RUN(faults);
	RUN(corrupt_btf_formatting);
	RUN(hostile_btf);
	return TEST_SUMMARY();
}
