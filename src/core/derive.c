// SPDX-License-Identifier: MIT
// Variables a kallsyms of functions only (CONFIG_KALLSYMS_ALL=n, Debian's
// 6.1 arm64) does not name, found by what they are rather than by name:
//
//   init_task  the task_struct in the kernel image whose comm is
//              "swapper/0" and pid 0, whose tasks list is consistent
//              (tasks.next->prev and tasks.prev->next point back at it),
//              and whose real_parent is itself (layout from BTF);
//   per-CPU    every per-CPU variable BTF names, and the section's
//              start __per_cpu_start, from the section's address the
//              exported ones agree on (add_percpu());
//   linux_banner the banner string of init_uts_ns' release in rodata;
//   _text      the image's start (kp_arch.text_start);
//   the variables functions refer to (derive_refs.c).
//
// Each is added as a symbol only if exactly one candidate passes, so a
// wrong one is never taken: the kernel's own init_task is the only
// task_struct in the image.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "arch/arch.h"
#include "core/derive.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "types/types.h"
#include "util/error.h"
#include "util/le.h"

#define BLOCK (2ULL << 20)
#define PAGE 4096ULL

struct task_layout {
	uint64_t comm, pid, tasks, real_parent, size;
};

static bool member(struct kp_types *types, uint32_t id, const char *name, uint64_t *off)
{
	struct kp_btf_member m;
	struct kp_error *err = kp_types_member_path(types, id, name, strlen(name), &m);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	*off = m.bit_offset / 8;
	return true;
}

static bool layout(struct kp_types *types, struct task_layout *l)
{
	uint32_t id;
	struct kp_error *err = kp_types_find(types, BTF_KIND_STRUCT, "task_struct", &id);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	const struct btf_type *t = btf__type_by_id(kp_types_btf(types), id);
	l->size = t ? t->size : 0;
	return l->size && member(types, id, "comm", &l->comm) && member(types, id, "pid", &l->pid) &&
	       member(types, id, "tasks", &l->tasks) &&
	       member(types, id, "real_parent", &l->real_parent);
}

// Whether the task_struct at task is init_task.
static bool is_init_task(struct kp_memory *mem, const struct task_layout *l, uint64_t task)
{
	uint8_t comm[16];
	uint32_t pid;
	uint64_t parent, next, prev, back;
	return kp_ok(kp_memory_read(mem, KP_VIRT, task + l->comm, comm, sizeof(comm))) &&
	       !memcmp(comm, "swapper/0", 10) &&
	       kp_ok(kp_memory_read(mem, KP_VIRT, task + l->pid, &pid, 4)) && pid == 0 &&
	       kp_ok(kp_memory_read_u64(mem, KP_VIRT, task + l->real_parent, &parent)) &&
	       parent == task &&
	       kp_ok(kp_memory_read_u64(mem, KP_VIRT, task + l->tasks, &next)) &&
	       kp_ok(kp_memory_read_u64(mem, KP_VIRT, task + l->tasks + 8, &prev)) &&
	       kp_ok(kp_memory_read_u64(mem, KP_VIRT, next + 8, &back)) &&
	       back == task + l->tasks &&
	       kp_ok(kp_memory_read_u64(mem, KP_VIRT, prev, &back)) && back == task + l->tasks;
}

// Every place in [lo, hi) where "swapper/0\0" sits at comm's offset of an
// 8-aligned task_struct that passes is_init_task(); *n counts them.
static uint64_t scan_init_task(struct kp_memory *mem, const struct task_layout *l, uint64_t lo,
			       uint64_t hi, unsigned *n)
{
	static const char want[] = "swapper/0";
	uint8_t *buf = malloc(BLOCK);
	uint64_t found = 0;
	*n = 0;
	if (!buf)
		return 0;
	for (uint64_t va = lo & ~(PAGE - 1); va < hi && va >= lo; va += BLOCK) {
		bool whole = kp_ok(kp_memory_read(mem, KP_VIRT, va, buf, BLOCK));
		for (uint64_t p = 0; p < BLOCK; p += PAGE) {
			if (!whole && !kp_ok(kp_memory_read(mem, KP_VIRT, va + p, buf + p, PAGE)))
				continue;
			const uint8_t *at = buf + p, *end = buf + p + PAGE;
			while ((at = memmem(at, end - at, want, sizeof(want))) != NULL) {
				uint64_t comm = va + (uint64_t)(at - buf);
				uint64_t task = comm - l->comm;
				if ((task & 7) == 0 && comm >= l->comm && is_init_task(mem, l, task)) {
					found = task;
					++*n;
				}
				at++;
			}
		}
	}
	free(buf);
	return found;
}

