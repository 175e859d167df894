// SPDX-License-Identifier: MIT
// check creds: credentials a rootkit gave a process by writing task
// pointers instead of going through commit_creds() (Volatility's
// check_creds, the "give root" of the Diamorphine family done by DKOM):
//   - a user task pointing at init_cred, the kernel's own credentials:
//     every task forked gets its own copy (copy_creds() -> prepare_creds()),
//     only init_task has init_cred itself;
//   - one struct cred used by tasks of different processes: copy_creds()
//     shares a cred only with CLONE_THREAD, within a thread group;
//   - a cred whose usage count is below the number of task pointers to it
//     (each task holds one reference for ->cred and one for ->real_cred):
//     a pointer written without get_cred();
//   - a task running with effective or file-system uid 0 under a real uid
//     other than 0 whose executable is not set-uid root: the kernel grants
//     euid 0 to a non-root real uid only through a set-uid-root exec (or a
//     process that had uid 0 and kept euid 0: flagged too, as crash and
//     Volatility do; it is rare).
// Kernel threads are left out (they run on kernel credentials and override
// them for I/O).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/layout.h"
#include "linux/lib/list.h"
#include "util/error.h"
#include "util/vec.h"

#define S_ISUID 04000u

enum { T_CRED, T_REAL_CRED, T_MM, T_N };
static const struct kp_member_spec task_members[T_N] = {
	[T_CRED] = { .name = "cred" }, [T_REAL_CRED] = { .name = "real_cred" }, [T_MM] = { .name = "mm" },
};
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);
enum { C_USAGE, C_UID, C_EUID, C_FSUID, C_N };
static const struct kp_member_spec cred_members[C_N] = {
	// atomic_t up to 6.1, atomic_long_t since 6.2 (f8fa5d76925f).
	[C_USAGE] = { .name = "usage" },
	[C_UID] = { .name = "uid" }, [C_EUID] = { .name = "euid" }, [C_FSUID] = { .name = "fsuid" },
};
static const struct kp_struct_spec cred_spec = KP_STRUCT_SPEC("struct cred", cred_members);
static const struct kp_member_spec mm_members[] = { { .name = "exe_file" } };
static const struct kp_struct_spec mm_spec = KP_STRUCT_SPEC("struct mm_struct", mm_members);
static const struct kp_member_spec file_members[] = { { .name = "f_inode" } };
static const struct kp_struct_spec file_spec = KP_STRUCT_SPEC("struct file", file_members);
enum { I_MODE, I_UID, I_N };
static const struct kp_member_spec inode_members[I_N] = {
	[I_MODE] = { .name = "i_mode" }, [I_UID] = { .name = "i_uid" },
};
static const struct kp_struct_spec inode_spec = KP_STRUCT_SPEC("struct inode", inode_members);

// One task pointer to a cred.
struct ref {
	uint64_t cred, task;
	int32_t pid, tgid;
	char comm[16];
};

struct state {
	struct kp_ck *c;
	const struct kp_struct_layout *tl, *cl;
	uint64_t init_cred;
	struct ref *refs;
	size_t n, cap;
	size_t tasks, unread;
};

