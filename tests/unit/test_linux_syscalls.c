// SPDX-License-Identifier: MIT
// kp_syscall_iter over a synthetic kernel: a symbol table, a small text
// region holding an x64_sys_call dispatcher, and a sys_call_table with good
// and hooked entries.
#include <stdlib.h>

#include "test.h"
#include "arch/arch.h"
#include "core/kernel.h"
#include "io/memory.h"
#include "symbols/symtab.h"

#define TEXT 0xffffffff81000000ULL
#define ETEXT 0xffffffff81200000ULL
#define DATA 0xffffffff82200000ULL
#define MODTEXT 0xffffffffc0001000ULL

static uint8_t text[0x2000], data[0x1000];


static void add(struct kp_kernel *k, const char *name, uint64_t addr, char type, const char *mod)
{
	if (kp_symtab_add(kp_kernel_symtab(k), name, strlen(name), addr, type, mod))
		abort();
}

// A kernel over text and data (data_size bytes of it mapped).
static struct kp_kernel *kernel_over(size_t data_size)
{
	struct kp_memory *m;
	struct kp_symtab *st;
	struct kp_kernel *k;
	if (kp_memory_create(&m) || kp_symtab_create(&st) ||
	    kp_memory_add(m, KP_VIRT, TEXT, sizeof(text), kp_read_buffer, text, 0) ||
	    kp_memory_add(m, KP_VIRT, DATA, data_size, kp_read_buffer, data, 0) ||
	    kp_kernel_from_parts(m, st, &kp_arch_x86_64, NULL, &k))
		abort();
	return k;
}

static struct kp_kernel *fake_kernel(bool with_table, bool with_dispatcher)
{
	struct kp_kernel *k = kernel_over(sizeof(data));
	add(k, "_stext", TEXT, 'T', NULL);
	add(k, "__x64_sys_read", TEXT + 0x100, 'T', NULL);
	add(k, "__x64_sys_write", TEXT + 0x200, 'T', NULL);
	add(k, "__x64_sys_ni_syscall", TEXT + 0x300, 'T', NULL);
	add(k, "memcpy", TEXT + 0x400, 'T', NULL);
	if (with_dispatcher)
		add(k, "x64_sys_call", TEXT + 0x1000, 'T', NULL);
	add(k, "after_dispatcher", TEXT + 0x1040, 'T', NULL);
	add(k, "_etext", ETEXT, 'T', NULL);
	if (with_table)
		add(k, "sys_call_table", DATA, 'D', NULL);
	add(k, "after_table", DATA + 10 * 8, 'D', NULL);
	add(k, "rootkit_hook", MODTEXT, 't', "rootkit");
	add(k, "rootkit_end", MODTEXT + 0x100, 't', "rootkit");
	if (kp_symtab_finalize(kp_kernel_symtab(k)))
		abort();
	return k;
}

static void fake_destroy(struct kp_kernel *k)
{
	kp_kernel_destroy(k);
}


// A direct call/jmp at text offset off to target.
static void rel32(size_t off, uint8_t op, uint64_t target)
{
	text[off] = op;
	int32_t rel = (int32_t)(target - (TEXT + off + 5));
	memcpy(text + off + 1, &rel, 4);
}

static void build(void)
{
	memset(text, 0xcc, sizeof(text));
	memset(data, 0, sizeof(data));
	uint64_t table[] = {
		TEXT + 0x100,		// 0 read: ok
		TEXT + 0x200,		// 1 write: ok
		TEXT + 0x300,		// 2 ni_syscall: ok
		MODTEXT,		// 3 hooked into a module
		TEXT + 0x104,		// 4 middle of a handler
		0xffffc90000001000ULL,	// 5 vmalloc trampoline
		TEXT + 0x400,		// 6 a kernel function that is no handler
	};
	memcpy(data, table, sizeof(table));	// entries 7-9: zero padding
	// x64_sys_call: cmp/jcc noise, two jmps to handlers, one hooked call,
	// and an E8 byte inside an immediate whose "target" is nothing.
	size_t o = 0x1000;
	text[o++] = 0x3d;	// cmp eax, imm32 (imm holds an E8)
	text[o++] = 0xe8;
	text[o++] = 0x11;
	text[o++] = 0x22;
	text[o++] = 0x33;
	rel32(o, 0xe9, TEXT + 0x100);
	o += 5;
	rel32(o, 0xe9, TEXT + 0x200);
	o += 5;
	rel32(o, 0xe8, MODTEXT);
	o += 5;
	rel32(o, 0xe9, TEXT + 0x180);	// mid-function: not a call site, ignored
}

