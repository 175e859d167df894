// SPDX-License-Identifier: MIT
// The architectures kpeek supports, and how an open kernel finds its own.
#include <elf.h>
#include <string.h>

#include "arch/arch.h"

const struct kp_arch *const kp_arches[] = {
	&kp_arch_x86_64,
	&kp_arch_arm64,
	NULL,
};

const struct kp_arch *kp_arch_by_name(const char *name)
{
	for (size_t i = 0; kp_arches[i]; i++)
		if (!strcmp(kp_arches[i]->name, name))
			return kp_arches[i];
	// The names other tools use.
	if (!strcmp(name, "amd64") || !strcmp(name, "x86-64"))
		return kp_arch_by_name("x86_64");
	if (!strcmp(name, "aarch64"))
		return kp_arch_by_name("arm64");
	return NULL;
}

const struct kp_arch *kp_arch_by_elf_machine(unsigned machine)
{
	for (size_t i = 0; kp_arches[i]; i++)
		if (kp_arches[i]->elf_machine == machine)
			return kp_arches[i];
	return NULL;
}

const struct kp_arch *kp_arch_by_uts_machine(const char *machine)
{
	for (size_t i = 0; kp_arches[i]; i++)
		for (const char *const *m = kp_arches[i]->uts_machines; *m; m++)
			if (!strcmp(*m, machine))
				return kp_arches[i];
	return NULL;
}

const struct kp_arch *kp_arch_by_vmcoreinfo(const struct kp_vmcoreinfo *vi)
{
	const struct kp_arch *found = NULL;
	for (size_t i = 0; kp_arches[i]; i++) {
		if (!kp_arches[i]->vmcoreinfo_is_mine(vi))
			continue;
		if (found)
			return NULL;	// ambiguous: let the caller ask for --arch
		found = kp_arches[i];
	}
	return found;
}

const char *kp_elf_machine_name(unsigned machine)
{
	switch (machine) {
	case EM_386: return "i386";
	case EM_PPC: return "ppc";
	case EM_PPC64: return "ppc64";
	case EM_S390: return "s390";
	case EM_ARM: return "arm";
	case EM_X86_64: return "x86_64";
	case EM_AARCH64: return "aarch64";
	case EM_RISCV: return "riscv";
	case EM_LOONGARCH: return "loongarch";
	case EM_MIPS: return "mips";
	}
	return "unknown";
}
