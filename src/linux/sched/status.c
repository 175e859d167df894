// SPDX-License-Identifier: MIT
// kp_task_status: who a task is, as fs/proc/array.c's task_state(),
// task_sig(), task_cap(), task_seccomp() and task_context_switch_counts()
// show it in /proc/PID/status, with its namespaces (linux/ns) and cgroup
// (linux/cgroup), seen from the initial namespaces (no ID mapping).
//
// /proc shows the objective credentials, __task_cred(): task->real_cred.
// Capability sets are kernel_cap_t: u32 cap[2] up to 6.2, u64 val since
// 6.3 (f122a08b197d): on little-endian the same 8 bytes, read as one u64.
// Signal sets are one unsigned long (_NSIG 64 on x86-64 and arm64).
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "linux/cgroup/cgroup.h"
#include "linux/fs/fs.h"
#include "linux/ns/ns.h"
#include "linux/sched/sched.h"
#include "util/error.h"

#define PFA_NO_NEW_PRIVS 0	// include/linux/sched.h: bit in task->atomic_flags
#define NSIG 64			// _NSIG
#define SIG_DFL 0u
#define SIG_IGN 1u
#define NGROUPS_MAX 65536	// include/uapi/linux/limits.h
#define MAX_TASK_SPAN (64u << 10)

enum {
	T_PID, T_TGID, T_STATE, T_EXIT_STATE, T_FLAGS, T_COMM, T_REAL_PARENT, T_PARENT, T_PTRACE,
	T_REAL_CRED, T_CRED, T_ATOMIC_FLAGS, T_SECCOMP, T_SECCOMP_FILTERS, T_THREAD_PID,
	T_NSPROXY, T_FILES, T_FS, T_NVCSW, T_NIVCSW, T_PENDING, T_BLOCKED, T_SIGHAND, T_SIGNAL, T_N
};
static const struct kp_member_spec task_members[T_N] = {
	[T_PID] = { .name = "pid" },
	[T_TGID] = { .name = "tgid" },
	// 5.14 (2f064a59a11f): state became __state.
	[T_STATE] = { .name = "__state|state" },
	[T_EXIT_STATE] = { .name = "exit_state" },
	[T_FLAGS] = { .name = "flags" },
	[T_COMM] = { .name = "comm" },
	[T_REAL_PARENT] = { .name = "real_parent" },
	[T_PARENT] = { .name = "parent" },
	[T_PTRACE] = { .name = "ptrace" },
	[T_REAL_CRED] = { .name = "real_cred" },
	[T_CRED] = { .name = "cred" },
	[T_ATOMIC_FLAGS] = { .name = "atomic_flags" },
	[T_SECCOMP] = { .name = "seccomp.mode", .flags = KP_MEMBER_OPTIONAL },	// CONFIG_SECCOMP
	// 5.9 (c818c03b661c): Seccomp_filters.
	[T_SECCOMP_FILTERS] = { .name = "seccomp.filter_count", .flags = KP_MEMBER_OPTIONAL },
	[T_THREAD_PID] = { .name = "thread_pid" },	// 4.19
	[T_NSPROXY] = { .name = "nsproxy" },
	[T_FILES] = { .name = "files" },
	[T_FS] = { .name = "fs" },
	[T_NVCSW] = { .name = "nvcsw" },
	[T_NIVCSW] = { .name = "nivcsw" },
	[T_PENDING] = { .name = "pending.signal" },
	[T_BLOCKED] = { .name = "blocked" },
	[T_SIGHAND] = { .name = "sighand" },
	[T_SIGNAL] = { .name = "signal" },
};
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);

enum { C_UID, C_EUID, C_SUID, C_FSUID, C_GID, C_EGID, C_SGID, C_FSGID, C_INH, C_PRM, C_EFF,
       C_BSET, C_AMB, C_GROUPS, C_USER_NS, C_N };