struct seen {
	int n, bad;
	struct kp_syscall_entry e[32];
	char names[32][64];
};

static struct kp_error *check(struct kp_kernel *k, struct seen *s)
{
	struct kp_syscall_iter *it;
	struct kp_error *err = kp_syscall_iter_create(k, &it);
	if (err)
		return err;
	const struct kp_syscall_entry *e;
	while (!(err = kp_syscall_iter_next(it, &e)) && e) {
		if (s->n < 32) {
			s->e[s->n] = *e;
			snprintf(s->names[s->n], 64, "%s", e->why ? e->why : "");
			s->e[s->n].why = s->names[s->n];
		}
		s->n++;
		s->bad += !e->ok;
	}
	kp_syscall_iter_destroy(it);
	return err;
}

static const struct kp_syscall_entry *find(struct seen *s, const char *table, unsigned nr)
{
	for (int i = 0; i < s->n && i < 32; i++)
		if (!strcmp(s->e[i].table, table) && s->e[i].nr == nr)
			return &s->e[i];
	return NULL;
}

TEST(table_entries_are_classified)
{
	build();
	struct kp_kernel *k = fake_kernel(true, false);
	struct seen s = {0};
	CHECK_OK(check(k, &s));
	CHECK_U64(s.n, 7);	// trailing zero padding dropped
	CHECK_U64(s.bad, 4);
	const struct kp_syscall_entry *e;
	if ((e = find(&s, "sys_call_table", 0)))
		CHECK(e->ok && e->sym.name && !strcmp(e->sym.name, "__x64_sys_read"));
	if ((e = find(&s, "sys_call_table", 2)))
		CHECK(e->ok);
	if ((e = find(&s, "sys_call_table", 3))) {
		CHECK(!e->ok);
		CHECK_STR(e->why, "points into module 'rootkit'");
	}
	if ((e = find(&s, "sys_call_table", 4)))
		CHECK_STR(e->why, "not at a syscall entry point");
	if ((e = find(&s, "sys_call_table", 5)))
		CHECK_STR(e->why, "not in kernel text");
	if ((e = find(&s, "sys_call_table", 6)))
		CHECK_STR(e->why, "not at a syscall entry point");
	CHECK(find(&s, "sys_call_table", 7) == NULL);
	fake_destroy(k);
}

TEST(dispatcher_call_targets)
{
	build();
	struct kp_kernel *k = fake_kernel(false, true);
	struct seen s = {0};
	CHECK_OK(check(k, &s));
	CHECK_U64(s.n, 3);
	CHECK_U64(s.bad, 1);
	const struct kp_syscall_entry *e = find(&s, "x64_sys_call", 15);
	CHECK(e != NULL);
	if (e) {
		CHECK(!e->ok);
		CHECK_U64(e->target, MODTEXT);
		CHECK_STR(e->why, "points into module 'rootkit'");
	}
	e = find(&s, "x64_sys_call", 5);
	CHECK(e && e->ok);
	fake_destroy(k);
}

TEST(no_tables_is_an_error)
{
	build();
	struct kp_kernel *k = fake_kernel(false, false);
	struct seen s = {0};
	CHECK_ERR(check(k, &s), KP_ERR_NOT_FOUND, "sys_call_table");
	fake_destroy(k);
}

TEST(unreadable_table_is_a_fault_naming_it)
{
	build();
	struct kp_kernel *k = fake_kernel(true, false);
	// Make the table symbol's size run past the mapped data.
	struct kp_kernel *k2 = kernel_over(16);
	add(k2, "_stext", TEXT, 'T', NULL);
	add(k2, "_etext", ETEXT, 'T', NULL);
	add(k2, "sys_call_table", DATA, 'D', NULL);
	add(k2, "after_table", DATA + 64, 'D', NULL);
	struct seen s = {0};
	CHECK_ERR(check(k2, &s), KP_ERR_FAULT, "sys_call_table");
	fake_destroy(k2);
	fake_destroy(k);
}

int main(void)
{
	RUN(table_entries_are_classified);
	RUN(dispatcher_call_targets);
	RUN(no_tables_is_an_error);
	RUN(unreadable_table_is_a_fault_naming_it);
	return TEST_SUMMARY();
}
