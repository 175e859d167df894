// SPDX-License-Identifier: MIT
// Opening the synthetic kernel's system (tests/gen/synthsys.h) for the
// system walkers' tests, with an edit of words.
#ifndef KPT_SYS_OPEN_H
#define KPT_SYS_OPEN_H

#include "test.h"
#include "synthkernel.h"
#include "synthsys.h"

#define UNMAPPED UINT64_C(0xffffc90000400000)	// vmalloc space, no page table

static inline struct kp_kernel *sys_open(enum sk_sys sys, const struct sks_word *edit)
{
	struct sk_opts o = { .format = SK_ELF, .ntasks = 12, .procs = SK_PROCS_LIST, .sys = sys,
			     .edit = edit ? sks_put_words : NULL, .edit_arg = (void *)edit };
	struct kp_kernel *k = NULL;
	CHECK_OK(sk_open(&o, &k));
	return k;
}

#endif
