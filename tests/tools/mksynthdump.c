// SPDX-License-Identifier: MIT
// mksynthdump OUTDIR: writes the synthetic kernel of tests/gen/synthkernel.h
// as a physical-only ELF dump with two CPUs and one task besides init_task,
// and its side files, for the CLI shell tests (tests/cli/run):
//
//   OUTDIR/synth.core      ELF core, p_vaddr = 0 (like QEMU dump-guest-memory)
//   OUTDIR/synth.kallsyms  the same symbols as a kallsyms text file
//   OUTDIR/synth.btf       the same BTF as a raw file
//   OUTDIR/synth.layout    the addresses, as shell assignments
#include <stdio.h>

#include "synthkernel.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mksynthdump OUTDIR\n");
		return 2;
	}
	struct sk_opts o = { .format = SK_ELF, .ntasks = 1, .cpus = 2 };
	sk_write_files(argv[1], &o);
	return 0;
}
