// SPDX-License-Identifier: MIT
// The expression language: precedence, integer conversions, pointer
// arithmetic, casts, member access, indexing, builtins, the symbol-type
// resolver, error messages, and limits on hostile input.
#include "test.h"
#include "lang/typename.h"
#include "types/btf_load.h"
#include "types/types.h"
#include "core/kernel.h"
#include "../gen/mkbtf.h"

static char *fmt(struct kp_kernel *k, const char *expr)
{
	struct kp_value *v;
	char *s = NULL;
	struct kp_error *err = kp_eval(k, expr, &v);
	if (!err) {
		err = kp_value_format(v, KP_FORMAT_ONE_LINE, &s);
		kp_value_destroy(v);
	}
	if (err) {
		if (asprintf(&s, "ERR %s: %s", kp_error_code_name(err->code), err->message) < 0)
			s = NULL;
		kp_error_destroy(err);
	}
	return s ? s : strdup("(null)");
}

#define CHECK_EXPR(k, expr, want)                                              \
	do {                                                                   \
		char *s_ = fmt(k, expr);                                       \
		CHECK_STR(s_, want);                                           \
		free(s_);                                                      \
	} while (0)

static uint64_t u64_of(struct kp_kernel *k, const char *expr)
{
	struct kp_value *v;
	uint64_t x = 0xdeadbeef;
	struct kp_error *err = kp_eval(k, expr, &v);
	if (!err) {
		err = kp_value_to_u64(v, &x);
		kp_value_destroy(v);
	}
	if (err) {
		FAILF("%s: %s", expr, err->message);
		kp_error_destroy(err);
	}
	return x;
}

