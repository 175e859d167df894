// SPDX-License-Identifier: MIT
// The core kernel's sections, from the marker symbols the linker script
// defines on every architecture (include/asm-generic/vmlinux.lds.h): what a
// symbol is does not always follow its kallsyms letter (7.x x86-64 kallsyms
// types variables such as init_task and panic_cpu 'T'), but its address
// says which section holds it. The markers are kept in kallsyms even
// without CONFIG_KALLSYMS_ALL.
#include "core/kernel_impl.h"
#include "symbols/symtab.h"

static const struct {
	const char *start, *end, *name;
} markers[KP_NSECTIONS] = {
	[KP_SEC_TEXT] = { "_stext", "_etext", "text" },
	[KP_SEC_RODATA] = { "__start_rodata", "__end_rodata", "rodata" },
	[KP_SEC_DATA] = { "_sdata", "_edata", "data" },
	[KP_SEC_INIT] = { "__init_begin", "__init_end", "init" },
	[KP_SEC_BSS] = { "__bss_start", "__bss_stop", "bss" },
};

static void load(struct kp_kernel *k)
{
	k->sections_loaded = true;
	for (int i = KP_SEC_TEXT; i < KP_NSECTIONS; i++) {
		struct kp_symbol s, e;
		if (kp_symtab_find(k->symtab, markers[i].start, &s) &&
		    kp_symtab_find(k->symtab, markers[i].end, &e) && s.address < e.address) {
			k->section_start[i] = s.address;
			k->section_end[i] = e.address;
		}
	}
}

enum kp_section kp_kernel_section(struct kp_kernel *k, uint64_t address)
{
	if (!k->sections_loaded)
		load(k);
	// The ranges do not overlap (an unknown one is [0, 0)).
	for (int sec = KP_SEC_TEXT; sec < KP_NSECTIONS; sec++)
		if (address >= k->section_start[sec] && address < k->section_end[sec])
			return (enum kp_section)sec;
	return KP_SEC_NONE;
}

void kp_kernel_section_type(struct kp_kernel *k, struct kp_symbol *sym)
{
	static const char letter[KP_NSECTIONS] = { [KP_SEC_RODATA] = 'R', [KP_SEC_DATA] = 'D',
						   [KP_SEC_BSS] = 'B' };
	if (sym->module || (sym->type != 'T' && sym->type != 't'))
		return;
	enum kp_section sec = kp_kernel_section(k, sym->address);
	if (sec <= KP_SEC_NONE || sec >= KP_NSECTIONS || !letter[sec] ||
	    sym->address == k->section_start[sec])
		return;
	sym->type = sym->type == 'T' ? letter[sec] : (char)(letter[sec] - 'A' + 'a');
}

const char *kp_section_name(enum kp_section section)
{
	return section > KP_SEC_NONE && section < KP_NSECTIONS ? markers[section].name : NULL;
}

bool kp_kernel_percpu_section(struct kp_kernel *k, uint64_t *start_ret, uint64_t *end_ret)
{
	struct kp_symbol s, e;
	if (!kp_symtab_find(k->symtab, "__per_cpu_start", &s) ||
	    !kp_symtab_find(k->symtab, "__per_cpu_end", &e) || s.address >= e.address)
		return false;
	*start_ret = s.address;
	*end_ret = e.address;
	return true;
}
