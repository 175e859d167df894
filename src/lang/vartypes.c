// Types and names: the type of a kernel symbol, C type names of BTF types,
// and layouts by name (kp_member_offset, kp_type_size). Kernel BTF records types but, apart from per-CPU variables,
// no VAR entries for globals (pahole before 1.24 / kernels before
// CONFIG_DEBUG_INFO_BTF's global-var support): the type of init_task is not
// in BTF. A curated table of long-stable globals fills that gap; the user can
// always cast.
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "types/btf.h"
#include "lang/expr.h"
#include "core/kernel.h"
#include "lang/value.h"

// C types of well-known globals; "A|B" tries A, then B (B for kernels or BTF
// without A); "[]" takes its length from the symbol's size when known.
static const struct {
	const char *name;
	const char *type;
} curated[] = {
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
	{ "sys_call_table", "sys_call_ptr_t[]|void *[]" },
	{ "ia32_sys_call_table", "sys_call_ptr_t[]|void *[]" },
	{ "x32_sys_call_table", "sys_call_ptr_t[]|void *[]" },
	{ "kallsyms_num_syms", "unsigned int" },
	{ "idt_table", "gate_desc[256]|struct gate_struct[256]" },
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
	// memory and paging (x86-64)
	{ "swapper_pg_dir", "pgd_t[512]" },
	{ "init_top_pgt", "pgd_t[512]" },
	{ "page_offset_base", "unsigned long" },
	{ "vmemmap_base", "unsigned long" },
	{ "vmalloc_base", "unsigned long" },
	{ "phys_base", "unsigned long" },
	{ "__supported_pte_mask", "pteval_t|unsigned long" },
	{ "__pgtable_l5_enabled", "unsigned int" },
	{ "ptrs_per_p4d", "unsigned int" },
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
	{ "boot_cpu_data", "struct cpuinfo_x86" },
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

static const char *curated_type(const char *name)
{
	for (size_t i = 0; i < sizeof(curated) / sizeof(curated[0]); i++)
		if (strcmp(curated[i].name, name) == 0)
			return curated[i].type;
	return NULL;
}

// Tries each '|' alternative; an unknown-length array gets its length from
// the symbol size.
static bool curated_resolve(struct kp_kernel *k, const char *spec, uint64_t sym_size,
			    uint32_t *ret)
{
	struct btf *btf = k->types->work;
	while (*spec) {
		const char *bar = strchr(spec, '|');
		size_t len = bar ? (size_t)(bar - spec) : strlen(spec);
		char buf[128];
		if (len < sizeof(buf)) {
			memcpy(buf, spec, len);
			buf[len] = '\0';
			uint32_t id;
			struct kp_error *err = kp_parse_type(k, buf, &id);
			if (!err) {
				const struct btf_type *t = btf__type_by_id(btf, kp_btf_strip(btf, id));
				if (t && btf_is_array(t) && btf_array(t)->nelems == 0 && sym_size) {
					uint32_t elem = btf_array(t)->type;
					uint64_t esize = kp_btf_size(btf, elem);
					uint64_t n = esize ? sym_size / esize : 0;
					if (n > MAX_CURATED_ELEMS)
						n = MAX_CURATED_ELEMS;
					if (n && kp_btf_array_of(k, elem, (uint32_t)n, &id) == NULL) {
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
static bool enumerator(struct kp_kernel *k, const char *name, struct kp_value **ret)
{
	struct btf *btf = k->types->work;
	uint32_t n = btf__type_cnt(btf);
	for (uint32_t i = 1; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(btf, i);
		if (!t || !btf_is_any_enum(t))
			continue;
		for (uint32_t j = 0; j < btf_vlen(t); j++) {
			uint32_t name_off;
			uint64_t val;
			if (btf_is_enum(t)) {
				name_off = btf_enum(t)[j].name_off;
				val = btf_kflag(t) ? (uint64_t)(int64_t)btf_enum(t)[j].val :
					(uint32_t)btf_enum(t)[j].val;
			} else {
				name_off = btf_enum64(t)[j].name_off;
				val = btf_enum64_value(&btf_enum64(t)[j]);
			}
			const char *s = btf__name_by_offset(btf, name_off);
			if (s && strcmp(s, name) == 0) {
				struct kp_error *err = kp_value_from_u64(k, i, val, ret);
				if (err) {
					kp_error_destroy(err);
					return false;
				}
				return true;
			}
		}
	}
	return false;
}

// A function value: its BTF prototype, or "void (...)" when any_proto and
// BTF has no FUNC of that name. Returns NULL with *ret untouched when BTF
// has none and !any_proto.
static struct kp_error *function(struct kp_kernel *k, const char *name, uint64_t address,
				 bool any_proto, struct kp_value **ret)
{
	uint32_t id = 0;
	struct kp_error *err = kp_btf_find(k, BTF_KIND_FUNC, name, &id);
	const struct btf_type *t = err ? NULL : btf__type_by_id(k->types->work, id);
	kp_error_destroy(err);
	if (t && t->type && btf__type_by_id(k->types->work, t->type) &&
	    btf_is_func_proto(btf__type_by_id(k->types->work, t->type)))
		id = t->type;
	else if (!any_proto)
		return NULL;
	else if ((err = kp_btf_unknown_func(k, &id)))
		return err;
	return kp_value_lvalue(k, id, address, ret);
}

struct kp_error *kp_resolve_symbol(struct kp_kernel *k, const char *name, struct kp_value **ret)
{
	struct btf *btf;
	struct kp_error *err = kp_btf_work(k, &btf);
	if (err)
		return err;
	struct kp_symbol sym;
	if (!k->symtab)
		err = kp_error_create(KP_ERR_NOT_FOUND, "unknown symbol '%s' (no symbols loaded)",
				      name);
	else
		err = kp_symtab_by_name(k->symtab, name, &sym);
	if (err) {
		if (err->code == KP_ERR_NOT_FOUND && enumerator(k, name, ret)) {
			kp_error_destroy(err);
			return NULL;
		}
		return err;
	}
	uint32_t type;
	bool percpu;
	if (kp_btf_var(k, name, &type, &percpu)) {
		if ((err = kp_value_lvalue(k, type, sym.address, ret)) || !percpu)
			return err;
		(*ret)->percpu = true;
		(*ret)->symbol = strdup(name);
		return NULL;
	}
	const char *spec = curated_type(name);
	if (spec && curated_resolve(k, spec, sym.size, &type))
		return kp_value_lvalue(k, type, sym.address, ret);
	if (sym.type == 't' || sym.type == 'T')
		return function(k, name, sym.address, true, ret);
	// Weak symbols and those of unknown kind (VMCOREINFO) may be functions.
	struct kp_value *v = NULL;
	if (!strchr("dDbBrRvV", sym.type)) {
		if ((err = function(k, name, sym.address, false, &v)))
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

// ---------------------------------------------------------------- layouts

static uint32_t hash_key(const char *key, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)key[i]) * 16777619u;
	return h;
}

// Looks up (type, member) in the cache; on a miss, computes and stores it.
static struct kp_error *layout(struct kp_kernel *k, const char *type, const char *member,
			       uint64_t *offset_ret, uint64_t *size_ret)
{
	struct btf *btf;
	struct kp_error *err = kp_btf_work(k, &btf);
	if (err)
		return err;
	size_t tl = strlen(type), ml = strlen(member);
	size_t key_len = tl + 1 + ml;
	char stack_key[256];
	char *key = key_len < sizeof(stack_key) ? stack_key : malloc(key_len + 1);
	if (!key)
		return &kp_enomem;
	memcpy(key, type, tl + 1);
	memcpy(key + tl + 1, member, ml + 1);
	struct kp_layout *slot = &k->types->layout[hash_key(key, key_len) % KP_LAYOUT_CACHE];
	if (slot->key && slot->key_len == key_len && memcmp(slot->key, key, key_len) == 0) {
		*offset_ret = slot->offset;
		*size_ret = slot->size;
		if (key != stack_key)
			free(key);
		return NULL;
	}
	uint32_t id;
	uint64_t offset = 0, size;
	err = kp_parse_type(k, type, &id);
	if (!err && ml) {
		struct kp_btf_member m;
		err = kp_member_path(k, id, member, ml, &m);
		if (!err) {
			offset = m.bit_offset / 8;
			size = m.bit_size ? (m.bit_offset % 8 + m.bit_size + 7) / 8 :
				kp_btf_size(btf, m.type);
		}
	} else if (!err) {
		size = kp_btf_size(btf, id);
		int kind = kp_btf_kind(btf, id);
		if (!size && kind != BTF_KIND_ARRAY && kind != BTF_KIND_STRUCT &&
		    kind != BTF_KIND_UNION)
			err = kp_error_create(KP_ERR_TYPE, "%s has no size (%s)", type,
					      kind == BTF_KIND_FWD ? "only declared in BTF" :
					      "void or a function");
	}
	if (err) {
		if (key != stack_key)
			free(key);
		return err;
	}
	char *copy = malloc(key_len + 1);
	if (copy) {
		memcpy(copy, key, key_len + 1);
		free(slot->key);
		*slot = (struct kp_layout){ copy, key_len, offset, size };
	}
	if (key != stack_key)
		free(key);
	*offset_ret = offset;
	*size_ret = size;
	return NULL;
}

struct kp_error *kp_member_offset(struct kp_kernel *kernel, const char *type,
				  const char *member, uint64_t *offset_ret, uint64_t *size_ret)
{
	if (!*member)
		return kp_error_create(KP_ERR_INVALID, "empty member name for %s", type);
	uint64_t offset, size;
	struct kp_error *err = layout(kernel, type, member, &offset, &size);
	if (err)
		return err;
	*offset_ret = offset;
	if (size_ret)
		*size_ret = size;
	return NULL;
}

struct kp_error *kp_type_size(struct kp_kernel *kernel, const char *type, uint64_t *ret)
{
	uint64_t offset, size;
	struct kp_error *err = layout(kernel, type, "", &offset, &size);
	if (err)
		return err;
	*ret = size;
	return NULL;
}

// ---------------------------------------------------------------- C type names

#define MAX_DEPTH 64
#define MAX_TYPE_NAME 4096

static const struct btf_type *ty(const struct btf *btf, uint32_t id)
{
	return btf__type_by_id(btf, id);
}

static const char *kind_word(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT: return "struct";
	case BTF_KIND_UNION: return "union";
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64: return "enum";
	case BTF_KIND_FWD: return btf_kflag(t) ? "union" : "struct";
	default: return NULL;
	}
}

// Name of a type with no declarator part (struct, int, typedef, ...).
static void base_name(const struct btf *btf, const struct btf_type *t, struct kp_sb *sb)
{
	const char *name = btf__name_by_offset(btf, t->name_off);
	const char *word = kind_word(t);
	if (word) {
		kp_sb_printf(sb, "%s %s", word, name && *name ? name : "<anonymous>");
		return;
	}
	char cname[32];
	if (btf_is_int(t) && name && kp_btf_int_cname(name, cname, sizeof(cname)))
		name = cname;
	kp_sb_printf(sb, "%s", name && *name ? name : "<anonymous>");
}

static void type_name(const struct btf *btf, uint32_t id, const char *decl_in,
		      struct kp_sb *out, int depth, long *budget);

// Builds the C declaration from the outside in: pointers prepend '*' to the
// declarator, arrays and functions append, qualifiers of the base type go first.
static void type_name(const struct btf *btf, uint32_t id, const char *decl_in,
		      struct kp_sb *out, int depth, long *budget)
{
	if (--*budget < 0) {
		// Hostile BTF: prototypes whose parameters and results are themselves.
		kp_sb_printf(out, "...");
		return;
	}
	struct kp_sb decl = { 0 }, quals = { 0 };
	kp_sb_printf(&decl, "%s", decl_in);
	for (int i = 0; i < MAX_DEPTH && depth < 8; i++) {
		if (out->len > MAX_TYPE_NAME || decl.len > MAX_TYPE_NAME) {
			// Hostile BTF (prototypes whose parameters are themselves).
			kp_sb_printf(out, "...");
			goto done;
		}
		const struct btf_type *t = id ? ty(btf, id) : NULL;
		if (!t) {
			kp_sb_printf(out, "%s%s%s%s", quals.buf ? quals.buf : "",
				     id ? "<bad type>" : "void", decl.len ? " " : "",
				     decl.buf ? decl.buf : "");
			goto done;
		}
		struct kp_sb next = { 0 };
		switch (btf_kind(t)) {
		case BTF_KIND_PTR: {
			uint32_t target = kp_btf_strip_cv(btf, t->type);
			const struct btf_type *tt = ty(btf, target);
			bool paren = tt && target &&
				(btf_is_array(tt) || btf_is_func_proto(tt));
			kp_sb_printf(&next, paren ? "(*%s)" : "*%s", decl.buf ? decl.buf : "");
			id = t->type;
			break;
		}
		case BTF_KIND_ARRAY: {
			const struct btf_array *a = btf_array(t);
			if (a->nelems)
				kp_sb_printf(&next, "%s[%u]", decl.buf ? decl.buf : "", a->nelems);
			else
				kp_sb_printf(&next, "%s[]", decl.buf ? decl.buf : "");
			id = a->type;
			break;
		}
		case BTF_KIND_FUNC:
			id = t->type;
			continue;
		case BTF_KIND_FUNC_PROTO: {
			const struct btf_param *p = btf_params(t);
			uint32_t n = btf_vlen(t);
			kp_sb_printf(&next, "%s(", decl.buf ? decl.buf : "");
			if (!n)
				kp_sb_printf(&next, "void");
			for (uint32_t j = 0; j < n; j++) {
				if (j)
					kp_sb_printf(&next, ", ");
				if (next.len > MAX_TYPE_NAME) {
					kp_sb_printf(&next, "...");
					break;
				}
				if (!p[j].type && j == n - 1)
					kp_sb_printf(&next, "...");
				else
					type_name(btf, p[j].type, "", &next, depth + 1, budget);
			}
			kp_sb_printf(&next, ")");
			id = t->type;
			break;
		}
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT: {
			const char *q = btf_is_const(t) ? "const" :
				btf_is_volatile(t) ? "volatile" : "restrict";
			uint32_t target = kp_btf_strip_cv(btf, t->type);
			const struct btf_type *tt = ty(btf, target);
			if (target && tt && btf_is_ptr(tt)) {
				kp_sb_printf(&next, "%s%s%s", q, decl.len ? " " : "",
					     decl.buf ? decl.buf : "");
			} else {
				kp_sb_printf(&quals, "%s ", q);
				id = t->type;
				continue;
			}
			id = t->type;
			break;
		}
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			continue;
		default:
			if (quals.buf)
				kp_sb_printf(out, "%s", quals.buf);
			base_name(btf, t, out);
			if (decl.len)
				kp_sb_printf(out, " %s", decl.buf);
			goto done;
		}
		kp_sb_free(&decl);
		decl = next;
		if (decl.failed)
			out->failed = true;
	}
	kp_sb_printf(out, "<type loop>");
done:
	if (decl.failed || quals.failed)
		out->failed = true;
	kp_sb_free(&decl);
	kp_sb_free(&quals);
}

struct kp_error *kp_btf_decl_name(const struct btf *btf, uint32_t id, const char *decl,
				  char **ret)
{
	struct kp_sb sb = { 0 };
	long budget = 4096;	// calls; a real kernel type needs a handful
	type_name(btf, id, decl ? decl : "", &sb, 0, &budget);
	char *s = kp_sb_take(&sb);
	if (!s)
		return &kp_enomem;
	*ret = s;
	return NULL;
}

struct kp_error *kp_btf_type_name(const struct btf *btf, uint32_t id, char **ret)
{
	return kp_btf_decl_name(btf, id, "", ret);
}

// ---------------------------------------------------------------- string builder

void kp_sb_printf(struct kp_sb *sb, const char *fmt, ...)
{
	if (sb->failed)
		return;
	for (;;) {
		size_t avail = sb->cap - sb->len;
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL, avail, fmt, ap);
		va_end(ap);
		if (n < 0) {
			sb->failed = true;
			return;
		}
		if ((size_t)n < avail) {
			sb->len += (size_t)n;
			return;
		}
		if (!kp_sb_reserve(sb, (size_t)n + 1))
			return;
	}
}

bool kp_sb_reserve(struct kp_sb *sb, size_t extra)
{
	if (sb->failed)
		return false;
	if (sb->cap - sb->len >= extra)
		return true;
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap - sb->len < extra) {
		if (cap > SIZE_MAX / 2) {
			sb->failed = true;
			return false;
		}
		cap *= 2;
	}
	char *buf = realloc(sb->buf, cap);
	if (!buf) {
		sb->failed = true;
		return false;
	}
	sb->buf = buf;
	sb->cap = cap;
	return true;
}

void kp_sb_putn(struct kp_sb *sb, const char *s, size_t n)
{
	if (!kp_sb_reserve(sb, n + 1))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

char *kp_sb_take(struct kp_sb *sb)
{
	if (sb->failed) {
		kp_sb_free(sb);
		return NULL;
	}
	if (!sb->buf)
		return strdup("");
	char *s = sb->buf;
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return s;
}

void kp_sb_free(struct kp_sb *sb)
{
	free(sb->buf);
	*sb = (struct kp_sb){ 0 };
}
