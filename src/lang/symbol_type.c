// SPDX-License-Identifier: MIT
// The value of a kernel symbol in an expression (symbol_type.h). Kernel BTF
// records types but, apart from per-CPU variables, no VAR entries for
// globals (pahole before 1.24 / kernels before CONFIG_DEBUG_INFO_BTF's
// global-var support): the type of init_task is not in BTF. A curated table
// of long-stable globals fills that gap (plus the architecture's own, from
// its struct kp_arch); the user can always cast.
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "arch/arch.h"
#include "core/kernel.h"
#include "lang/symbol_type.h"
#include "lang/typename.h"
#include "lang/value.h"
#include "types/types.h"
#include "util/error.h"

// C types of well-known globals; "A|B" tries A, then B (B for kernels or BTF
// without A); "[]" takes its length from the symbol's size when known.
static const struct kp_var_type curated[] = {
	// tasks, namespaces, processes
	{ "init_task", "struct task_struct" },
	{ "init_mm", "struct mm_struct" },
	{ "init_nsproxy", "struct nsproxy" },
	{ "init_pid_ns", "struct pid_namespace" },
	{ "init_uts_ns", "struct uts_namespace" },
	{ "init_ipc_ns", "struct ipc_namespace" },
	{ "init_user_ns", "struct user_namespace" },
	{ "init_net", "struct net" },
	{ "init_files", "struct files_struct" },
	{ "init_fs", "struct fs_struct" },
	{ "init_cred", "struct cred" },
	{ "init_signals", "struct signal_struct" },
	{ "init_sighand", "struct sighand_struct" },
	{ "init_struct_pid", "struct pid" },
	{ "init_css_set", "struct css_set" },
	{ "nr_threads", "int" },
	{ "total_forks", "unsigned long" },
	{ "pid_max", "int" },
	// time and load
	{ "jiffies", "unsigned long" },
	{ "jiffies_64", "u64" },
	{ "avenrun", "unsigned long[3]" },
	{ "loops_per_jiffy", "unsigned long" },
	// modules, syscalls, kallsyms
	{ "modules", "struct list_head" },
	{ "kallsyms_num_syms", "unsigned int" },
	// printk
	{ "prb", "struct printk_ringbuffer *" },
	{ "printk_rb_static", "struct printk_ringbuffer" },
	{ "printk_rb_dynamic", "struct printk_ringbuffer" },
	{ "console_drivers", "struct console *" },
	{ "linux_banner", "char[]" },
	{ "linux_proc_banner", "char[]" },
	{ "boot_command_line", "char[]" },
	{ "saved_command_line", "char *" },
	{ "modprobe_path", "char[]" },
	{ "core_pattern", "char[]" },
	{ "poweroff_cmd", "char[]" },
	// memory
	{ "max_pfn", "unsigned long" },
	{ "max_low_pfn", "unsigned long" },
	{ "high_memory", "void *" },
	{ "totalram_pages", "atomic_long_t" },
	{ "_totalram_pages", "atomic_long_t" },
	{ "totalreserve_pages", "unsigned long" },
	{ "nr_swap_pages", "atomic_long_t" },
	{ "vm_zone_stat", "atomic_long_t[]" },
	{ "vm_node_stat", "atomic_long_t[]" },
	{ "mem_section", "struct mem_section **" },
	{ "node_data", "struct pglist_data *[]" },
	{ "contig_page_data", "struct pglist_data" },
	{ "vmap_area_list", "struct list_head" },
	{ "slab_caches", "struct list_head" },
	// CPUs
	{ "nr_cpu_ids", "unsigned int" },
	{ "__per_cpu_offset", "unsigned long[]" },
	{ "__cpu_online_mask", "struct cpumask" },
	{ "__cpu_possible_mask", "struct cpumask" },
	{ "__cpu_present_mask", "struct cpumask" },
	{ "__cpu_active_mask", "struct cpumask" },
	{ "cpu_online_mask", "struct cpumask" },
	{ "nr_irqs", "int" },
	// system state and knobs
	{ "system_state", "enum system_states" },
	{ "tainted_mask", "unsigned long" },
	{ "panic_timeout", "int" },
	{ "panic_on_oops", "int" },
	{ "oops_in_progress", "int" },
	{ "kptr_restrict", "int" },
	{ "dmesg_restrict", "int" },
	{ "debug_locks", "int" },
	// file systems, cgroups, workqueues
	{ "super_blocks", "struct list_head" },
	{ "file_systems", "struct file_system_type *" },
	{ "cgroup_roots", "struct list_head" },
	{ "system_wq", "struct workqueue_struct *" },
};

#define MAX_CURATED_ELEMS (1u << 20)

static const char *curated_type(struct kp_kernel *k, const char *name)
{
	for (size_t i = 0; i < sizeof(curated) / sizeof(curated[0]); i++)
		if (strcmp(curated[i].name, name) == 0)
			return curated[i].type;
	const struct kp_var_type *arch = kp_kernel_arch(k)->var_types;
	for (size_t i = 0; arch && arch[i].name; i++)
		if (strcmp(arch[i].name, name) == 0)
			return arch[i].type;
	return NULL;
}

