// kp_tasks: the task list (init_task.tasks) and each group's threads.
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"

#define PF_KTHREAD 0x00200000u	// include/linux/sched.h, unchanged since 2.6

// Task states (include/linux/sched.h, 6.1).
#define TASK_UNINTERRUPTIBLE 0x0002u
#define TASK_REPORT 0x007fu	// INTERRUPTIBLE..PARKED: the states /proc reports
#define TASK_NOLOAD 0x0400u
#define TASK_IDLE (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)
#define TASK_REPORT_IDLE (TASK_REPORT + 1)
#define TASK_RTLOCK_WAIT 0x1000u	// 5.15+: shown as D

char kp_lx_task_state_letter(uint64_t state, uint64_t exit_state)
{
	static const char letters[] = "RSDTtXZPI";
	uint32_t st = (uint32_t)state;
	uint32_t report = (st | (uint32_t)exit_state) & TASK_REPORT;
	if ((st & TASK_IDLE) == TASK_IDLE)
		report = TASK_REPORT_IDLE;
	if (st == TASK_RTLOCK_WAIT)
		report = TASK_UNINTERRUPTIBLE;
	// fls(): index of the highest set bit, 1-based; 0 for R.
	int idx = report ? 32 - __builtin_clz(report) : 0;
	return letters[idx];
}

static struct kp_error *member(struct kp_kernel *k, const char *type, const char *name,
			       uint64_t *off_ret, uint64_t *size_ret)
{
	uint64_t size = 0;
	struct kp_error *err = kp_member_offset(k, type, name, off_ret, &size);
	if (!err && size_ret)
		*size_ret = size;
	return err;
}

static bool has_member(struct kp_kernel *k, const char *type, const char *name,
		       uint64_t *off_ret, uint64_t *size_ret)
{
	struct kp_error *err = member(k, type, name, off_ret, size_ret);
	kp_error_destroy(err);
	return !err;
}

static void span_add(uint64_t *lo, uint64_t *hi, uint64_t off, uint64_t size)
{
	if (off < *lo)
		*lo = off;
	if (off + size > *hi)
		*hi = off + size;
}

void kp_lx_task_layout_span(struct kp_lx_task_layout *l)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	span_add(&lo, &hi, l->tasks, 16);
	span_add(&lo, &hi, l->pid, 4);
	span_add(&lo, &hi, l->tgid, 4);
	span_add(&lo, &hi, l->real_parent, 8);
	span_add(&lo, &hi, l->state, l->state_size);
	span_add(&lo, &hi, l->exit_state, 4);
	span_add(&lo, &hi, l->flags, l->flags_size);
	span_add(&lo, &hi, l->comm, 16);
	span_add(&lo, &hi, l->signal, 8);
	if (l->has_cpu)
		span_add(&lo, &hi, l->cpu, 4);
	if (l->has_thread_node)
		span_add(&lo, &hi, l->thread_node, 16);
	if (l->has_thread_group)
		span_add(&lo, &hi, l->thread_group, 16);
	l->lo = lo;
	l->hi = hi;
}

struct kp_error *kp_lx_task_layout(struct kp_kernel *k, struct kp_lx_task_layout *ret)
{
	static const char ts[] = "struct task_struct";
	struct kp_lx_task_layout l = {0};
	struct kp_error *err;
	uint64_t size;
	if ((err = member(k, ts, "tasks", &l.tasks, NULL)) ||
	    (err = member(k, ts, "pid", &l.pid, NULL)) ||
	    (err = member(k, ts, "tgid", &l.tgid, NULL)) ||
	    (err = member(k, ts, "real_parent", &l.real_parent, NULL)) ||
	    (err = member(k, ts, "exit_state", &l.exit_state, NULL)) ||
	    (err = member(k, ts, "flags", &l.flags, &l.flags_size)) ||
	    (err = member(k, ts, "comm", &l.comm, &size)) ||
	    (err = member(k, ts, "signal", &l.signal, NULL)))
		return kp_error_prefix(err, "task list");
	if (size < 16)
		return kp_error_create(KP_ERR_FORMAT, "task list: task_struct.comm is %llu bytes, expected 16",
				       (unsigned long long)size);
	// 5.14 renamed the long 'state' to unsigned int '__state'.
	if (!has_member(k, ts, "__state", &l.state, &l.state_size) &&
	    (err = member(k, ts, "state", &l.state, &l.state_size)))
		return kp_error_prefix(err, "task list");
	if (l.state_size != 4 && l.state_size != 8)
		l.state_size = 4;
	if (l.flags_size != 4 && l.flags_size != 8)
		l.flags_size = 4;
	// x86 moved cpu into thread_info (THREAD_INFO_IN_TASK) in 5.16; older
	// kernels and other configs keep task_struct.cpu.
	l.has_cpu = has_member(k, ts, "thread_info.cpu", &l.cpu, NULL) ||
		    has_member(k, ts, "cpu", &l.cpu, NULL);
	l.has_thread_node = has_member(k, ts, "thread_node", &l.thread_node, NULL) &&
			    has_member(k, "struct signal_struct", "thread_head",
				       &l.signal_thread_head, NULL);
	l.has_thread_group = has_member(k, ts, "thread_group", &l.thread_group, NULL);
	kp_lx_task_layout_span(&l);
	*ret = l;
	return NULL;
}

