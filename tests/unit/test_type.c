// SPDX-License-Identifier: MIT
// Types as objects (struct kp_type): kinds, names, sizes, members with
// their offsets and bitfields, enumerators, targets, and values made from
// a type, on the scene of tests/gen/mkbtf.h (its layout comment is the
// expected layout).
#include "test.h"
#include "sys_open.h"
#include "../gen/mkbtf.h"

static struct kp_type *lookup(struct kp_kernel *k, const char *name)
{
	struct kp_type *t = NULL;
	CHECK_OK(kp_type_lookup(k, name, &t));
	return t;
}

static void check_name(const struct kp_type *t, const char *want)
{
	char *s = NULL;
	CHECK_OK(kp_type_name(t, &s));
	CHECK_STR(s, want);
	free(s);
}

struct want_member {
	const char *name;	// NULL: anonymous
	uint64_t bit_offset;
	uint32_t bit_size;
	const char *type;
};

static const struct want_member task_members[] = {
	{ "__state", 0, 0, "unsigned int" },
	{ NULL, 32, 0, "union <anonymous>" },
	{ "tasks", 64, 0, "struct list_head" },
	{ "pid", 192, 0, "pid_t" },
	{ "tgid", 224, 0, "pid_t" },
	{ "comm", 256, 0, "char [16]" },
	{ "flag_a", 384, 1, "unsigned int" },
	{ "flag_b", 385, 3, "unsigned int" },
	{ "neg", 388, 4, "int" },
	{ "parent", 448, 0, "struct task_struct *" },
	{ "state", 512, 0, "enum task_state" },
	{ "on_cpu", 544, 0, "_Bool" },
	{ "utime", 576, 0, "u64" },
	{ NULL, 640, 0, "struct <anonymous>" },
	{ "fn", 704, 0, "int (*)(int)" },
	{ "name", 768, 0, "const char *" },
};

TEST(struct_members)
{
	struct kp_kernel *k = mkk_scene();
	struct kp_type *t = lookup(k, "struct task_struct");
	CHECK_U64(kp_type_kind(t), KP_TYPE_STRUCT);
	check_name(t, "struct task_struct");
	CHECK_STR(kp_type_tag(t), "task_struct");
	uint64_t size = 0;
	CHECK_OK(kp_type_sizeof(t, &size));
	CHECK_U64(size, MKBTF_TASK_SIZE);
	size_t n = sizeof(task_members) / sizeof(task_members[0]);
	CHECK_U64(kp_type_member_count(t), n);
	for (size_t i = 0; i < n; i++) {
		KP_INIT(kp_type_member, m);
		struct kp_type *mt = NULL;
		CHECK_OK(kp_type_member(t, i, &m, &mt));
		if (task_members[i].name)
			CHECK_STR(m.name, task_members[i].name);
		else
			CHECK(m.name == NULL);
		CHECK_U64(m.bit_offset, task_members[i].bit_offset);
		CHECK_U64(m.bit_size, task_members[i].bit_size);
		if (mt)
			check_name(mt, task_members[i].type);
		kp_type_destroy(mt);
	}
	KP_INIT(kp_type_member, m);
	CHECK_ERR(kp_type_member(t, n, &m, NULL), KP_ERR_INVALID, "no member 16");
	kp_type_destroy(t);
	mkk_destroy(k);
}

TEST(kinds_and_targets)
{
	struct kp_kernel *k = mkk_scene();
	struct kp_type *t = lookup(k, "char [16]");
	CHECK_U64(kp_type_kind(t), KP_TYPE_ARRAY);
	CHECK_U64(kp_type_length(t), 16);
	CHECK(kp_type_tag(t) == NULL);
	struct kp_type *e = NULL;
	CHECK_OK(kp_type_target(t, &e));
	check_name(e, "char");
	CHECK_U64(kp_type_kind(e), KP_TYPE_INT);
	kp_type_destroy(e);
	kp_type_destroy(t);

	t = lookup(k, "pid_t");
	CHECK_U64(kp_type_kind(t), KP_TYPE_TYPEDEF);
	CHECK(kp_type_is_signed(t));
	CHECK_OK(kp_type_target(t, &e));
	CHECK_STR(kp_type_tag(e), "__kernel_pid_t");
	kp_type_destroy(e);
	kp_type_destroy(t);

	t = lookup(k, "struct list_head *");
	CHECK_U64(kp_type_kind(t), KP_TYPE_POINTER);
	CHECK_OK(kp_type_target(t, &e));
	check_name(e, "struct list_head");
	struct kp_type *p = NULL;
	CHECK_OK(kp_type_pointer(e, &p));
	check_name(p, "struct list_head *");
	kp_type_destroy(p);
	kp_type_destroy(e);
	kp_type_destroy(t);

	t = lookup(k, "_Bool");
	CHECK_U64(kp_type_kind(t), KP_TYPE_BOOL);
	CHECK_ERR(kp_type_target(t, &e), KP_ERR_TYPE, "_Bool has no target type");
	kp_type_destroy(t);

	t = lookup(k, "void");
	CHECK_U64(kp_type_kind(t), KP_TYPE_VOID);
	CHECK(!kp_type_is_complete(t));
	uint64_t size = 7;
	CHECK_ERR(kp_type_sizeof(t, &size), KP_ERR_TYPE, "void has no size");
	CHECK_U64(size, 7);
	kp_type_destroy(t);

	struct kp_type *none = NULL;
	CHECK_ERR(kp_type_lookup(k, "struct no_such_thing", &none), KP_ERR_NOT_FOUND,
		  "no_such_thing");
	CHECK(none == NULL);
	kp_type_destroy(NULL);
	mkk_destroy(k);
}