TEST(arithmetic_and_precedence)
{
	struct kp_kernel *k = mkk_scene();
	CHECK_EXPR(k, "1 + 2 * 3", "(int)7");
	CHECK_EXPR(k, "(1 + 2) * 3", "(int)9");
	CHECK_EXPR(k, "1 + 2 * 3 << 1", "(int)14");
	CHECK_EXPR(k, "0x10 | 3 ^ 1 & 7", "(int)18");
	CHECK_EXPR(k, "10 - 4 - 3", "(int)3");
	CHECK_EXPR(k, "100 / 7 % 4", "(int)2");
	CHECK_EXPR(k, "-1 / 2", "(int)0");
	CHECK_EXPR(k, "-7 % 3", "(int)-1");
	CHECK_EXPR(k, "(unsigned int)-1 / 2", "(unsigned int)2147483647");
	CHECK_EXPR(k, "~0", "(int)-1");
	CHECK_EXPR(k, "~0u", "(unsigned int)4294967295");
	CHECK_EXPR(k, "-1 < 0", "(int)1");
	CHECK_EXPR(k, "-1 < 0u", "(int)0");	// C: converted to unsigned
	CHECK_EXPR(k, "1L << 40", "(long)1099511627776");
	// What C leaves undefined (doc/expressions.md), at each width: shift
	// counts out of range and division by zero are errors, signed overflow
	// wraps in two's complement.
	CHECK_EXPR(k, "1 << 40", "ERR INVALID: '<<' at column 3: shift count 40 is not less than "
		   "the width of its 32-bit left operand (int); cast it to a wider type first");
	CHECK_EXPR(k, "1u >> 32", "ERR INVALID: '>>' at column 4: shift count 32 is not less "
		   "than the width of its 32-bit left operand (unsigned int); cast it to a wider "
		   "type first");
	CHECK_EXPR(k, "1L << 64", "ERR INVALID: '<<' at column 4: shift count 64 is not less "
		   "than the width of its 64-bit left operand (long); cast it to a wider type first");
	CHECK_EXPR(k, "1UL >> 64u", "ERR INVALID: '>>' at column 5: shift count 64 is not less "
		   "than the width of its 64-bit left operand (unsigned long); cast it to a wider "
		   "type first");
	CHECK_EXPR(k, "(char)1 << 31", "(int)-2147483648");	// promoted to int, wraps
	CHECK_EXPR(k, "1 << -1", "ERR INVALID: '<<' at column 3: negative shift count -1");
	CHECK_EXPR(k, "1UL >> -1L", "ERR INVALID: '>>' at column 5: negative shift count -1");
	CHECK_EXPR(k, "1 << 0xffffffffu", "ERR INVALID: '<<' at column 3: shift count 4294967295 "
		   "is not less than the width of its 32-bit left operand (int); cast it to a "
		   "wider type first");
	CHECK_EXPR(k, "1L << 63", "(long)-9223372036854775808");
	CHECK_EXPR(k, "2147483647 + 1", "(int)-2147483648");
	CHECK_EXPR(k, "-2147483647 - 2", "(int)2147483647");
	CHECK_EXPR(k, "9223372036854775807L + 1", "(long)-9223372036854775808");
	CHECK_EXPR(k, "0x7fffffff * 2", "(int)-2");
	CHECK_EXPR(k, "(-2147483647 - 1) / -1", "(int)-2147483648");
	CHECK_EXPR(k, "(-2147483647 - 1) % -1", "(int)0");
	CHECK_EXPR(k, "(-9223372036854775807L - 1) / -1", "(long)-9223372036854775808");
	CHECK_EXPR(k, "-(-2147483647 - 1)", "(int)-2147483648");
	CHECK_EXPR(k, "1u / 0u", "ERR INVALID: '/' at column 4: division by zero");
	CHECK_EXPR(k, "1L % 0L", "ERR INVALID: '%' at column 4: remainder by zero");
	CHECK_EXPR(k, "1UL % 0", "ERR INVALID: '%' at column 5: remainder by zero");
	CHECK_EXPR(k, "(int)4294967297L", "(int)1");
	CHECK_EXPR(k, "(unsigned int)-1L", "(unsigned int)4294967295");
	CHECK_EXPR(k, "0xffffffffffffffff", "(unsigned long)18446744073709551615");
	CHECK_EXPR(k, "0x80000000", "(long)2147483648");
	CHECK_EXPR(k, "-8 >> 1", "(int)-4");
	CHECK_EXPR(k, "1 == 1 && 2 != 2 || 3 >= 3", "(int)1");
	CHECK_EXPR(k, "!5", "(int)0");
	CHECK_EXPR(k, "1 <= 0 || 0 > 1", "(int)0");
	CHECK_EXPR(k, "jiffies + 1", "(unsigned long)4294967302");
	CHECK_EXPR(k, "jiffies > 5 || 1 / 0", "(int)1");	// short-circuit
	CHECK_EXPR(k, "0 && 1 / 0", "(int)0");
	CHECK_EXPR(k, "avenrun[1] + avenrun[0] * 3", "(unsigned long)5");
	CHECK_EXPR(k, "init_task.neg * 2", "(int)-6");
	CHECK_EXPR(k, "init_task.flag_b + init_task.flag_a", "(int)6");
	CHECK_EXPR(k, "init_task.state == TASK_DEAD", "(int)1");
	CHECK_EXPR(k, "  12 ", "(int)12");
	CHECK_EXPR(k, "10UL", "(unsigned long)10");
	mkk_destroy(k);
}