static uint64_t get_u(const uint8_t *buf, uint64_t off, uint64_t size)
{
	if (size == 8) {
		uint64_t v;
		memcpy(&v, buf + off, 8);
		return v;
	}
	uint32_t v;
	memcpy(&v, buf + off, 4);
	return v;
}

struct walk {
	struct kp_kernel *k;
	const struct kp_lx_task_layout *l;
	uint8_t *buf;		// l->hi - l->lo bytes
	struct kp_task *tasks;
	uint64_t *parents;	// real_parent of tasks[i]
	size_t n, cap;
};

#define AT(w, off) ((w)->buf + (off) - (w)->l->lo)

// Reads the task at address into w->buf and appends it.
static struct kp_error *add_task(struct walk *w, uint64_t address)
{
	const struct kp_lx_task_layout *l = w->l;
	if (w->n >= KP_LX_MAX_TASKS)
		return kp_error_create(KP_ERR_LOOP, "task list does not end after %u entries (at task 0x%llx)",
				       KP_LX_MAX_TASKS, (unsigned long long)address);
	struct kp_error *err = kp_read(w->k, KP_VIRT, address + l->lo, w->buf, l->hi - l->lo);
	if (err)
		return kp_error_prefix(err, "reading task_struct at 0x%llx", (unsigned long long)address);
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		struct kp_task *t = realloc(w->tasks, cap * sizeof(*t));
		if (!t)
			return &kp_enomem;
		w->tasks = t;
		uint64_t *p = realloc(w->parents, cap * sizeof(*p));
		if (!p)
			return &kp_enomem;
		w->parents = p;
		w->cap = cap;
	}
	struct kp_task *t = &w->tasks[w->n];
	memset(t, 0, sizeof(*t));
	t->address = address;
	t->pid = (int32_t)get_u(AT(w, l->pid), 0, 4);
	t->tgid = (int32_t)get_u(AT(w, l->tgid), 0, 4);
	t->ppid = 0;
	t->state = kp_lx_task_state_letter(get_u(AT(w, l->state), 0, l->state_size),
					   get_u(AT(w, l->exit_state), 0, 4));
	t->cpu = l->has_cpu ? (int32_t)get_u(AT(w, l->cpu), 0, 4) : -1;
	t->flags = get_u(AT(w, l->flags), 0, l->flags_size);
	memcpy(t->comm, AT(w, l->comm), 16);
	t->comm[15] = '\0';
	t->kthread = t->flags & PF_KTHREAD;
	w->parents[w->n] = get_u(AT(w, l->real_parent), 0, 8);
	w->n++;
	return NULL;
}

// The threads of the group whose leader was just read into w->buf, leader
// excluded.
static struct kp_error *add_threads(struct walk *w, uint64_t leader)
{
	const struct kp_lx_task_layout *l = w->l;
	uint64_t head, link_off, node;
	struct kp_error *err;
	if (l->has_thread_node) {
		uint64_t signal = get_u(AT(w, l->signal), 0, 8);
		if (!signal)
			return NULL;	// exited, being reaped
		head = signal + l->signal_thread_head;
		link_off = l->thread_node;
		err = kp_read_u64(w->k, head, &node);
		if (err)
			return kp_error_prefix(err, "reading signal->thread_head of task 0x%llx",
					       (unsigned long long)leader);
	} else if (l->has_thread_group) {
		head = leader + l->thread_group;
		link_off = l->thread_group;
		node = get_u(AT(w, l->thread_group), 0, 8);
	} else {
		return NULL;
	}
	struct kp_lx_loop loop;
	kp_lx_loop_init(&loop, head);
	while (node != head) {
		if (!node)
			return kp_error_create(KP_ERR_FORMAT, "thread list of task 0x%llx has a NULL link",
					       (unsigned long long)leader);
		if (kp_lx_loop_step(&loop, node))
			return kp_error_create(KP_ERR_LOOP, "thread list of task 0x%llx does not end (loop at 0x%llx)",
					       (unsigned long long)leader, (unsigned long long)node);
		uint64_t thread = node - link_off;
		if (thread != leader) {
			if ((err = add_task(w, thread)))
				return err;
			node = get_u(AT(w, link_off), 0, 8);
		} else if ((err = kp_read_u64(w->k, node, &node))) {
			return kp_error_prefix(err, "reading thread list of task 0x%llx",
					       (unsigned long long)leader);
		}
	}
	return NULL;
}