// ---------------------------------------------------------------- linux_banner

// linux_banner (init/version.c; init/version-timestamp.c from 6.1) is the
// string "Linux version RELEASE (BUILDER@HOST) (COMPILER) VERSION\n" in
// rodata after the text, RELEASE and VERSION those init_uts_ns holds. Found
// as an 8-aligned string (a char array of its size is: 16 on x86-64, 8 on
// arm64) of printable characters that starts so and ends in " VERSION\n".
// Two other strings start so: from
// 6.1 version.c's weak copy, compiled without the build number ("# SMP"
// where the real one has "#1 SMP"), which the ending rules out, and the
// first record of the log buffer, in .bss: rodata comes first, so the
// lowest match in the BANNER_SCAN bytes from rodata's start (_etext
// rounded up to kp_arch.rodata_align: the gap between them is freed memory,
// where a copy of the banner may lie, seen on 6.1 x86-64) is taken.
#define BANNER_PREFIX "Linux version "
#define RELEASE_LEN 65		// __NEW_UTS_LEN + 1
#define BANNER_SCAN (32ULL << 20)
#define BANNER_MAX 512

struct uts {
	char release[RELEASE_LEN], version[RELEASE_LEN];
};

static bool uts_names(struct kp_memory *mem, struct kp_types *types, struct kp_symtab *st,
		      struct uts *ret)
{
	struct kp_symbol uts;
	uint32_t id;
	uint64_t rel, ver;
	if (!kp_symtab_find(st, "init_uts_ns", &uts))
		return false;
	struct kp_error *err = kp_types_find(types, BTF_KIND_STRUCT, "uts_namespace", &id);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	if (!member(types, id, "name.release", &rel) || !member(types, id, "name.version", &ver) ||
	    !kp_ok(kp_memory_read(mem, KP_VIRT, uts.address + rel, ret->release, RELEASE_LEN)) ||
	    !kp_ok(kp_memory_read(mem, KP_VIRT, uts.address + ver, ret->version, RELEASE_LEN)))
		return false;
	ret->release[RELEASE_LEN - 1] = ret->version[RELEASE_LEN - 1] = 0;
	return ret->release[0] && ret->version[0];
}

// Whether the string at va (its start already matched) is printable and
// ends in " VERSION\n" within BANNER_MAX bytes.
static bool banner_ends(struct kp_memory *mem, uint64_t va, const char *version)
{
	char buf[BANNER_MAX];
	size_t n = 0;
	for (uint64_t at = va; n < sizeof(buf); ) {
		size_t len = PAGE - (at & (PAGE - 1));
		len = len < sizeof(buf) - n ? len : sizeof(buf) - n;
		if (!kp_ok(kp_memory_read(mem, KP_VIRT, at, buf + n, len)))
			break;
		n += len;
		at += len;
	}
	const char *nul = memchr(buf, 0, n);
	size_t vlen = strlen(version);
	if (!nul || (size_t)(nul - buf) < vlen + 2 || nul[-1] != '\n' || nul[-vlen - 2] != ' ' ||
	    memcmp(nul - vlen - 1, version, vlen))
		return false;
	for (const char *c = buf; c < nul - 1; c++)
		if (*c < ' ' || *c > '~')
			return false;
	return true;
}