TEST(pointers)
{
	struct kp_kernel *k = mkk_scene();
	CHECK_EXPR(k, "&init_task + 1", "(struct task_struct *)0xffffffff82001068 <init_task+0x68>");
	CHECK_EXPR(k, "1 + &init_task", "(struct task_struct *)0xffffffff82001068 <init_task+0x68>");
	CHECK_EXPR(k, "(char *)&init_task + 1 - 1", "(char *)0xffffffff82001000 = \"\\x01\"");
	CHECK_EXPR(k, "&avenrun[2] - &avenrun[0]", "(long)2");
	CHECK_EXPR(k, "&avenrun[1]", "(unsigned long *)0xffffffff82003018 <avenrun+0x8>");
	CHECK_EXPR(k, "*(avenrun + 1)", "(unsigned long)2");
	CHECK_EXPR(k, "(void *)&jiffies + 8", "(void *)0xffffffff82003008 <jiffies+0x8>");
	CHECK_EXPR(k, "&init_task == init_task.parent", "(int)1");
	CHECK_EXPR(k, "init_task.parent != 0", "(int)1");
	CHECK_EXPR(k, "!init_task.parent", "(int)0");
	CHECK_EXPR(k, "&init_task.tasks", "(struct list_head *)0xffffffff82001008 <init_task+0x8>");
	CHECK_EXPR(k, "*&init_task.pid", "(pid_t)0");
	CHECK_EXPR(k, "init_task.tasks.next->next->next",
		   "(struct list_head *)0xffffffff82002008 <other_task+0x8>");
	CHECK_EXPR(k, "(*init_task.tasks.next).prev",
		   "(struct list_head *)0xffffffff82001008 <init_task+0x8>");
	CHECK_EXPR(k, "init_task.parent->parent->comm", "(char [16])\"swapper/0\"");
	CHECK_EXPR(k, "init_task.parent[0].pid", "(pid_t)0");
	CHECK_EXPR(k, "init_task.comm[1]", "(char)119");
	CHECK_EXPR(k, "*init_task.comm", "(char)115");
	CHECK_EXPR(k, "init_task.name[6]", "(const char)118");
	CHECK_EXPR(k, "*init_task.fn", "(int (int))0xffffffff81000100 <do_thing>");
	CHECK_EXPR(k, "&do_thing", "(int (*)(int))0xffffffff81000100 <do_thing>");
	CHECK_EXPR(k, "init_task.fn == &do_thing", "(int)1");
	mkk_destroy(k);
}

TEST(casts_and_resolver)
{
	struct kp_kernel *k = mkk_scene();
	CHECK_EXPR(k, "(struct task_struct)other_task.comm",
		   "ERR TYPE: no type known for symbol 'other_task' (BTF has no VAR for it); "
		   "cast it, e.g. (unsigned long)other_task or *(struct foo *)&other_task");
	CHECK_EXPR(k, "((struct task_struct)other_task).comm", "(char [16])\"init\"");
	CHECK_EXPR(k, "((struct task_struct *)&other_task)->pid", "(pid_t)1");
	CHECK_EXPR(k, "(*(struct task_struct *)&other_task).tgid", "(pid_t)1");
	CHECK_EXPR(k, "(unsigned long)mystery", "(unsigned long)1234605616436508552");
	CHECK_EXPR(k, "*(unsigned long *)&jiffies", "(unsigned long)4294967301");
	CHECK_EXPR(k, "*(u64 *)&jiffies", "(u64)4294967301");
	CHECK_EXPR(k, "(unsigned char)jiffies", "(unsigned char)5");
	CHECK_EXPR(k, "(char)-1", "(char)-1");
	CHECK_EXPR(k, "(unsigned int)global_counter", "(unsigned int)4294967291");
	CHECK_EXPR(k, "(long)(int)-1", "(long)-1");
	CHECK_EXPR(k, "(long)(unsigned int)-1", "(long)4294967295");
	CHECK_EXPR(k, "(_Bool)16", "(_Bool)true");
	CHECK_EXPR(k, "(unsigned long)init_task.comm", "(unsigned long)18446744071595626528");
	CHECK_EXPR(k, "(pid_t)7", "(pid_t)7");
	CHECK_EXPR(k, "(u64)3", "(u64)3");
	CHECK_EXPR(k, "(enum task_state)1", "(enum task_state)TASK_INTERRUPTIBLE");
	CHECK_EXPR(k, "(struct task_struct *)0xffffffff82002000",
		   "(struct task_struct *)0xffffffff82002000 <other_task>");
	CHECK_EXPR(k, "(const char *)&linux_banner",
		   "(const char *)0xffffffff82003100 = \"Linux version 6.1.0-test\\n\"");
	CHECK_EXPR(k, "&mystery", "(void *)0xffffffff82003300 <mystery>");
	CHECK_EXPR(k, "global_counter", "(long)-5");		// BTF VAR
	CHECK_EXPR(k, "jiffies", "(unsigned long)4294967301");	// curated
	CHECK_EXPR(k, "avenrun", "(unsigned long [3]){ 1, 2 }");
	CHECK_EXPR(k, "init_task.pid", "(pid_t)0");
	CHECK_EXPR(k, "per_cpu(runqueue_cnt, 0)", "(int)42");
	CHECK_EXPR(k, "per_cpu(runqueue_cnt, 0) + 1", "(int)43");
	CHECK_EXPR(k, "TASK_DEAD", "(enum task_state)TASK_DEAD");
	CHECK_EXPR(k, "(int)TASK_DEAD", "(int)64");
	mkk_destroy(k);
	// A function symbol of unknown kind (VMCOREINFO) or weak: typed by its BTF FUNC.
	k = mkk_create(MKK_BTF_FILE, NULL, 0);
	mkk_symbol(k, "do_thing", MKK_DO_THING, '?');
	mkk_symbol(k, "schedule", MKK_SCHEDULE, 'W');
	mkk_symbol(k, "data_thing", MKK_BASE, '?');
	CHECK_EXPR(k, "do_thing", "(int (int))0xffffffff81000100 <do_thing>");
	CHECK_EXPR(k, "schedule",
		   "ERR TYPE: no type known for symbol 'schedule' (BTF has no VAR for it); cast it, "
		   "e.g. (unsigned long)schedule or *(struct foo *)&schedule");
	CHECK_EXPR(k, "(unsigned int)data_thing", "(unsigned int)0");
	mkk_destroy(k);
}