static int by_cred(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;
	if (x->cred != y->cred)
		return x->cred < y->cred ? -1 : 1;
	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

// Whether the executable of the mm at mm is set-uid root.
static bool setuid_root_exe(struct kp_kernel *k, uint64_t mm)
{
	static const struct kp_struct_spec *const specs[] = { &mm_spec, &file_spec, &inode_spec };
	const struct kp_struct_layout *l[3];
	uint64_t file, inode;
	uint16_t mode;
	uint32_t uid;
	return mm && kp_ok(kp_kernel_layouts(k, specs, 3, l)) &&
	       kp_ok(kp_read_u64(k, mm + kp_layout_off(l[0], 0), &file)) && file &&
	       kp_ok(kp_read_u64(k, file + kp_layout_off(l[1], 0), &inode)) && inode &&
	       kp_ok(kp_read_u16(k, inode + kp_layout_off(l[2], I_MODE), &mode)) &&
	       kp_ok(kp_read_u32(k, inode + kp_layout_off(l[2], I_UID), &uid)) &&
	       (mode & S_ISUID) && uid == 0;
}

// The references of one user task, and its uid finding.
static struct kp_error *task(struct state *s, const struct kp_task *t)
{
	uint8_t buf[4096], cbuf[256];
	struct kp_kernel *k = s->c->k;
	struct kp_error *err = kp_kernel_read_struct(k, s->tl, t->address, buf, sizeof(buf));
	if (err)
		return err;
	uint64_t creds[2] = { kp_layout_u64(s->tl, buf, T_CRED), kp_layout_u64(s->tl, buf, T_REAL_CRED) };
	for (int i = 0; i < 2; i++) {
		if (!KP_VEC_RESERVE(s->refs, s->cap, s->n + 1))
			return &kp_enomem;
		struct ref *r = &s->refs[s->n++];
		*r = (struct ref){ .cred = creds[i], .task = t->address, .pid = t->pid, .tgid = t->tgid };
		memcpy(r->comm, t->comm, sizeof(r->comm));
	}
	if (s->init_cred && (creds[0] == s->init_cred || creds[1] == s->init_cred) &&
	    (err = kp_ck_add(s->c, t->address, NULL, "its credentials are init_cred, the kernel's own "
			     "(every forked task gets a copy)", "pid %d (%s)", t->pid, t->comm)))
		return err;
	if ((err = kp_kernel_read_struct(k, s->cl, creds[1], cbuf, sizeof(cbuf))))
		return err;
	uint32_t uid = (uint32_t)kp_layout_u64(s->cl, cbuf, C_UID);
	uint32_t euid = (uint32_t)kp_layout_u64(s->cl, cbuf, C_EUID);
	uint32_t fsuid = (uint32_t)kp_layout_u64(s->cl, cbuf, C_FSUID);
	if (uid != 0 && (euid == 0 || fsuid == 0) && !setuid_root_exe(k, kp_layout_u64(s->tl, buf, T_MM))) {
		char why[160];
		snprintf(why, sizeof(why), "it runs with euid/fsuid 0 under real uid %u, and its executable "
			 "is not set-uid root", uid);
		return kp_ck_add(s->c, t->address, NULL, why, "pid %d (%s)", t->pid, t->comm);
	}
	return NULL;
}

// Whether task t is no longer the task of its pid (it exited since the
// iterator yielded it).
static bool gone(struct kp_kernel *k, const struct kp_task *t)
{
	uint64_t now;
	struct kp_error *err = kp_task_by_pid(k, t->pid, &now);
	kp_error_destroy(err);
	return err || now != t->address;
}

static struct kp_error *walk(struct state *s)
{
	struct kp_task_iter *it;
	const struct kp_task *t;
	struct kp_error *err = kp_task_iter_create(s->c->k, KP_TASKS_THREADS, &it);
	if (err)
		return err;
	while (!(err = kp_task_iter_next(it, &t)) && t) {
		if (t->kthread || t->pid == 0)
			continue;
		s->tasks++;
		struct kp_error *e = task(s, t);
		if (e && e->code == KP_ERR_NOMEM) {
			err = e;
			break;
		}
		if (e && s->c->live && gone(s->c->k, t)) {
			// Live, the task exited while it was read (its cred and
			// task_struct freed): a transition, not a limit.
			kp_error_destroy(e);
			if ((err = kp_ck_add_race(s->c, t->address, "its credentials could not be read: it exited meanwhile",
						  "pid %d (%s)", t->pid, t->comm)))
				break;
		} else if (e) {
			s->unread++;
			kp_error_destroy(e);
		}
	}
	kp_task_iter_destroy(it);
	return err;
}

// Groups of references to one cred: shared across processes, or more
// references than its usage count.
static struct kp_error *judge(struct state *s, size_t *shared_ret)
{
	qsort(s->refs, s->n, sizeof(*s->refs), by_cred);
	struct kp_error *err = NULL;
	for (size_t i = 0, j; !err && i < s->n; i = j) {
		for (j = i + 1; j < s->n && s->refs[j].cred == s->refs[i].cred; j++)
			if (s->refs[j].tgid != s->refs[j - 1].tgid && s->refs[i].cred != s->init_cred) {
				char why[160];
				snprintf(why, sizeof(why), "it shares struct cred 0x%" PRIx64 " with pid %d (%s), "
					 "another process", s->refs[i].cred, s->refs[i].pid, s->refs[i].comm);
				(*shared_ret)++;
				err = kp_ck_add(s->c, s->refs[j].task, NULL, why, "pid %d (%s)", s->refs[j].pid,
						s->refs[j].comm);
			}
		uint8_t cbuf[256];
		if (err || !kp_ok(kp_kernel_read_struct(s->c->k, s->cl, s->refs[i].cred, cbuf, sizeof(cbuf))))
			continue;
		int64_t usage = kp_layout_s64(s->cl, cbuf, C_USAGE);
		if (usage < (int64_t)(j - i)) {
			char why[160];
			snprintf(why, sizeof(why), "its usage count %" PRId64 " is below the %zu task references "
				 "to it (a pointer written without get_cred())", usage, j - i);
			err = kp_ck_add(s->c, s->refs[i].cred, NULL, why, "struct cred of pid %d (%s)",
					s->refs[i].pid, s->refs[i].comm);
		}
	}
	return err;
}

struct kp_error *kp_ck_creds(struct kp_ck *c)
{
	struct state s = { .c = c };
	struct kp_symbol sym;
	size_t shared = 0;
	struct kp_error *err = kp_kernel_layout(c->k, &task_spec, &s.tl);
	if (!err)
		err = kp_kernel_layout(c->k, &cred_spec, &s.cl);
	if (err)
		return kp_ck_cannot_err(c, err, "credentials");
	if (kp_symbol_find(c->k, "init_cred", &sym))
		s.init_cred = sym.address;
	if (!(err = walk(&s)))
		err = judge(&s, &shared);
	free(s.refs);
	if (err)
		return kp_ck_cannot_err(c, err, "credentials");
	err = kp_ck_summary(c, "%zu user tasks' credentials%s; %zu shared across processes", s.tasks,
			    s.init_cred ? "" : " (no init_cred symbol: not compared with it)", shared);
	if (!err && s.unread)
		kp_ck_cannot(c, "%zu tasks' credentials unreadable", s.unread);
	return err;
}
