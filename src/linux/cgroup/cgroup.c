// SPDX-License-Identifier: MIT
// A task's cgroup v2 path (kernel/cgroup/cgroup.c proc_cgroup_show(),
// cgroup_path_ns()): task->cgroups is its css_set, whose dfl_cgrp is its
// cgroup in the default hierarchy; the cgroup's kernfs node and its
// parents up to the hierarchy's root name the path. Shown relative to the
// initial cgroup namespace, whose root is the hierarchy's.
#include <inttypes.h>
#include <string.h>

#include "core/layout.h"
#include "linux/cgroup/cgroup.h"
#include "linux/fs/fs.h"
#include "util/error.h"

#define NAME_MAX 255
#define MAX_DEPTH (KP_LX_PATH_MAX / 2)	// components of a path: "/a" each

static const struct kp_member_spec task_members[] = { { .name = "cgroups" } };	// CONFIG_CGROUPS
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);
static const struct kp_member_spec css_set_members[] = { { .name = "dfl_cgrp" } };
static const struct kp_struct_spec css_set_spec = KP_STRUCT_SPEC("struct css_set", css_set_members);
static const struct kp_member_spec cgroup_members[] = { { .name = "kn" } };
static const struct kp_struct_spec cgroup_spec = KP_STRUCT_SPEC("struct cgroup", cgroup_members);
enum { K_NAME, K_PARENT, K_N };
static const struct kp_member_spec kn_members[K_N] = {
	[K_NAME] = { .name = "name" },
	// 6.15 (633488947ef6): parent became __parent, RCU-protected.
	[K_PARENT] = { .name = "__parent|parent" },
};
static const struct kp_struct_spec kn_spec = KP_STRUCT_SPEC("struct kernfs_node", kn_members);

static struct kp_error *kn_path(struct kp_kernel *k, uint64_t kn, char *ret, size_t size)
{
	const struct kp_struct_layout *l;
	char path[KP_LX_PATH_MAX];
	size_t at = sizeof(path) - 1;
	struct kp_error *err = kp_kernel_layout(k, &kn_spec, &l);
	if (err)
		return err;
	path[at] = '\0';
	for (unsigned depth = 0;; depth++) {
		uint8_t buf[64];
		char name[NAME_MAX + 1];
		if (depth > MAX_DEPTH)
			return kp_error_create(KP_ERR_LOOP, "the cgroup at kernfs node 0x%" PRIx64
					       " is more than %d deep (a cycle?)", kn, MAX_DEPTH);
		if ((err = kp_kernel_read_struct(k, l, kn, buf, sizeof(buf))))
			return err;
		uint64_t parent = kp_layout_u64(l, buf, K_PARENT);
		if (!parent)
			break;	// the root: its name is the hierarchy's, not in paths
		if ((err = kp_read_cstr(k, kp_layout_u64(l, buf, K_NAME), name, sizeof(name))))
			return kp_error_prefix(err, "the name of kernfs node 0x%" PRIx64, kn);
		size_t len = strlen(name);
		if (at < len + 1)
			return kp_error_create(KP_ERR_INVALID, "cgroup path longer than %d bytes", KP_LX_PATH_MAX);
		at -= len;
		memcpy(path + at, name, len);
		path[--at] = '/';
		kn = parent;
	}
	const char *p = path[at] ? path + at : "/";
	if (strlen(p) >= size)
		return kp_error_create(KP_ERR_INVALID, "cgroup path longer than %zu bytes", size - 1);
	strcpy(ret, p);
	return NULL;
}

struct kp_error *kp_lx_task_cgroup(struct kp_kernel *k, uint64_t task, char *buf, size_t size,
				   bool *visible_ret)
{
	static const struct kp_struct_spec *const specs[] = { &task_spec, &css_set_spec, &cgroup_spec };
	const struct kp_struct_layout *l[3];
	uint64_t cset, cgrp, kn;
	struct kp_symbol sym;
	uint8_t visible = 1;
	struct kp_error *err = kp_kernel_layouts(k, specs, 3, l);
	if (err)
		return err;
	if ((err = kp_read_u64(k, task + kp_layout_off(l[0], 0), &cset)) ||
	    (err = kp_read_u64(k, cset + kp_layout_off(l[1], 0), &cgrp)) ||
	    (err = kp_read_u64(k, cgrp + kp_layout_off(l[2], 0), &kn)))
		return kp_error_prefix(err, "the cgroup of task 0x%" PRIx64, task);
	if ((err = kn_path(k, kn, buf, size)))
		return kp_error_prefix(err, "the cgroup of task 0x%" PRIx64, task);
	if (kp_symbol_find(k, "cgrp_dfl_visible", &sym) && (err = kp_read_u8(k, sym.address, &visible)))
		return kp_error_prefix(err, "cgrp_dfl_visible");
	*visible_ret = visible;
	return NULL;
}