TEST(builtins)
{
	struct kp_kernel *k = mkk_scene();
	CHECK_EXPR(k, "sizeof(struct task_struct)", "(unsigned long)104");
	CHECK_EXPR(k, "sizeof(unsigned long[3])", "(unsigned long)24");
	CHECK_EXPR(k, "sizeof(u64 *)", "(unsigned long)8");
	CHECK_EXPR(k, "sizeof init_task.comm", "(unsigned long)16");
	CHECK_EXPR(k, "sizeof(init_task)", "(unsigned long)104");
	CHECK_EXPR(k, "sizeof(jiffies) * 2", "(unsigned long)16");
	// Past 4 GiB (libbpf's resolver gives up there) sizes are still exact;
	// past 2^64 they are an error, never 0.
	CHECK_EXPR(k, "sizeof(char[65536][65536])", "(unsigned long)4294967296");
	CHECK_EXPR(k, "sizeof(int[1073741824])", "(unsigned long)4294967296");
	CHECK_EXPR(k, "sizeof(long[4294967295][4294967295])",
		   "ERR TYPE: type is larger than the address space");
	CHECK_EXPR(k, "(struct task_struct (*)[100000000])0 + 1",
		   "(struct task_struct (*)[100000000])0x26be36800");
	CHECK_EXPR(k, "(long (*)[4294967295][4294967295])0 + 1",
		   "ERR TYPE: type is larger than the address space");
	char *big = fmt(k, "*(char (*)[65536][65537])&init_task");
	CHECK(strstr(big, "is 4295032832 bytes, more than the 64 MiB kpeek reads at once"));
	free(big);
	// Octal like C, gdb and crash.
	CHECK_EXPR(k, "010", "(int)8");
	CHECK_EXPR(k, "0", "(int)0");
	CHECK_EXPR(k, "offsetof(struct task_struct, comm)", "(unsigned long)32");
	CHECK_EXPR(k, "offsetof(struct task_struct, tasks.prev)", "(unsigned long)16");
	CHECK_EXPR(k, "offsetof(struct task_struct, comm[2])", "(unsigned long)34");
	CHECK_EXPR(k, "offsetof(struct task_struct, y)", "(unsigned long)84");
	CHECK_EXPR(k, "container_of(init_task.tasks.next, struct task_struct, tasks)",
		   "(struct task_struct *)0xffffffff82002000 <other_task>");
	CHECK_EXPR(k, "container_of(init_task.tasks.next, struct task_struct, tasks)->comm",
		   "(char [16])\"init\"");
	CHECK_EXPR(k, "container_of(container_of(init_task.tasks.next, struct task_struct, "
		   "tasks)->tasks.next, struct task_struct, tasks)->pid", "(pid_t)0");
	CHECK_EXPR(k, "container_of(0xffffffff82002008, struct task_struct, tasks)->pid",
		   "(pid_t)1");
	CHECK_EXPR(k, "container_of(init_task.tasks.next, struct task_struct, flag_a)",
		   "ERR TYPE: 'flag_a' is a bitfield");
	CHECK_EXPR(k, "sizeof(void)", "ERR TYPE: sizeof of incomplete type void");
	mkk_destroy(k);
}