uint64_t kp_derive_banner(struct kp_memory *mem, const char *release, const char *version,
			  uint64_t lo, uint64_t hi)
{
	char want[sizeof(BANNER_PREFIX) + RELEASE_LEN + 2];
	if (strlen(release) >= RELEASE_LEN || strlen(version) >= RELEASE_LEN)
		return 0;
	int wlen = snprintf(want, sizeof(want), BANNER_PREFIX "%s (", release);
	uint8_t *buf = malloc(BLOCK);
	uint64_t found = 0;
	if (!buf)
		return 0;
	// Blocks overlap by a page, so that no match is cut.
	for (uint64_t va = lo & ~(PAGE - 1); !found && va < hi && va >= lo - PAGE; va += BLOCK - PAGE) {
		for (uint64_t p = 0; p < BLOCK; p += PAGE)
			if (!kp_ok(kp_memory_read(mem, KP_VIRT, va + p, buf + p, PAGE)))
				memset(buf + p, 0, PAGE);	// matches nothing
		const uint8_t *at = buf, *end = buf + BLOCK;
		while (!found && (at = memmem(at, (size_t)(end - at), want, (size_t)wlen)) != NULL) {
			uint64_t banner = va + (uint64_t)(at - buf);
			if (!(banner & 7) && banner >= lo && banner_ends(mem, banner, version))
				found = banner;
			at++;
		}
	}
	free(buf);
	return found;
}

static struct kp_error *add_banner(struct kp_memory *mem, const struct kp_arch *arch,
				   struct kp_types *types, struct kp_symtab *st, uint64_t image_end,
				   unsigned *added)
{
	struct kp_symbol sym;
	struct uts u;
	if (kp_symtab_find(st, "linux_banner", &sym) || !kp_symtab_find(st, "_etext", &sym) ||
	    !uts_names(mem, types, st, &u))
		return NULL;
	uint64_t align = arch->rodata_align ? arch->rodata_align : 1;
	uint64_t lo = (sym.address + align - 1) & ~(align - 1);
	uint64_t hi = lo + BANNER_SCAN < image_end ? lo + BANNER_SCAN : image_end;
	uint64_t at = kp_derive_banner(mem, u.release, u.version, lo, hi);
	if (!at)
		return NULL;
	struct kp_error *err = kp_symtab_next_source_origin(st, "a scan of rodata for the banner "
							     "of init_uts_ns' release and version");
	if (!err && !(err = kp_symtab_add(st, "linux_banner", 12, at, 'R', NULL)))
		(*added)++;
	return err;
}

// _text, the image's start, where the architecture can tell it from below
// _stext (arm64: its Image header).
static struct kp_error *add_text(const struct kp_arch *arch, const struct kp_arch_ctx *actx,
				 struct kp_symtab *st, unsigned *added)
{
	struct kp_symbol sym;
	uint64_t text;
	if (!arch->text_start || kp_symtab_find(st, "_text", &sym) ||
	    !kp_symtab_find(st, "_stext", &sym) || !arch->text_start(actx, sym.address, &text))
		return NULL;
	struct kp_error *err = kp_symtab_next_source_origin(st, "the kernel image's header below "
							     "_stext");
	if (!err && !(err = kp_symtab_add(st, "_text", 5, text, 'T', NULL)))
		(*added)++;
	return err;
}

// ---------------------------------------------------------------- per-CPU

// Per-CPU variables: BTF's DATASEC ".data..percpu" gives each one's offset
// in the section (pahole encodes every per-CPU variable, 1.18+), and the
// exported ones (EXPORT_PER_CPU_SYMBOL: cpu_number, irq_stat, kstat, ...)
// have their addresses from __ksymtab: those must all put the section at
// one address, and then every per-CPU variable has its own.
#define MIN_AGREE 2

static bool percpu_base(struct kp_symtab *st, const struct btf *btf,
			const struct btf_type *sec, uint64_t *ret)
{
	const struct btf_var_secinfo *vi = btf_var_secinfos(sec);
	unsigned agree = 0;
	uint64_t base = 0;
	struct kp_symbol sym;
	for (unsigned i = 0; i < btf_vlen(sec); i++, vi++) {
		const struct btf_type *v = btf__type_by_id(btf, vi->type);
		const char *name = v ? btf__name_by_offset(btf, v->name_off) : NULL;
		if (!name || !kp_symtab_find(st, name, &sym) || sym.address < vi->offset)
			continue;
		if (agree && sym.address - vi->offset != base)
			return false;
		base = sym.address - vi->offset;
		agree++;
	}
	*ret = base;
	return agree >= MIN_AGREE;
}