struct parent_ix {
	uint64_t address;
	int32_t tgid;
};

static int parent_cmp(const void *a, const void *b)
{
	const struct parent_ix *x = a, *y = b;
	return x->address < y->address ? -1 : x->address > y->address;
}

// ppid = real_parent->tgid: looked up among the tasks read, else read.
static void resolve_parents(struct walk *w)
{
	struct parent_ix *ix = malloc((w->n ? w->n : 1) * sizeof(*ix));
	for (size_t i = 0; ix && i < w->n; i++) {
		ix[i].address = w->tasks[i].address;
		ix[i].tgid = w->tasks[i].tgid;
	}
	if (ix)
		qsort(ix, w->n, sizeof(*ix), parent_cmp);
	for (size_t i = 0; i < w->n; i++) {
		uint64_t p = w->parents[i];
		struct parent_ix key = {.address = p}, *hit = NULL;
		if (ix)
			hit = bsearch(&key, ix, w->n, sizeof(*ix), parent_cmp);
		if (hit) {
			w->tasks[i].ppid = w->tasks[i].address == p ? 0 : hit->tgid;
			continue;
		}
		uint32_t tgid;
		struct kp_error *err = p ? kp_read_u32(w->k, p + w->l->tgid, &tgid) : &kp_not_found;
		w->tasks[i].ppid = err ? -1 : (int32_t)tgid;
		kp_error_destroy(err);
	}
	free(ix);
}

struct kp_error *kp_lx_tasks_walk(struct kp_kernel *k, const struct kp_lx_task_layout *l,
				  uint64_t init_task, bool threads,
				  struct kp_task **tasks_ret, size_t *count_ret)
{
	if (l->hi <= l->lo || l->hi - l->lo > (1u << 20))
		return kp_error_create(KP_ERR_INVALID, "task list: bad task_struct layout");
	struct walk w = {.k = k, .l = l};
	struct kp_error *err = NULL;
	w.buf = malloc(l->hi - l->lo);
	if (!w.buf)
		return &kp_enomem;
	uint64_t head = init_task + l->tasks;
	uint64_t task = init_task;
	struct kp_lx_loop loop;
	kp_lx_loop_init(&loop, head);
	for (;;) {
		if ((err = add_task(&w, task)))
			goto out;
		uint64_t next = get_u(AT(&w, l->tasks), 0, 8);
		if (threads && (err = add_threads(&w, task)))
			goto out;
		if (next == head)
			break;
		if (!next) {
			err = kp_error_create(KP_ERR_FORMAT, "task list: task 0x%llx has a NULL tasks.next",
					      (unsigned long long)task);
			goto out;
		}
		if (kp_lx_loop_step(&loop, next)) {
			err = kp_error_create(KP_ERR_LOOP, "task list does not end after %zu entries (loop at 0x%llx)",
					      w.n, (unsigned long long)next);
			goto out;
		}
		task = next - l->tasks;
	}
	resolve_parents(&w);
	*tasks_ret = w.tasks;
	*count_ret = w.n;
	w.tasks = NULL;
out:
	free(w.tasks);
	free(w.parents);
	free(w.buf);
	return err;
}

struct kp_error *kp_tasks(struct kp_kernel *k, bool threads, struct kp_task **tasks_ret,
			  size_t *count_ret)
{
	struct kp_lx_task_layout l;
	struct kp_symbol sym;
	struct kp_error *err = kp_lx_task_layout(k, &l);
	if (err)
		return err;
	if ((err = kp_symbol_by_name(k, "init_task", &sym)))
		return kp_error_prefix(err, "task list");
	return kp_lx_tasks_walk(k, &l, sym.address, threads, tasks_ret, count_ret);
}
