// SPDX-License-Identifier: MIT
// check syscalls: the syscall tables and dispatchers (linux/syscalls.c)
// as findings, one summary line per table.
#include <string.h>

#include "checks/check.h"
#include "util/error.h"

enum { MAX_TABLES = 8 };

static bool is_dispatcher(const char *table)
{
	return !strstr(table, "_table");
}

struct kp_error *kp_ck_syscalls(struct kp_ck *c)
{
	struct kp_syscall_iter *it;
	struct kp_error *err = kp_syscall_iter_create(c->k, &it);
	if (err)
		return kp_ck_cannot_err(c, err, NULL);	// "syscall check: ..."
	struct { const char *name; unsigned entries, bad; } t[MAX_TABLES];
	int nt = 0;
	const struct kp_syscall_entry *e;
	while (!(err = kp_syscall_iter_next(it, &e)) && e) {
		int i;
		for (i = 0; i < nt && strcmp(t[i].name, e->table); i++)
			;
		if (i == nt && nt < MAX_TABLES)
			t[nt++] = (typeof(t[0])){ e->table, 0, 0 };
		if (i < MAX_TABLES) {
			t[i].entries++;
			t[i].bad += !e->ok;
		}
		if (is_dispatcher(e->table))
			err = kp_ck_add(c, e->target, &e->sym, e->ok ? NULL : e->why, "%s+0x%x", e->table, e->nr);
		else
			err = kp_ck_add(c, e->target, &e->sym, e->ok ? NULL : e->why, "%s[%u]", e->table, e->nr);
		if (err)
			break;
	}
	for (int i = 0; !err && i < nt; i++) {
		bool disp = is_dispatcher(t[i].name);
		const char *what = disp ? "call targets checked" : "entries";
		if (!t[i].bad)
			err = kp_ck_summary(c, "%s: %u %s, all point to %s in kernel text", t[i].name,
					    t[i].entries, what, disp ? "kernel functions" : "syscall handlers");
		else
			err = kp_ck_summary(c, "%s: %u %s, %u anomalous", t[i].name, t[i].entries, what,
					    t[i].bad);
	}
	kp_syscall_iter_destroy(it);
	return err;
}