// Tries each '|' alternative; an unknown-length array gets its length from
// the symbol size.
static bool curated_resolve(struct kp_types *types, const char *spec, uint64_t sym_size,
			    uint32_t *ret)
{
	struct btf *btf = kp_types_btf(types);
	while (*spec) {
		const char *bar = strchr(spec, '|');
		size_t len = bar ? (size_t)(bar - spec) : strlen(spec);
		char buf[128];
		if (len < sizeof(buf)) {
			memcpy(buf, spec, len);
			buf[len] = '\0';
			uint32_t id;
			struct kp_error *err = kp_parse_type(types, buf, &id);
			if (!err) {
				const struct btf_type *t = btf__type_by_id(btf, kp_btf_strip(btf, id));
				if (t && btf_is_array(t) && btf_array(t)->nelems == 0 && sym_size) {
					uint32_t elem = btf_array(t)->type;
					uint64_t esize = kp_btf_size(btf, elem);
					uint64_t n = esize ? sym_size / esize : 0;
					if (n > MAX_CURATED_ELEMS)
						n = MAX_CURATED_ELEMS;
					if (n && kp_types_array_of(types, elem, (uint32_t)n, &id) == NULL) {
						*ret = id;
						return true;
					}
				}
				*ret = id;
				return true;
			}
			kp_error_destroy(err);
		}
		spec += len + (bar ? 1 : 0);
	}
	return false;
}

// An enumerator (MODULE_STATE_LIVE, PIDTYPE_PID) as an rvalue of its enum.
static bool enumerator(struct kp_kernel *k, struct kp_types *types, const char *name,
		       struct kp_value **ret)
{
	uint32_t type;
	uint64_t val;
	if (!kp_types_enumerator(types, name, &type, &val))
		return false;
	struct kp_error *err = kp_value_from_u64(k, type, val, ret);
	kp_error_destroy(err);
	return !err;
}

// A function value: its BTF prototype, or "void (...)" when any_proto and
// BTF has no FUNC of that name. Returns NULL with *ret untouched when BTF
// has none and !any_proto.
static struct kp_error *function(struct kp_kernel *k, struct kp_types *types, const char *name,
				 uint64_t address, bool any_proto, struct kp_value **ret)
{
	const struct btf *btf = kp_types_btf(types);
	uint32_t id = 0;
	struct kp_error *err = kp_types_find(types, BTF_KIND_FUNC, name, &id);
	const struct btf_type *t = err ? NULL : btf__type_by_id(btf, id);
	kp_error_destroy(err);
	if (t && t->type && btf__type_by_id(btf, t->type) &&
	    btf_is_func_proto(btf__type_by_id(btf, t->type)))
		id = t->type;
	else if (!any_proto)
		return NULL;
	else if ((err = kp_types_unknown_func(types, &id)))
		return err;
	return kp_value_lvalue(k, id, address, ret);
}

struct kp_error *kp_resolve_symbol(struct kp_kernel *k, const char *name, struct kp_value **ret)
{
	struct kp_types *types = NULL;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (err)
		return err;
	struct kp_symbol sym;
	// Names that are enumerators are common (WORKER_ID_LEN, TASK_COMM_LEN):
	// the error for an unknown symbol, which suggests names from the
	// whole table, only when it is neither.
	if (!kp_symbol_find(k, name, &sym)) {
		if (enumerator(k, types, name, ret))
			return NULL;
		err = kp_symbol_by_name(k, name, &sym);
		if (err)
			return err;
	}
	uint32_t type;
	bool percpu;
	if (kp_types_var(types, name, &type, &percpu)) {
		if ((err = kp_value_lvalue(k, type, sym.address, ret)) || !percpu)
			return err;
		(*ret)->percpu = true;
		(*ret)->symbol = strdup(name);
		return NULL;
	}
	const char *spec = curated_type(k, name);
	if (spec && curated_resolve(types, spec, sym.size, &type))
		return kp_value_lvalue(k, type, sym.address, ret);
	// The section the address lies in outranks the kallsyms letter: 7.x
	// x86-64 kallsyms types variables such as panic_cpu 'T'.
	enum kp_section sec = kp_kernel_section(k, sym.address);
	bool data = sec == KP_SEC_RODATA || sec == KP_SEC_DATA || sec == KP_SEC_BSS;
	if ((sym.type == 't' || sym.type == 'T') && !data)
		return function(k, types, name, sym.address, true, ret);
	// Weak symbols and those of unknown kind (VMCOREINFO) may be functions.
	struct kp_value *v = NULL;
	if (!strchr("dDbBrRvV", sym.type) && !data) {
		if ((err = function(k, types, name, sym.address, false, &v)))
			return err;
		if (v) {
			*ret = v;
			return NULL;
		}
	}
	if ((err = kp_value_lvalue(k, 0, sym.address, &v)))
		return err;
	v->untyped = true;
	v->symbol = strdup(name);
	if (!v->symbol) {
		kp_value_destroy(v);
		return &kp_enomem;
	}
	*ret = v;
	return NULL;
}

