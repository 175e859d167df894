// SPDX-License-Identifier: MIT
// mkpydump OUTDIR: the synthetic kernel with processes and the system
// (tests/gen/synthkernel.h, synthprocs.h, synthsys.h) as an ELF dump for the
// Python bindings' tests (tests/python), and what the generator put in it:
//
//   OUTDIR/synth.core   ELF core (and synth.kallsyms, synth.btf, synth.layout)
//   OUTDIR/truth.json   the generator's own values: every task (address, PID,
//                       comm), task 1's arguments and environment, jiffies,
//                       avenrun, the banner, the online CPUs, the modules
//                       (name, core size), two files' mount, dentry and
//                       path, a red-black tree and an hlist it wrote, the
//                       size of
//                       struct task_struct and its members' offsets
//
// truth.json is written from the generator's memory and constants, never
// from kpeek's reading of the dump.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synthkernel.h"
#include "synthprocs.h"
#include "synthsys.h"

#define PA(va) ((va) - SK_TEXT)

static uint64_t jiffies, avenrun[3], online;
static char banner[64];

// In the system's memory free for tests: a red-black tree of five nodes
// (root RB(2); RB(1) left of it with RB(0) left of that; RB(4) right with
// RB(3) left of that: in order RB(0)..RB(4)) and an hlist of three nodes.
#define RB_ROOT SKS_FREE
#define RB(i) (SKS_FREE + 0x100 + 0x20 * (i))
#define HHEAD (SKS_FREE + 0x40)
#define HNODE(i) (SKS_FREE + 0x200 + 0x10 * (i))

static void rb(uint8_t *m, int i, int parent, int left, int right, int black)
{
	sk_put64(m, RB(i), (parent < 0 ? 0 : SKP_VA(RB(parent))) | (uint64_t)black);
	sk_put64(m, RB(i) + SKS_RB_RIGHT, right < 0 ? 0 : SKP_VA(RB(right)));
	sk_put64(m, RB(i) + SKS_RB_LEFT, left < 0 ? 0 : SKP_VA(RB(left)));
}

static void trees(uint8_t *m)
{
	sk_put64(m, RB_ROOT, SKP_VA(RB(2)));
	rb(m, 2, -1, 1, 4, 1);
	rb(m, 1, 2, 0, -1, 1);
	rb(m, 0, 1, -1, -1, 0);
	rb(m, 4, 2, 3, -1, 1);
	rb(m, 3, 4, -1, -1, 0);
	sk_put64(m, HHEAD, SKP_VA(HNODE(0)));
	for (int i = 0; i < 3; i++) {
		sk_put64(m, HNODE(i), i < 2 ? SKP_VA(HNODE(i + 1)) : 0);
		sk_put64(m, HNODE(i) + 8, i ? SKP_VA(HNODE(i - 1)) : SKP_VA(HHEAD));
	}
}

static void capture(uint8_t *mem, void *arg)
{
	trees(mem);
	memcpy(&jiffies, mem + PA(SK_JIFFIES), 8);
	memcpy(avenrun, mem + PA(SK_AVENRUN), 24);
	memcpy(&online, mem + PA(SK_ONLINE_MASK), 8);
	memcpy(banner, mem + PA(SK_BANNER), sizeof(banner) - 1);
	(void)arg;
}