static const struct kp_member_spec cred_members[C_N] = {
	[C_UID] = { .name = "uid" }, [C_EUID] = { .name = "euid" },
	[C_SUID] = { .name = "suid" }, [C_FSUID] = { .name = "fsuid" },
	[C_GID] = { .name = "gid" }, [C_EGID] = { .name = "egid" },
	[C_SGID] = { .name = "sgid" }, [C_FSGID] = { .name = "fsgid" },
	[C_INH] = { .name = "cap_inheritable" }, [C_PRM] = { .name = "cap_permitted" },
	[C_EFF] = { .name = "cap_effective" }, [C_BSET] = { .name = "cap_bset" },
	[C_AMB] = { .name = "cap_ambient" },	// 4.3
	[C_GROUPS] = { .name = "group_info" },
	[C_USER_NS] = { .name = "user_ns" },
};
static const struct kp_struct_spec cred_spec = KP_STRUCT_SPEC("struct cred", cred_members);
enum { G_NGROUPS, G_GID, G_N };
static const struct kp_member_spec groups_members[G_N] = {
	[G_NGROUPS] = { .name = "ngroups" }, [G_GID] = { .name = "gid", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec groups_spec = KP_STRUCT_SPEC("struct group_info", groups_members);
enum { S_NR_THREADS, S_SHARED_PENDING, S_PIDS, S_N };
static const struct kp_member_spec signal_members[S_N] = {
	[S_NR_THREADS] = { .name = "nr_threads" },
	[S_SHARED_PENDING] = { .name = "shared_pending.signal" },
	[S_PIDS] = { .name = "pids", .flags = KP_MEMBER_NOSPAN },	// 4.19 (6883f81aac6f)
};
static const struct kp_struct_spec signal_spec = KP_STRUCT_SPEC("struct signal_struct", signal_members);
static const struct kp_member_spec sighand_members[] = { { .name = "action", .flags = KP_MEMBER_NOSPAN } };
static const struct kp_struct_spec sighand_spec = KP_STRUCT_SPEC("struct sighand_struct", sighand_members);
static const struct kp_member_spec sigaction_members[] = { { .name = "sa.sa_handler" } };
static const struct kp_struct_spec sigaction_spec = KP_STRUCT_SPEC("struct k_sigaction", sigaction_members);
enum { P_LEVEL, P_NUMBERS, P_N };
static const struct kp_member_spec pid_members[P_N] = {
	[P_LEVEL] = { .name = "level" }, [P_NUMBERS] = { .name = "numbers", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec pid_spec = KP_STRUCT_SPEC("struct pid", pid_members);
enum { U_NR, U_NS, U_N };
static const struct kp_member_spec upid_members[U_N] = { [U_NR] = { .name = "nr" }, [U_NS] = { .name = "ns" } };
static const struct kp_struct_spec upid_spec = KP_STRUCT_SPEC("struct upid", upid_members);
static const struct kp_member_spec files_members[] = { { .name = "fdt" } };
static const struct kp_struct_spec files_spec = KP_STRUCT_SPEC("struct files_struct", files_members);
static const struct kp_member_spec fdt_members[] = { { .name = "max_fds" } };
static const struct kp_struct_spec fdt_spec = KP_STRUCT_SPEC("struct fdtable", fdt_members);
static const struct kp_member_spec fs_members[] = { { .name = "umask" } };
static const struct kp_struct_spec fs_spec = KP_STRUCT_SPEC("struct fs_struct", fs_members);

struct status {
	struct kp_task_status pub;
	uint64_t user_ns, pid_ns;
	char cgroup[KP_LX_PATH_MAX];
};

static struct kp_error *creds(struct kp_kernel *k, struct status *s)
{
	static const struct kp_struct_spec *const specs[] = { &cred_spec, &groups_spec };
	const struct kp_struct_layout *l[2];
	uint8_t buf[512];
	struct kp_task_status *st = &s->pub;
	struct kp_error *err = kp_kernel_layouts(k, specs, 2, l);
	if (err || (err = kp_kernel_read_struct(k, l[0], st->cred, buf, sizeof(buf))))
		return err;
	for (int i = 0; i < 4; i++) {
		st->uid[i] = (uint32_t)kp_layout_u64(l[0], buf, C_UID + (unsigned)i);
		st->gid[i] = (uint32_t)kp_layout_u64(l[0], buf, C_GID + (unsigned)i);
	}
	st->cap_inheritable = kp_layout_u64(l[0], buf, C_INH);
	st->cap_permitted = kp_layout_u64(l[0], buf, C_PRM);
	st->cap_effective = kp_layout_u64(l[0], buf, C_EFF);
	st->cap_bounding = kp_layout_u64(l[0], buf, C_BSET);
	st->cap_ambient = kp_layout_u64(l[0], buf, C_AMB);
	s->user_ns = kp_layout_u64(l[0], buf, C_USER_NS);
	uint64_t gi = kp_layout_u64(l[0], buf, C_GROUPS);
	uint8_t gbuf[16];
	if ((err = kp_kernel_read_struct(k, l[1], gi, gbuf, sizeof(gbuf))))
		return err;
	int64_t n = kp_layout_s64(l[1], gbuf, G_NGROUPS);
	if (n < 0 || n > NGROUPS_MAX)
		return kp_error_create(KP_ERR_FORMAT, "group_info at 0x%" PRIx64 " claims %" PRId64
				       " groups (corrupt?)", gi, n);
	uint32_t *groups = malloc((size_t)n * sizeof(*groups) + 1);
	if (!groups)
		return &kp_enomem;
	if (n && (err = kp_read(k, KP_VIRT, gi + kp_layout_off(l[1], G_GID), groups, (size_t)n * 4))) {
		free(groups);
		return kp_error_prefix(err, "the groups of group_info at 0x%" PRIx64, gi);
	}
	st->groups = groups;
	st->ngroups = (uint32_t)n;
	return NULL;
}

// pid_nr_ns() of each level's namespace for the struct pid at pid: its
// number there, or 0 where it was not made in that namespace.
static struct kp_error *numbers(struct kp_kernel *k, uint64_t pid, const uint64_t *level_ns,
				uint32_t levels, int32_t *ret)
{
	static const struct kp_struct_spec *const specs[] = { &pid_spec, &upid_spec };
	const struct kp_struct_layout *l[2];
	uint32_t level;
	struct kp_error *err = kp_kernel_layouts(k, specs, 2, l);
	if (err)
		return err;
	memset(ret, 0, levels * sizeof(*ret));
	if (!pid)
		return NULL;
	if ((err = kp_read_u32(k, pid + kp_layout_off(l[0], P_LEVEL), &level)))
		return kp_error_prefix(err, "struct pid at 0x%" PRIx64, pid);
	for (uint32_t g = 0; g < levels && g <= level; g++) {
		uint64_t upid = pid + kp_layout_off(l[0], P_NUMBERS) + g * l[1]->size;
		uint8_t buf[32];
		if ((err = kp_kernel_read_struct(k, l[1], upid, buf, sizeof(buf))))
			return err;
		if (kp_layout_u64(l[1], buf, U_NS) == level_ns[g])
			ret[g] = (int32_t)kp_layout_u64(l[1], buf, U_NR);
	}
	return NULL;
}

// NStgid, NSpid, NSpgid and NSsid: the levels are those of the task's own
// struct pid (thread_pid), the initial namespace first.
static struct kp_error *pids(struct kp_kernel *k, struct status *s, uint64_t thread_pid,
			     uint64_t signal)
{
	static const struct kp_struct_spec *const specs[] = { &pid_spec, &upid_spec, &signal_spec };
	const struct kp_struct_layout *l[3];
	struct kp_task_status *st = &s->pub;
	uint32_t level;
	uint64_t ns[KP_PID_LEVELS], type[3];
	struct kp_error *err = kp_kernel_layouts(k, specs, 3, l);
	if (err || !thread_pid)
		return err;
	if ((err = kp_read_u32(k, thread_pid + kp_layout_off(l[0], P_LEVEL), &level)))
		return kp_error_prefix(err, "struct pid at 0x%" PRIx64, thread_pid);
	if (level >= KP_PID_LEVELS)
		return kp_error_create(KP_ERR_FORMAT, "struct pid at 0x%" PRIx64 " is at level %u (corrupt?)",
				       thread_pid, level);
	for (uint32_t g = 0; g <= level; g++) {
		uint64_t upid = thread_pid + kp_layout_off(l[0], P_NUMBERS) + g * l[1]->size;
		if ((err = kp_read_u64(k, upid + kp_layout_off(l[1], U_NS), &ns[g])))
			return kp_error_prefix(err, "struct pid at 0x%" PRIx64, thread_pid);
	}
	st->pid_levels = level + 1;
	s->pid_ns = ns[level];
	if ((err = numbers(k, thread_pid, ns, level + 1, st->ns_pid)))
		return err;
	if (!kp_kernel_enum_value(k, "PIDTYPE_TGID", &type[0]) ||
	    !kp_kernel_enum_value(k, "PIDTYPE_PGID", &type[1]) ||
	    !kp_kernel_enum_value(k, "PIDTYPE_SID", &type[2]))
		return kp_error_create(KP_ERR_TYPE, "the kernel's BTF has no enum pid_type");
	int32_t *out[3] = { st->ns_tgid, st->ns_pgid, st->ns_sid };
	for (int i = 0; i < 3; i++) {
		uint64_t pid = 0;
		if (signal && (err = kp_read_u64(k, signal + kp_layout_off(l[2], S_PIDS) + type[i] * 8, &pid)))
			return kp_error_prefix(err, "signal_struct at 0x%" PRIx64, signal);
		if ((err = numbers(k, pid, ns, level + 1, out[i])))
			return err;
	}
	return NULL;
}

// Threads, the shared pending set, and the ignored and caught sets from
// the handlers (collect_sigign_sigcatch()); nothing for a task that has
// exited (no sighand: lock_task_sighand() fails).
static struct kp_error *signals(struct kp_kernel *k, struct kp_task_status *st, uint64_t sighand,
				uint64_t signal)
{
	static const struct kp_struct_spec *const specs[] = { &signal_spec, &sighand_spec, &sigaction_spec };
	const struct kp_struct_layout *l[3];
	uint8_t buf[512];
	struct kp_error *err = kp_kernel_layouts(k, specs, 3, l);
	if (err || !sighand || !signal)
		return err;
	if ((err = kp_kernel_read_struct(k, l[0], signal, buf, sizeof(buf))))
		return err;
	st->threads = (int32_t)kp_layout_u64(l[0], buf, S_NR_THREADS);
	st->sig_shared_pending = kp_layout_u64(l[0], buf, S_SHARED_PENDING);
	uint64_t size = l[2]->size, off = kp_layout_off(l[2], 0);
	if (size > 256 || off + 8 > size)
		return kp_error_create(KP_ERR_UNSUPPORTED, "struct k_sigaction of %" PRIu64 " bytes", size);
	uint8_t *actions = malloc(NSIG * size);
	if (!actions)
		return &kp_enomem;
	err = kp_read(k, KP_VIRT, sighand + kp_layout_off(l[1], 0), actions, NSIG * size);
	for (unsigned i = 0; !err && i < NSIG; i++) {
		uint64_t handler;
		memcpy(&handler, actions + i * size + off, 8);
		if (handler == SIG_IGN)
			st->sig_ignored |= 1ull << i;
		else if (handler != SIG_DFL)
			st->sig_caught |= 1ull << i;
	}
	free(actions);
	return err ? kp_error_prefix(err, "the signal handlers at 0x%" PRIx64, sighand) : NULL;
}

// FDSize (the fd table's max_fds) and Umask.
static struct kp_error *files_fs(struct kp_kernel *k, struct kp_task_status *st, uint64_t files,
				 uint64_t fs)
{
	static const struct kp_struct_spec *const specs[] = { &files_spec, &fdt_spec, &fs_spec };
	const struct kp_struct_layout *l[3];
	uint64_t fdt;
	uint32_t v;
	struct kp_error *err = kp_kernel_layouts(k, specs, 3, l);
	if (err)
		return err;
	if (files && ((err = kp_read_u64(k, files + kp_layout_off(l[0], 0), &fdt)) ||
		      (err = kp_read_u32(k, fdt + kp_layout_off(l[1], 0), &st->fd_size))))
		return kp_error_prefix(err, "files_struct at 0x%" PRIx64, files);
	st->umask = -1;
	if (fs) {
		if ((err = kp_read_u32(k, fs + kp_layout_off(l[2], 0), &v)))
			return kp_error_prefix(err, "fs_struct at 0x%" PRIx64, fs);
		st->umask = (int32_t)(v & 0777);
	}
	return NULL;
}

// A parent's or tracer's PID; -1 if it cannot be read.
static int32_t task_id(struct kp_kernel *k, const struct kp_struct_layout *l, uint64_t task, unsigned m)
{
	uint32_t v;
	return task && kp_ok(kp_read_u32(k, task + kp_layout_off(l, m), &v)) ? (int32_t)v : -1;
}

static struct kp_error *task(struct kp_kernel *k, const struct kp_struct_layout *l, const uint8_t *buf,
			     struct status *s)
{
	struct kp_task_status *st = &s->pub;
	char comm[16];
	memcpy(comm, kp_layout_at(l, buf, T_COMM), sizeof(comm));
	comm[15] = '\0';
	uint64_t flags = kp_layout_u64(l, buf, T_FLAGS);
	kp_ok(kp_lx_task_name(k, st->task, flags, comm, st->name, sizeof(st->name)));
	st->state = kp_lx_task_state_letter(kp_layout_u64(l, buf, T_STATE), kp_layout_u64(l, buf, T_EXIT_STATE));
	st->pid = (int32_t)kp_layout_u64(l, buf, T_PID);
	st->tgid = (int32_t)kp_layout_u64(l, buf, T_TGID);
	uint64_t thread_pid = kp_layout_u64(l, buf, T_THREAD_PID);
	// pid_alive(): a task whose pid was detached shows 0 for both.
	uint64_t parent = kp_layout_u64(l, buf, T_REAL_PARENT);
	st->ppid = !thread_pid ? 0 : parent == st->task ? 0 : task_id(k, l, parent, T_TGID);
	if (thread_pid && kp_layout_u64(l, buf, T_PTRACE))
		st->tracer_pid = task_id(k, l, kp_layout_u64(l, buf, T_PARENT), T_PID);
	st->cred = kp_layout_u64(l, buf, T_REAL_CRED);
	st->subjective_cred = kp_layout_u64(l, buf, T_CRED);
	st->no_new_privs = kp_layout_u64(l, buf, T_ATOMIC_FLAGS) >> PFA_NO_NEW_PRIVS & 1;
	st->seccomp = kp_layout_has(l, T_SECCOMP) ? (int32_t)kp_layout_u64(l, buf, T_SECCOMP) : -1;
	st->seccomp_filters = kp_layout_has(l, T_SECCOMP_FILTERS) ?
		(int32_t)kp_layout_u64(l, buf, T_SECCOMP_FILTERS) : -1;
	st->voluntary_ctxt_switches = kp_layout_u64(l, buf, T_NVCSW);
	st->nonvoluntary_ctxt_switches = kp_layout_u64(l, buf, T_NIVCSW);
	st->sig_pending = kp_layout_u64(l, buf, T_PENDING);
	st->sig_blocked = kp_layout_u64(l, buf, T_BLOCKED);
	uint64_t signal = kp_layout_u64(l, buf, T_SIGNAL);
	struct kp_error *err;
	if ((err = creds(k, s)) || (err = pids(k, s, thread_pid, signal)) ||
	    (err = signals(k, st, kp_layout_u64(l, buf, T_SIGHAND), signal)) ||
	    (err = files_fs(k, st, kp_layout_u64(l, buf, T_FILES), kp_layout_u64(l, buf, T_FS))) ||
	    (err = kp_lx_namespaces(k, kp_layout_u64(l, buf, T_NSPROXY), s->user_ns, s->pid_ns, st->ns)))
		return err;
	bool visible;
	if ((err = kp_lx_task_cgroup(k, st->task, s->cgroup, sizeof(s->cgroup), &visible)))
		return err;
	st->cgroup = visible ? s->cgroup : NULL;
	return NULL;
}

struct kp_error *kp_task_status_create(struct kp_kernel *k, uint64_t address, struct kp_task_status **ret)
{
	const struct kp_struct_layout *l;
	struct kp_error *err = kp_kernel_layout(k, &task_spec, &l);
	if (err)
		return err;
	if (kp_layout_span(l) > MAX_TASK_SPAN)
		return kp_error_create(KP_ERR_UNSUPPORTED, "task_struct span of %" PRIu64 " bytes",
				       kp_layout_span(l));
	struct status *s = calloc(1, sizeof(*s));
	uint8_t *buf = malloc(kp_layout_span(l));
	if (!s || !buf) {
		free(s);
		free(buf);
		return &kp_enomem;
	}
	s->pub.task = address;
	err = kp_kernel_read_struct(k, l, address, buf, kp_layout_span(l));
	if (!err)
		err = task(k, l, buf, s);
	free(buf);
	if (err) {
		kp_task_status_destroy(&s->pub);
		return kp_error_prefix(err, "the status of task 0x%" PRIx64, address);
	}
	*ret = &s->pub;
	return NULL;
}

void kp_task_status_destroy(struct kp_task_status *st)
{
	if (!st)
		return;
	free((void *)st->groups);
	free(st);
}
