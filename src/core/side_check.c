// SPDX-License-Identifier: MIT
// Side files checked against the dump before they are believed. A BTF file
// of another build (the host's /sys/kernel/btf/vmlinux given with a dump)
// parses fine and then puts every member at the wrong offset: values print
// as garbage with success. The dump pins down two facts any kernel's BTF
// must agree with: init_task's comm holds "swapper" (INIT_TASK_COMM, and
// "swapper/0" once the boot CPU's idle task is named), and its tasks links
// point back to it.
#include <inttypes.h>
#include <linux/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel_impl.h"
#include "symbols/symtab.h"
#include "types/btf.h"
#include "types/types.h"
#include "util/error.h"
#include "util/json.h"
#include "util/strbuf.h"

#define INIT_TASK_COMM "swapper"

static struct kp_error *disagrees(const struct kp_kernel *k, const char *what)
{
	return kp_error_create(KP_ERR_INVALID, "%s: this BTF does not describe the dump's "
			       "kernel (%s): give the BTF of the kernel that wrote the dump, "
			       "or --force to use it anyway", k->btf_path, what);
}

static struct kp_error *member_offset(struct kp_types *types, uint32_t task, const char *name,
				      uint64_t *ret)
{
	struct kp_btf_member m;
	struct kp_error *err = kp_types_member_path(types, task, name, strlen(name), &m);
	if (!err)
		*ret = m.bit_offset / 8;
	return err;
}

struct kp_error *kp_kernel_check_btf_file(struct kp_kernel *k, struct kp_types *types)
{
	struct kp_symbol init_task;
	if (!kp_symtab_find(k->symtab, "init_task", &init_task))
		return NULL;	// nothing to check it against
	uint32_t task;
	uint64_t comm_off, tasks_off;
	char what[256];
	struct kp_error *err = kp_types_find(types, BTF_KIND_STRUCT, "task_struct", &task);
	if (!err && !(err = member_offset(types, task, "comm", &comm_off)))
		err = member_offset(types, task, "tasks", &tasks_off);
	if (err) {
		snprintf(what, sizeof(what), "%s", err->message);
		kp_error_destroy(err);
		return disagrees(k, what);
	}
	uint8_t comm[16];
	if (!kp_ok(kp_read(k, KP_VIRT, init_task.address + comm_off, comm, sizeof(comm))))
		return NULL;	// the dump cannot say
	if (memcmp(comm, INIT_TASK_COMM, strlen(INIT_TASK_COMM))) {
		// Quoted by the one escaper of strings read from memory.
		struct kp_sb q = { 0 };
		kp_json_put_string(&q, comm, strnlen((const char *)comm, sizeof(comm)));
		char *text = kp_sb_take(&q);
		if (!text)
			return &kp_enomem;
		snprintf(what, sizeof(what), "init_task.comm, at offset %" PRIu64 " of its "
			 "task_struct, reads %s, not \"" INIT_TASK_COMM "\"", comm_off, text);
		free(text);
		return disagrees(k, what);
	}
	// A live kernel's neighbours of init_task may change between the reads.
	uint64_t head = init_task.address + tasks_off, next, prev;
	if (k->src.live || !kp_ok(kp_read_u64(k, head, &next)) ||
	    !kp_ok(kp_read_u64(k, next + 8, &prev)) || prev == head)
		return NULL;
	snprintf(what, sizeof(what), "init_task.tasks, at offset %" PRIu64 " of its "
		 "task_struct, links to 0x%" PRIx64 ", whose prev is 0x%" PRIx64 ", not 0x%"
		 PRIx64, tasks_off, next, prev, head);
	return disagrees(k, what);
}