static void words(FILE *f, const char *key, const char *s, size_t len)
{
	fprintf(f, "  \"%s\": [", key);
	for (size_t i = 0; i < len;) {
		fprintf(f, "%s\"%s\"", i ? ", " : "", s + i);	// plain ASCII words
		i += strlen(s + i) + 1;
	}
	fprintf(f, "],\n");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkpydump OUTDIR\n");
		return 2;
	}
	struct sk_opts o = { .format = SK_ELF, .ntasks = 12, .cpus = 2, .procs = SK_PROCS_LIST,
			     .sys = SK_SYS_NEW, .edit = capture };
	sk_write_files(argv[1], &o);
	char path[4096];
	snprintf(path, sizeof(path), "%s/truth.json", argv[1]);
	FILE *f = fopen(path, "w");
	if (!f)
		sk_die(path);
	fprintf(f, "{\n  \"tasks\": [");
	for (unsigned i = 0; i <= o.ntasks; i++) {
		char comm[16];
		if (i == 0)
			snprintf(comm, sizeof(comm), "swapper/0");
		else if (i == 1)
			snprintf(comm, sizeof(comm), "init");
		else
			snprintf(comm, sizeof(comm), "task%u", i);
		fprintf(f, "%s[%" PRIu64 ", %u, \"%s\"]", i ? ", " : "", sk_task_va(&o, i), i, comm);
	}
	fprintf(f, "],\n");
	words(f, "args", SKP_ARGS, sizeof(SKP_ARGS) - 1);
	words(f, "env", SKP_ENV, sizeof(SKP_ENV));
	fprintf(f, "  \"jiffies\": %" PRIu64 ",\n", jiffies);
	fprintf(f, "  \"avenrun\": [%" PRIu64 ", %" PRIu64 ", %" PRIu64 "],\n", avenrun[0],
		avenrun[1], avenrun[2]);
	fprintf(f, "  \"online_cpus\": [");
	for (unsigned c = 0, n = 0; c < 64; c++)
		if (online >> c & 1)
			fprintf(f, "%s%u", n++ ? ", " : "", c);
	fprintf(f, "],\n");
	fprintf(f, "  \"banner\": \"%.*s\",\n", (int)strcspn(banner, "\n\""), banner);
	static const char *const mod_names[] = SKS_MOD_NAMES;
	static const uint32_t mod_sizes[] = SKS_MOD_SIZES;
	fprintf(f, "  \"modules\": [[\"%s\", %u], [\"%s\", %u]],\n", mod_names[0], mod_sizes[0],
		mod_names[1], mod_sizes[1]);
	// Where search finds task 1's arguments (synthprocs.h): "/bin/sh" at
	// the start of its argument area in user page A, which its 2 MiB
	// mapping of physical 0 shows too, and the direct map; "echo hi" runs
	// from page A into page B, below A in physical memory.
	fprintf(f, "  \"search\": {\"bin_sh_user\": [%" PRIu64 ", %" PRIu64 "], \"bin_sh_kernel\": %" PRIu64
		", \"echo_hi_user\": %" PRIu64 "},\n", SKP_U_HUGE + SKP_UPAGE_A + (SKP_ARG_START & 0xfff),
		SKP_ARG_START, SKP_VA(SKP_UPAGE_A + (SKP_ARG_START & 0xfff)),
		SKP_ARG_START + sizeof("/bin/sh\0-c"));
	// Two files of synthprocs.h: (struct vfsmount *, struct dentry *, path).
	fprintf(f, "  \"paths\": [[%" PRIu64 ", %" PRIu64 ", \"/tmp/log.txt\"], [%" PRIu64 ", %" PRIu64
		", \"/bin/sh\"]],\n", SKP_VA(SKP_MOUNT(SKP_M_TMP)) + SKP_MOUNT_MNT,
		SKP_VA(SKP_DENTRY(SKP_D_LOG)), SKP_VA(SKP_MOUNT(SKP_M_ROOT)) + SKP_MOUNT_MNT,
		SKP_VA(SKP_DENTRY(SKP_D_SH)));
	fprintf(f, "  \"rbtree\": {\"root\": %" PRIu64 ", \"inorder\": [", SKP_VA(RB_ROOT));
	for (int i = 0; i < 5; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "", SKP_VA(RB(i)));
	fprintf(f, "]},\n  \"hlist\": {\"head\": %" PRIu64 ", \"nodes\": [", SKP_VA(HHEAD));
	for (int i = 0; i < 3; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "", SKP_VA(HNODE(i)));
	fprintf(f, "]},\n");
	// Task 1's mm_struct, in pages: file, anon, swap, shmem counters.
	const struct skp_mm_sizes *mm = &skp_mm_sizes;
	fprintf(f, "  \"mm1\": {\"total_vm\": %" PRIu64 ", \"hiwater_rss\": %" PRIu64 ", \"rss\": [%" PRId64
		", %" PRId64 ", %" PRId64 ", %" PRId64 "]},\n", mm->total_vm, mm->hiwater_rss, mm->rss[0],
		mm->rss[1], mm->rss[2], mm->rss[3]);
	// CPU 1's run queue (a per-CPU variable at SKS_PC_RQ) and its unit.
	fprintf(f, "  \"percpu\": {\"runqueues_cpu1\": %" PRIu64 ", \"unit\": %u},\n", SKP_VA(SKS_RQ(1)),
		SKS_PCPU_UNIT);
	fprintf(f, "  \"init_task\": %" PRIu64 ",\n", (uint64_t)SK_INIT_TASK);
	fprintf(f, "  \"task_size\": %" PRIu64 ",\n", sk_task_size(&o));
	fprintf(f, "  \"task_offsets\": {\"tasks\": %d, \"pid\": %d, \"comm\": %d, "
		"\"real_parent\": %d}\n}\n", SK_T_TASKS, SK_T_PID, SK_T_COMM, SK_T_REAL_PARENT);
	if (fclose(f))
		sk_die(path);
	return 0;
}
