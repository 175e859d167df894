// mksynthdump OUTDIR: writes a synthetic physical-only ELF dump of a small
// x86-64 "kernel" for the CLI shell tests (tests/cli/run), and its side files:
//
//   OUTDIR/synth.core      ELF core, p_vaddr = 0 (like QEMU dump-guest-memory),
//                          VMCOREINFO, 2 CPUs (NT_PRSTATUS + QEMU notes), 4-level
//                          page tables, the kernel's in-memory kallsyms tables,
//                          a .BTF blob between __start_BTF and __stop_BTF, an
//                          init_task and one more task, and a hole in the image
//   OUTDIR/synth.kallsyms  the same symbols as a kallsyms text file
//   OUTDIR/synth.btf       the same BTF as a raw file
//   OUTDIR/synth.layout    the addresses below, as shell assignments
//
// Layout (KASLR offset 0x1e000000; phys_base "negative" as with physical
// KASLR, the kernel image at physical 0x200000):
//   _text        0xffffffff9f000000 -> phys 0x200000 (2 x 2 MiB pages)
//   data         _text + 0x100000: linux_banner, avenrun, jiffies, ...
//   hole         _text + 0x110000 .. + 0x120000 (absent from the dump)
//   kallsyms     _text + 0x180000      BTF  _text + 0x1c0000
//   init_top_pgt _text + 0x200000 = phys 0x400000 (page tables from there)
//   direct map   0xffff888000000000 -> phys 0 (1 GiB page)
//   vmalloc      0xffffc90000000000 -> phys 0x3000 (4 KiB, NX);
//                +0x1000: PTE not present; +0x200000: PMD entry 0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <linux/btf.h>

#include "../gen/mkcore.h"
#include "../gen/mkkallsyms.h"
#include "../gen/mkpgtable.h"

#define START_KERNEL_MAP UINT64_C(0xffffffff80000000)
#define KASLR UINT64_C(0x1e000000)
#define TEXT (UINT64_C(0xffffffff81000000) + KASLR)
#define TEXT_PA UINT64_C(0x200000)
#define PHYS_BASE (TEXT_PA - (TEXT - START_KERNEL_MAP))
#define DATA (TEXT + 0x100000)
#define HOLE (TEXT + 0x110000)
#define HOLE_END (TEXT + 0x120000)
#define KALLSYMS (TEXT + 0x180000)
#define BTF_VA (TEXT + 0x1c0000)
#define PGT (TEXT + 0x200000)
#define DIRECT UINT64_C(0xffff888000000000)
#define VMALLOC UINT64_C(0xffffc90000000000)
#define TASK2_PA UINT64_C(0x100000)

// Data symbols, at DATA + offset.
#define OFF_BANNER 0x000
#define OFF_AVENRUN 0x100
#define OFF_JIFFIES 0x120
#define OFF_POB 0x128
#define OFF_PTRS 0x140
#define OFF_EVIL 0x180
#define OFF_INIT_TASK 0x200
#define HOLE_START (HOLE - 8)

// struct task_struct of the synthetic BTF (not the real 6.1 layout; kpeek
// takes every offset from BTF).
#define T_STATE 0x00
#define T_FLAGS 0x04
#define T_TASKS 0x10
#define T_PID 0x20
#define T_TGID 0x24
#define T_REAL_PARENT 0x28
#define T_PARENT 0x30
#define T_COMM 0x40
#define T_SIZE 0x80

static const char banner[] =
	"Linux version 6.1.0-synth (kpeek@test) (gcc 12.2.0) #1 SMP PREEMPT_DYNAMIC\n";
static const char evil[] = "ok\x1b[2Jbad\xff\xfe\x01" "end";

static void die(const char *what, const char *why)
{
	fprintf(stderr, "mksynthdump: %s: %s\n", what, why);
	exit(1);
}

static void check(struct kp_error *err, const char *what)
{
	if (err)
		die(what, kp_error_message(err));
}

static void put64(uint8_t *buf, uint64_t pa, uint64_t v)
{
	memcpy(buf + pa, &v, 8);
}