TEST(values_as_integers)
{
	struct kp_kernel *k = mkk_scene();
	CHECK_U64(u64_of(k, "init_task.tasks.next"), MKK_OTHER_TASK + 8);
	CHECK_U64(u64_of(k, "&init_task"), MKK_INIT_TASK);
	CHECK_U64(u64_of(k, "init_task.a_int"), (uint64_t)-2);
	CHECK_U64(u64_of(k, "init_task.a_uint"), 0xfffffffe);
	CHECK_U64(u64_of(k, "init_task.x + init_task.y"), (uint64_t)-1);
	CHECK_U64(u64_of(k, "BIG_TWO"), 0x200000000ULL);
	mkk_destroy(k);
}

TEST(errors)
{
	struct kp_kernel *k = mkk_scene();
	CHECK_EXPR(k, "init_task.com",
		   "ERR TYPE: struct task_struct has no member 'com' (did you mean: comm?)");
	CHECK_EXPR(k, "init_task.parent->pidd",
		   "ERR TYPE: struct task_struct has no member 'pidd' (did you mean: pid?)");
	CHECK_EXPR(k, "init_task.zzzzzz", "ERR TYPE: struct task_struct has no member 'zzzzzz'");
	CHECK_EXPR(k, "init_task->comm",
		   "ERR TYPE: '->' on struct task_struct, which is not a pointer: use '.'");
	CHECK_EXPR(k, "init_task.tasks.next.next",
		   "ERR TYPE: '.' on a pointer (struct list_head *): use '->'");
	CHECK_EXPR(k, "init_task.pid.x", "ERR TYPE: '.' on pid_t, which is not a struct or union");
	CHECK_EXPR(k, "jiffies->x",
		   "ERR TYPE: '->' on unsigned long, which is not a pointer to a struct or union");
	CHECK_EXPR(k, "nosuch", "ERR NOT_FOUND: unknown symbol 'nosuch'");
	CHECK_EXPR(k, "mystery",
		   "ERR TYPE: no type known for symbol 'mystery' (BTF has no VAR for it); cast it, "
		   "e.g. (unsigned long)mystery or *(struct foo *)&mystery");
	CHECK_EXPR(k, "mystery + 1", "ERR TYPE: no type known for symbol 'mystery' (BTF has no "
		   "VAR for it); cast it, e.g. (unsigned long)mystery or *(struct foo *)&mystery");
	CHECK_EXPR(k, "(init_task", "ERR SYNTAX: syntax error at column 11: expected ')'");
	CHECK_EXPR(k, "init_task.comm + ",
		   "ERR SYNTAX: syntax error at column 18: unexpected end of expression");
	CHECK_EXPR(k, "1 2", "ERR SYNTAX: syntax error at column 3: unexpected token after the "
		   "expression");
	CHECK_EXPR(k, "a $ b", "ERR SYNTAX: syntax error at column 3: unexpected '$'");
	CHECK_EXPR(k, "0x", "ERR SYNTAX: syntax error at column 1: bad number");
	CHECK_EXPR(k, "12abc", "ERR SYNTAX: syntax error at column 3: bad character in number");
	CHECK_EXPR(k, "99999999999999999999999",
		   "ERR SYNTAX: syntax error at column 1: integer literal too large");
	CHECK_EXPR(k, "init_task.", "ERR SYNTAX: syntax error at column 11: expected a member name");
	CHECK_EXPR(k, "avenrun[1", "ERR SYNTAX: syntax error at column 10: expected ']'");
	CHECK_EXPR(k, "", "ERR SYNTAX: syntax error at column 1: unexpected end of expression");
	CHECK_EXPR(k, "(struct nosuch *)0", "ERR NOT_FOUND: struct nosuch not found in BTF");
	CHECK_EXPR(k, "sizeof(struct)",
		   "ERR SYNTAX: syntax error at column 14: expected a struct, union or enum name");
	CHECK_EXPR(k, "1 / 0", "ERR INVALID: '/' at column 3: division by zero");
	CHECK_EXPR(k, "1 % (2 - 2)", "ERR INVALID: '%' at column 3: remainder by zero");
	CHECK_EXPR(k, "avenrun[1L << 62]", "ERR INVALID: index 4611686018427387904 of 8-byte "
		   "elements at column 8: the byte offset overflows 64 bits");
	CHECK_EXPR(k, "avenrun[0xffffffffffffffff]", "ERR INVALID: index 18446744073709551615 "
		   "at column 8 is larger than any array");
	CHECK_EXPR(k, "&avenrun[0] + 0x7fffffffffffffff", "ERR INVALID: index "
		   "9223372036854775807 of 8-byte elements at column 13: the byte offset "
		   "overflows 64 bits");
	CHECK_EXPR(k, "(char *)16 - 32", "ERR INVALID: 0x10 - 32 bytes at column 12: the "
		   "address overflows 64 bits");
	CHECK_EXPR(k, "*(void *)&jiffies",
		   "ERR TYPE: cannot dereference a void pointer at column 1; cast it first, "
		   "e.g. *(unsigned long *)p");
	CHECK_EXPR(k, "*jiffies",
		   "ERR TYPE: cannot dereference a value of type unsigned long (not a pointer)");
	CHECK_EXPR(k, "&1", "ERR TYPE: cannot take the address of an rvalue at column 1");
	CHECK_EXPR(k, "&init_task.flag_a",
		   "ERR TYPE: cannot take the address of a bitfield at column 1");
	CHECK_EXPR(k, "jiffies[0]", "ERR TYPE: cannot index a value of type unsigned long");
	CHECK_EXPR(k, "init_task + 1", "ERR TYPE: expected an integer, got struct task_struct");
	CHECK_EXPR(k, "&init_task * 2", "ERR TYPE: invalid pointer arithmetic at column 12");
	CHECK_EXPR(k, "&init_task + &init_task", "ERR TYPE: invalid pointer arithmetic at column 12");
	CHECK_EXPR(k, "(void)1", "ERR TYPE: cannot cast to void");
	CHECK_EXPR(k, "(struct task_struct)1",
		   "ERR TYPE: cannot cast an rvalue of type int to struct task_struct");
	CHECK_EXPR(k, "*(struct task_struct *)0xffffffff90000000",
		   "ERR FAULT: virtual address 0xffffffff90000000 is not in the memory source");
	CHECK_EXPR(k, "((struct task_struct *)0xffffffff90000000)->parent->pid",
		   "ERR FAULT: virtual address 0xffffffff90000038 is not in the memory source");
	CHECK_EXPR(k, "per_cpu(runqueue_cnt, 9000)", "ERR INVALID: per_cpu(): CPU 9000 does not exist (nr_cpu_ids is 8192)");
	CHECK_EXPR(k, "per_cpu(1, 0)", "ERR TYPE: per_cpu() needs a variable");
	mkk_destroy(k);
}