TEST(enumerators)
{
	struct kp_kernel *k = mkk_scene();
	struct kp_type *t = lookup(k, "enum task_state");
	CHECK_U64(kp_type_kind(t), KP_TYPE_ENUM);
	CHECK_U64(kp_type_member_count(t), 3);
	const char *name = NULL;
	int64_t v = 0;
	CHECK_OK(kp_type_enumerator(t, 2, &name, &v));
	CHECK_STR(name, "TASK_DEAD");
	CHECK_U64(v, 64);
	CHECK_ERR(kp_type_enumerator(t, 3, &name, &v), KP_ERR_INVALID, "no enumerator 3");
	kp_type_destroy(t);
	t = lookup(k, "enum big_enum");
	CHECK_OK(kp_type_enumerator(t, 1, &name, &v));
	CHECK_STR(name, "BIG_TWO");
	CHECK_U64(v, 0x200000000ULL);
	kp_type_destroy(t);
	mkk_destroy(k);
}

TEST(values_of_types)
{
	struct kp_kernel *k = mkk_scene();
	struct kp_type *t = lookup(k, "struct task_struct");
	struct kp_value *v = NULL, *m = NULL;
	CHECK_OK(kp_type_value_at(t, MKK_INIT_TASK, &v));
	CHECK_OK(kp_value_member(v, "comm", &m));
	const void *bytes = NULL;
	CHECK_OK(kp_value_bytes(m, &bytes));
	CHECK(bytes && memcmp(bytes, "swapper/0", 10) == 0);
	struct kp_type *vt = NULL;
	CHECK_OK(kp_value_type(m, &vt));
	check_name(vt, "char [16]");
	kp_type_destroy(vt);
	kp_value_destroy(m);

	// A pointer made from an integer, then followed.
	struct kp_type *p = NULL;
	CHECK_OK(kp_type_pointer(t, &p));
	struct kp_value *pv = NULL, *pid = NULL;
	CHECK_OK(kp_type_value_from_u64(p, MKK_OTHER_TASK, &pv));
	CHECK_OK(kp_value_member(pv, "pid", &pid));
	int64_t x = -1;
	CHECK_OK(kp_value_to_s64(pid, &x));
	CHECK_U64(x, 1);
	kp_value_destroy(pid);

	// Back to an integer by a cast with a handle.
	struct kp_type *ul = lookup(k, "unsigned long");
	struct kp_value *n = NULL;
	CHECK_OK(kp_value_cast_type(pv, ul, &n));
	uint64_t u = 0;
	CHECK_OK(kp_value_to_u64(n, &u));
	CHECK_U64(u, MKK_OTHER_TASK);
	kp_value_destroy(n);
	CHECK_ERR(kp_type_value_from_u64(t, 1, &n), KP_ERR_TYPE, "not an integer");
	kp_value_destroy(pv);
	kp_type_destroy(ul);
	kp_type_destroy(p);

	// An unreadable address: the bytes are a fault naming it.
	kp_value_destroy(v);
	CHECK_OK(kp_type_value_at(t, 0x10, &v));
	CHECK_ERR(kp_value_bytes(v, &bytes), KP_ERR_FAULT, "0x10");
	kp_value_destroy(v);
	kp_type_destroy(t);
	mkk_destroy(k);
}

// A pointer to a struct BTF only declares (the synthetic system's
// hlist_node.next, as pahole emits them) reaches the definition.
TEST(pointer_to_declared_struct)
{
	struct kp_kernel *k = sys_open(SK_SYS_NEW, NULL);
	struct kp_value *v = NULL, *next = NULL, *pprev = NULL;
	CHECK_OK(kp_value_at(k, "struct hlist_node", SKP_VA(SKS_FREE), &v));
	CHECK_OK(kp_value_member(v, "next", &next));
	CHECK_OK(kp_value_member(next, "pprev", &pprev));
	char *name = NULL;
	if (pprev)
		CHECK_OK(kp_value_type_name(pprev, &name));
	CHECK_STR(name, "struct hlist_node **");
	free(name);
	kp_value_destroy(pprev);
	kp_value_destroy(next);
	kp_value_destroy(v);
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(struct_members);
	RUN(kinds_and_targets);
	RUN(enumerators);
	RUN(values_of_types);
	RUN(pointer_to_declared_struct);
	return TEST_SUMMARY();
}