static void put32(uint8_t *buf, uint64_t pa, uint32_t v)
{
	memcpy(buf + pa, &v, 4);
}

static uint64_t image_pa(uint64_t va)
{
	return va - TEXT + TEXT_PA;
}

static void check_id(int id, const char *what)
{
	if (id < 0)
		die("BTF", what);
}

static struct btf *make_btf(void)
{
	struct btf *b = btf__new_empty();
	if (!b)
		die("BTF", "btf__new_empty failed");
	int t_int = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	int t_uint = btf__add_int(b, "unsigned int", 4, 0);
	int t_char = btf__add_int(b, "char", 1, BTF_INT_CHAR);
	int t_ulong = btf__add_int(b, "long unsigned int", 8, 0);
	check_id(t_int | t_uint | t_char | t_ulong, "ints");
	int comm = btf__add_array(b, t_int, t_char, 16);
	check_id(comm, "comm");
	// Fields must directly follow their struct, so the pointers come first,
	// referring to the struct ids that follow them.
	int p_lh = btf__add_ptr(b, comm + 3);
	int p_task = btf__add_ptr(b, comm + 4);
	check_id(p_lh | p_task, "pointers");
	int lh = btf__add_struct(b, "list_head", 16);
	check_id(lh, "list_head");
	check_id(btf__add_field(b, "next", p_lh, 0, 0), "next");
	check_id(btf__add_field(b, "prev", p_lh, 64, 0), "prev");
	int task = btf__add_struct(b, "task_struct", T_SIZE);
	if (lh != comm + 3 || task != comm + 4)
		die("BTF", "unexpected type ids");
	check_id(btf__add_field(b, "__state", t_uint, T_STATE * 8, 0), "__state");
	check_id(btf__add_field(b, "flags", t_uint, T_FLAGS * 8, 0), "flags");
	check_id(btf__add_field(b, "tasks", lh, T_TASKS * 8, 0), "tasks");
	check_id(btf__add_field(b, "pid", t_int, T_PID * 8, 0), "pid");
	check_id(btf__add_field(b, "tgid", t_int, T_TGID * 8, 0), "tgid");
	check_id(btf__add_field(b, "real_parent", p_task, T_REAL_PARENT * 8, 0), "real_parent");
	check_id(btf__add_field(b, "parent", p_task, T_PARENT * 8, 0), "parent");
	check_id(btf__add_field(b, "comm", comm, T_COMM * 8, 0), "comm");
	return b;
}

static void write_task(uint8_t *buf, uint64_t pa, uint64_t va, int pid, const char *comm,
		       uint32_t flags, uint64_t next, uint64_t prev, uint64_t parent)
{
	put32(buf, pa + T_STATE, 0);
	put32(buf, pa + T_FLAGS, flags);
	put64(buf, pa + T_TASKS, next);
	put64(buf, pa + T_TASKS + 8, prev);
	put32(buf, pa + T_PID, (uint32_t)pid);
	put32(buf, pa + T_TGID, (uint32_t)pid);
	put64(buf, pa + T_REAL_PARENT, parent);
	put64(buf, pa + T_PARENT, parent);
	memset(buf + pa + T_COMM, 0, 16);
	memcpy(buf + pa + T_COMM, comm, strlen(comm));
	(void)va;
}