// 7.x x86-64 kallsyms types some variables 'T': the section the address
// lies in (data, between _sdata and _edata) says it is a variable.
TEST(data_symbol_typed_as_text_is_a_variable)
{
	struct kp_kernel *k = mkk_scene();
	mkk_symbol(k, "_sdata", MKK_BASE + 0x3000, 'D');
	mkk_symbol(k, "_edata", MKK_BASE + 0x4000, 'D');
	mkk_symbol(k, "panic_cpu", MKK_MYSTERY + 0x40, 'T');
	CHECK_EXPR(k, "panic_cpu", "ERR TYPE: no type known for symbol 'panic_cpu' (BTF has no VAR "
		   "for it); cast it, e.g. (unsigned long)panic_cpu or *(struct foo *)&panic_cpu");
	// A text symbol in text stays a function.
	CHECK_EXPR(k, "&do_thing", "(int (*)(int))0xffffffff81000100 <do_thing>");
	// The symbol API gives the section's letter, by name, by address and
	// in the walk; the marker at the section's first address keeps its own.
	mkk_symbol(k, "local_thing", MKK_MYSTERY + 0x60, 't');
	struct kp_symbol s;
	CHECK_OK(kp_symbol_by_name(k, "panic_cpu", &s));
	CHECK(s.type == 'D');
	CHECK_OK(kp_symbol_by_address(k, MKK_MYSTERY + 0x61, &s));
	CHECK(s.type == 'd' && !strcmp(s.name, "local_thing"));
	CHECK_OK(kp_symbol_by_name(k, "do_thing", &s));
	CHECK(s.type == 'T');
	CHECK_OK(kp_symbol_by_name(k, "_sdata", &s));
	CHECK(s.type == 'D');
	struct kp_symbol_iter *it;
	const struct kp_symbol *p;
	size_t seen = 0;
	CHECK_OK(kp_symbol_iter_create(k, &it));
	while (!kp_symbol_iter_next(it, &p) && p)
		if (!strcmp(p->name, "panic_cpu") || !strcmp(p->name, "local_thing"))
			seen += p->type == (p->name[0] == 'p' ? 'D' : 'd');
	kp_symbol_iter_destroy(it);
	CHECK_U64(seen, 2);
	mkk_destroy(k);
}