// __per_cpu_start: the section's start (PERCPU_INPUT() of
// include/asm-generic/vmlinux.lds.h puts it first), where no variable
// lies past BTF's size of the section. Not __per_cpu_end: BTF's size
// is where its last variable ends, and x86-64 6.12 page-aligns the end
// past it (0x38100, __per_cpu_end 0x39000).
static struct kp_error *add_percpu_start(const struct btf_type *sec, uint64_t base, struct kp_symtab *st,
					 unsigned *added)
{
	const struct btf_var_secinfo *vi = btf_var_secinfos(sec);
	struct kp_symbol sym;
	for (unsigned i = 0; i < btf_vlen(sec); i++)
		if (vi[i].offset > sec->size || vi[i].size > sec->size - vi[i].offset)
			return NULL;
	if (kp_symtab_find(st, "__per_cpu_start", &sym))
		return NULL;
	struct kp_error *err = kp_symtab_add(st, "__per_cpu_start", 15, base, 'D', NULL);
	if (!err)
		(*added)++;
	return err;
}

static struct kp_error *add_percpu(struct kp_types *types, struct kp_symtab *st, unsigned *added)
{
	const struct btf *btf = kp_types_btf(types);
	const struct btf_type *sec = kp_types_percpu_datasec(types);
	uint64_t base;
	if (!sec || !percpu_base(st, btf, sec, &base))
		return NULL;
	struct kp_error *err = kp_symtab_next_source_origin(st, "BTF's .data..percpu section");
	if (err)
		return err;
	// Picked before any is added: a lookup after an addition sorts again.
	uint32_t n = btf_vlen(sec), *pick = malloc(n * sizeof(*pick) + 1);
	if (!pick)
		return &kp_enomem;
	uint32_t npick = 0;
	const struct btf_var_secinfo *vi = btf_var_secinfos(sec);
	struct kp_symbol sym;
	for (uint32_t i = 0; i < n; i++) {
		const struct btf_type *v = btf__type_by_id(btf, vi[i].type);
		const char *name = v ? btf__name_by_offset(btf, v->name_off) : NULL;
		if (name && *name && !kp_symtab_find(st, name, &sym))
			pick[npick++] = i;
	}
	for (uint32_t i = 0; i < npick && !err; i++) {
		const struct btf_type *v = btf__type_by_id(btf, vi[pick[i]].type);
		const char *name = btf__name_by_offset(btf, v->name_off);
		if (!(err = kp_symtab_add(st, name, strlen(name), base + vi[pick[i]].offset, 'D', NULL)))
			(*added)++;
	}
	free(pick);
	return err ? err : add_percpu_start(sec, base, st, added);
}

// ---------------------------------------------------------------- all

struct kp_error *kp_derive_symbols(struct kp_memory *mem, const struct kp_arch *arch,
				   const struct kp_arch_ctx *actx, struct kp_types *types,
				   uint64_t image_start, uint64_t image_end, struct kp_symtab *st,
				   unsigned *added)
{
	struct kp_symbol sym;
	struct task_layout l;
	struct kp_error *err;
	*added = 0;
	if ((err = add_percpu(types, st, added)))
		return err;
	if ((err = kp_derive_refs(mem, arch, types, image_start, image_end, st, added)) ||
	    (err = add_banner(mem, arch, types, st, image_end, added)) ||
	    (err = add_text(arch, actx, st, added)))
		return err;
	if (!kp_symtab_find(st, "init_task", &sym) && layout(types, &l)) {
		unsigned n;
		uint64_t task = scan_init_task(mem, &l, image_start, image_end, &n);
		if (n == 1) {
			const char *how = "a scan of the kernel image for its shape";
			if ((err = kp_symtab_next_source_origin(st, how)) ||
			    (err = kp_symtab_add(st, "init_task", 9, task, 'D', NULL)))
				return err;
			(*added)++;
		}
	}
	return NULL;
}