static FILE *open_out(const char *dir, const char *name, char **path_ret)
{
	char *path;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		die("asprintf", strerror(errno));
	FILE *f = fopen(path, "w");
	if (!f)
		die(path, strerror(errno));
	*path_ret = path;
	return f;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mksynthdump OUTDIR\n");
		return 2;
	}
	const char *dir = argv[1];

	struct kp_mkpgtable *pg;
	char spec[1024];
	snprintf(spec, sizeof(spec),
		 "levels 4\nram 4M\ntables 0x400000\nmaxtables 64\n"
		 "map 0x%" PRIx64 " 0x%" PRIx64 " 2M 2\n"
		 "map 0x%" PRIx64 " 0 1G\n"
		 "map 0x%" PRIx64 " 0x3000 4K nx\n"
		 "set 0x%" PRIx64 " PTE 0\n",
		 TEXT, TEXT_PA, DIRECT, VMALLOC, VMALLOC + 0x1000);
	check(kp_mkpgtable_create(spec, &pg), "page tables");
	if (pg->root != image_pa(PGT))
		die("page tables", "root not at 0x400000");
	uint8_t *m = pg->buf;

	// Kernel text: recognizable bytes (int3 padding, a nop sled).
	memset(m + TEXT_PA, 0xcc, 0x3000);
	memset(m + TEXT_PA + 0x1000, 0x90, 0x10);

	// Data.
	memset(m + image_pa(DATA), 0, 0x1000);
	memcpy(m + image_pa(DATA + OFF_BANNER), banner, sizeof(banner));
	// avenrun: 0.41, 0.35, 0.20 in FSHIFT 11 fixed point.
	put64(m, image_pa(DATA + OFF_AVENRUN), 0x347);
	put64(m, image_pa(DATA + OFF_AVENRUN + 8), 0x2d0);
	put64(m, image_pa(DATA + OFF_AVENRUN + 16), 0x19a);
	put64(m, image_pa(DATA + OFF_JIFFIES), UINT64_C(0x100003039));
	put64(m, image_pa(DATA + OFF_POB), DIRECT);
	put64(m, image_pa(DATA + OFF_PTRS), TEXT + 0x1010);
	put64(m, image_pa(DATA + OFF_PTRS + 8), DATA + OFF_INIT_TASK);
	put64(m, image_pa(DATA + OFF_PTRS + 16), 0);
	put64(m, image_pa(DATA + OFF_PTRS + 24), DIRECT + TASK2_PA);
	memcpy(m + image_pa(DATA + OFF_EVIL), evil, sizeof(evil));
	uint64_t init_task = DATA + OFF_INIT_TASK, task2 = DIRECT + TASK2_PA;
	write_task(m, image_pa(init_task), init_task, 0, "swapper/0", 0x00200002,
		   task2 + T_TASKS, task2 + T_TASKS, init_task);
	memset(m + TASK2_PA, 0, T_SIZE);
	write_task(m, TASK2_PA, task2, 1, "init", 0x00400100, init_task + T_TASKS,
		   init_task + T_TASKS, init_task);
	put64(m, image_pa(HOLE_START), UINT64_C(0x1122334455667788));

	// BTF.
	struct btf *btf = make_btf();
	uint32_t btf_size;
	const void *btf_raw = btf__raw_data(btf, &btf_size);
	if (!btf_raw || btf_size > 0x40000)
		die("BTF", "no raw data or too big");
	memcpy(m + image_pa(BTF_VA), btf_raw, btf_size);

	// Symbols (sorted by address as nm -n; kallsyms tables come from VMCOREINFO).
	const struct kp_mkkallsyms_sym syms[] = {
		{ "_text", 'T', TEXT },
		{ "startup_64", 'T', TEXT },
		{ "schedule", 'T', TEXT + 0x1000 },
		{ "do_syscall_64", 'T', TEXT + 0x1100 },
		{ "_etext", 'T', TEXT + 0x3000 },
		{ "linux_banner", 'D', DATA + OFF_BANNER },
		{ "avenrun", 'D', DATA + OFF_AVENRUN },
		{ "jiffies", 'D', DATA + OFF_JIFFIES },
		{ "page_offset_base", 'D', DATA + OFF_POB },
		{ "synth_ptrs", 'D', DATA + OFF_PTRS },
		{ "evil_string", 'd', DATA + OFF_EVIL },
		{ "init_task", 'D', init_task },
		{ "hole_start", 'd', HOLE_START },
		{ "__start_BTF", 'R', BTF_VA },
		{ "__stop_BTF", 'R', BTF_VA + btf_size },
		{ "init_top_pgt", 'D', PGT },
		{ "_end", 'B', PGT + 0x10000 },
	};
	const size_t nsyms = sizeof(syms) / sizeof(syms[0]);
	struct kp_mkkallsyms ks;
	check(kp_mkkallsyms_build(syms, nsyms, KALLSYMS, 0, &ks), "kallsyms");
	if (ks.size > 0x40000)
		die("kallsyms", "tables too big");
	memcpy(m + image_pa(KALLSYMS), ks.buf, ks.size);

	// The dump.
	struct mkcore *mc = mkcore_create();
	char vmci[2048];
	snprintf(vmci, sizeof(vmci),
		 "OSRELEASE=6.1.0-synth\nPAGESIZE=4096\n"
		 "SYMBOL(swapper_pg_dir)=%" PRIx64 "\n"
		 "SYMBOL(init_top_pgt)=%" PRIx64 "\n"
		 "SYMBOL(_stext)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_names)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_num_syms)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_token_table)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_token_index)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_offsets)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_relative_base)=%" PRIx64 "\n"
		 "NUMBER(phys_base)=%" PRId64 "\n"
		 "NUMBER(pgtable_l5_enabled)=0\n"
		 "KERNELOFFSET=%" PRIx64 "\n",
		 PGT, PGT, TEXT, ks.tables.names, ks.tables.num_syms, ks.tables.token_table,
		 ks.tables.token_index, ks.tables.offsets, ks.tables.relative_base,
		 (int64_t)PHYS_BASE, KASLR);
	mkcore_add_vmcoreinfo(mc, vmci);
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		mkcore_add_prstatus(mc, cpu, TEXT + 0x1000, DIRECT + 0x8000 + cpu * 0x1000, 0x10, 0);
		struct mkcore_qemu_cpu q = {
			.rip = TEXT + 0x1000,
			.cr0 = 0x80050033,
			.cr3 = pg->root,
			.cr4 = 0x3506f0,
			.cs_selector = 0x10,
		};
		mkcore_add_qemu_cpu(mc, &q);
	}
	// Physical memory in two pieces around the hole.
	uint64_t hole_pa = image_pa(HOLE), hole_end_pa = image_pa(HOLE_END);
	mkcore_add_load(mc, 0, 0, m, hole_pa, hole_pa);
	mkcore_add_load(mc, 0, hole_end_pa, m + hole_end_pa, pg->size - hole_end_pa,
			pg->size - hole_end_pa);

	char *path;
	FILE *f = open_out(dir, "synth.core", &path);
	fclose(f);
	if (mkcore_write(mc, path) < 0)
		die(path, strerror(errno));
	free(path);

	f = open_out(dir, "synth.kallsyms", &path);
	for (size_t i = 0; i < nsyms; i++)
		fprintf(f, "%016" PRIx64 " %c %s\n", syms[i].address, syms[i].type, syms[i].name);
	if (fclose(f))
		die(path, strerror(errno));
	free(path);

	f = open_out(dir, "synth.btf", &path);
	if (fwrite(btf_raw, 1, btf_size, f) != btf_size || fclose(f))
		die(path, strerror(errno));
	free(path);

	f = open_out(dir, "synth.layout", &path);
	fprintf(f, "TEXT=0x%" PRIx64 "\nDATA=0x%" PRIx64 "\nHOLE=0x%" PRIx64 "\n"
		   "INIT_TASK=0x%" PRIx64 "\nTASK2=0x%" PRIx64 "\nPGD=0x%" PRIx64 "\n"
		   "DIRECT=0x%" PRIx64 "\nVMALLOC=0x%" PRIx64 "\nPHYS_BASE=0x%" PRIx64 "\n",
		TEXT, DATA, HOLE, init_task, task2, pg->root, DIRECT, VMALLOC, PHYS_BASE);
	if (fclose(f))
		die(path, strerror(errno));
	free(path);

	mkcore_destroy(mc);
	kp_mkkallsyms_deinit(&ks);
	btf__free(btf);
	kp_mkpgtable_destroy(pg);
	return 0;
}