TEST(limits)
{
	struct kp_kernel *k = mkk_scene();
	// Deep nesting is refused, not a stack overflow.
	char deep[600];
	size_t n = 0;
	for (int i = 0; i < 200; i++)
		deep[n++] = '(';
	deep[n++] = '1';
	for (int i = 0; i < 200; i++)
		deep[n++] = ')';
	deep[n] = '\0';
	char *s = fmt(k, deep);
	CHECK(strstr(s, "ERR SYNTAX: syntax error at column 65: expression nests too deeply"));
	free(s);
	memset(deep, '-', 300);
	strcpy(deep + 300, "1");
	s = fmt(k, deep);
	CHECK(strstr(s, "nests too deeply"));
	free(s);
	// 60 levels are fine.
	n = 0;
	for (int i = 0; i < 60; i++)
		deep[n++] = '(';
	deep[n++] = '7';
	for (int i = 0; i < 60; i++)
		deep[n++] = ')';
	deep[n] = '\0';
	CHECK_EXPR(k, deep, "(int)7");
	// Too long.
	char *big = malloc(KP_EXPR_MAX_LEN + 2);
	memset(big, '1', KP_EXPR_MAX_LEN + 1);
	big[KP_EXPR_MAX_LEN + 1] = '\0';
	s = fmt(k, big);
	CHECK(strstr(s, "ERR INVALID: expression is 4097 bytes, longer than 4096"));
	free(s);
	free(big);
	// Long chains of binary operators are iterative.
	char chain[4000];
	n = 0;
	for (int i = 0; i < 1000 && n + 4 < sizeof(chain); i++) {
		chain[n++] = '1';
		chain[n++] = '+';
	}
	chain[n++] = '1';
	chain[n] = '\0';
	s = fmt(k, chain);
	CHECK(strncmp(s, "(int)", 5) == 0);
	free(s);
	// Random byte soup never crashes.
	uint32_t seed = 7;
	const char alphabet[] = "()[]*&-+~!/%<>^|,.  0x1fuL init_task comm tasks next -> "
		"sizeof container_of struct task_struct unsigned long avenrun";
	for (int iter = 0; iter < 3000; iter++) {
		char buf[64];
		size_t len = iter % 40;
		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		buf[len] = '\0';
		free(fmt(k, buf));
	}
	mkk_destroy(k);
}

int main(void)
{
	RUN(arithmetic_and_precedence);
	RUN(pointers);
	RUN(casts_and_resolver);
	RUN(builtins);
	RUN(values_as_integers);
	RUN(errors);
	RUN(data_symbol_typed_as_text_is_a_variable);
	RUN(limits);
	return TEST_SUMMARY();
}
