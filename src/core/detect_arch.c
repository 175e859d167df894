// SPDX-License-Identifier: MIT
// Which architecture a dump is, decided once when a kernel is opened: what
// the file says (an ELF core's e_machine, a kdump header's utsname machine,
// the keys only one architecture's kernels write into VMCOREINFO), the
// caller's --arch, and for a physical-only image that says nothing (LiME,
// raw) the vmcoreinfo page found in its RAM. A dump whose CPU notes the
// architecture cannot read is refused here, at open.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "core/detect_arch.h"
#include "core/locate.h"
#include "format/source.h"
#include "format/vmcoreinfo.h"
#include "util/error.h"

static const char *arch_names(void)
{
	static char buf[128];
	size_t pos = 0;
	for (size_t i = 0; kp_arches[i] && pos < sizeof(buf); i++)
		pos += snprintf(buf + pos, sizeof(buf) - pos, "%s%s", i ? ", " : "",
				kp_arches[i]->name);
	return buf;
}

// What the file itself says: ELF e_machine, a kdump header's machine, the
// VMCOREINFO note. NULL with *err NULL when it says nothing.
static const struct kp_arch *arch_from_source(const struct kp_source *src,
					      const struct kp_vmcoreinfo *vi, const char *path,
					      struct kp_error **err)
{
	*err = NULL;
	if (src->elf_machine) {
		const struct kp_arch *a = kp_arch_by_elf_machine(src->elf_machine);
		if (!a)
			*err = kp_error_create(KP_ERR_UNSUPPORTED,
					       "%s: ELF core for machine %u (%s) is not supported (kpeek reads %s)",
					       path, src->elf_machine,
					       kp_elf_machine_name(src->elf_machine), arch_names());
		return a;
	}
	if (src->machine[0]) {
		const struct kp_arch *a = kp_arch_by_uts_machine(src->machine);
		if (a)
			return a;
		// QEMU 7.2 writes "Unknown" for aarch64: fall through to VMCOREINFO.
	}
	if (vi)
		return kp_arch_by_vmcoreinfo(vi);
	return NULL;
}

// What the file says, checked against want (--arch).
static struct kp_error *choose_arch(const struct kp_source *src, const struct kp_vmcoreinfo *vi,
				    const char *path, const char *want_name,
				    const struct kp_arch **ret)
{
	struct kp_error *err;
	const struct kp_arch *a = arch_from_source(src, vi, path, &err);
	if (err)
		return err;
	if (want_name) {
		const struct kp_arch *want = kp_arch_by_name(want_name);
		if (!want)
			return kp_error_create(KP_ERR_INVALID,
					       "unknown architecture '%s' (kpeek reads %s)",
					       want_name, arch_names());
		if (a && a != want)
			return kp_error_create(KP_ERR_INVALID,
					       "%s is an %s dump, not %s", path, a->name, want->name);
		a = want;
	}
	if (!a && src->machine[0])
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: kdump dump of machine '%s' is not supported (kpeek reads %s)",
				       path, src->machine, arch_names());
	if (!a)
		return kp_error_create(KP_ERR_NOT_FOUND,
				       "%s: cannot tell the architecture (no ELF header, kdump machine or VMCOREINFO says it): pass --arch (%s)",
				       path, arch_names());
	*ret = a;
	return NULL;
}

// A physical-only source with no VMCOREINFO and no architecture in its
// header (LiME, raw): the first vmcoreinfo page in RAM says which kernel.
// Without one, and without CPU notes, nothing can locate the kernel.
// *ret stays NULL if the page found does not say it.
static struct kp_error *arch_from_memory(struct kp_memory *mem, const struct kp_source *src,
					 const char *path, const struct kp_arch **ret)
{
	uint64_t pa = 0;
	char *text;
	size_t len;
	struct kp_vmcoreinfo *vi;
	struct kp_error *err = kp_locate_vmcoreinfo_page(mem, &pa, &text, &len);
	if (err) {
		if (kp_error_code(err) != KP_ERR_NOT_FOUND || src->ncpus)
			return err;
		struct kp_error *why = kp_error_create(KP_ERR_NOT_FOUND,
			"%s: no VMCOREINFO note, %s, and no CPU registers in the dump: cannot locate the kernel without VMCOREINFO",
			path, kp_error_message(err));
		kp_error_destroy(err);
		return why;
	}
	if (kp_ok(kp_vmcoreinfo_parse(text, len, &vi))) {
		*ret = kp_arch_by_vmcoreinfo(vi);
		kp_vmcoreinfo_destroy(vi);
	}
	free(text);
	return NULL;
}

// Every CPU note must be one the architecture can read: a truncated note
// is a damaged dump, said at open rather than when a command needs it.
static struct kp_error *check_cpu_notes(const struct kp_source *src,
				       const struct kp_arch *arch, const char *path)
{
	for (size_t i = 0; i < src->ncpus; i++) {
		const struct kp_cpu_notes *n = &src->cpus[i];
		struct kp_regs regs;
		if (n->prstatus && !arch->prstatus_regs(n->prstatus, n->prstatus_len, &regs))
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: CORE NT_PRSTATUS note at offset 0x%" PRIx64
					       " has %zu bytes, too short for %s",
					       path, n->prstatus_at, n->prstatus_len, arch->name);
	}
	return NULL;
}

struct kp_error *kp_detect_arch(struct kp_memory *mem, const struct kp_source *src,
				const struct kp_vmcoreinfo *vi, const char *path,
				const char *want, bool physical_only,
				const struct kp_arch **ret)
{
	const struct kp_arch *arch = NULL;
	struct kp_error *err = choose_arch(src, vi, path, want, &arch);
	if (err) {
		if (!physical_only || kp_error_code(err) != KP_ERR_NOT_FOUND)
			return err;
		struct kp_error *why = arch_from_memory(mem, src, path, &arch);
		if (why) {
			kp_error_destroy(err);
			return why;
		}
		if (!arch)
			return err;
		kp_error_destroy(err);
	}
	if ((err = check_cpu_notes(src, arch, path)))
		return err;
	*ret = arch;
	return NULL;
}
