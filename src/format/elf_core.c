// SPDX-License-Identifier: MIT
// ELF cores: /proc/kcore, kdump vmcores (copies of /proc/vmcore) and QEMU
// dump-guest-memory files. Only headers and notes are read at open; segment
// contents are read on demand through the memory map.
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/source.h"
#include "util/error.h"

#define KCORE_PATH "/proc/kcore"
// Bounds against hostile headers.
#define MAX_PHNUM (1U << 20)
#define MAX_NOTES_TOTAL (64ULL << 20)

// ---------------------------------------------------------------- ELF

static bool elf_probe(const uint8_t *head, size_t len)
{
	// Any ELF file: open() explains what kind of ELF it is when it is not a
	// core (a vmlinux passed as a dump, a 32-bit core, ...).
	return len >= SELFMAG && memcmp(head, ELFMAG, SELFMAG) == 0;
}

static const char *etype_name(unsigned t)
{
	switch (t) {
	case ET_REL: return " (ET_REL: an object file or kernel module)";
	case ET_EXEC: return " (ET_EXEC: an executable such as vmlinux, not a memory dump)";
	case ET_DYN: return " (ET_DYN: a shared object or PIE)";
	}
	return "";
}

static struct kp_error *check_ehdr(const char *path, const Elf64_Ehdr *eh)
{
	if (eh->e_ident[EI_CLASS] != ELFCLASS64)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: ELF class %u is not supported (need a 64-bit core)",
				       path, eh->e_ident[EI_CLASS]);
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: big-endian ELF is not supported (machine %u)", path,
				       eh->e_machine);
	if (eh->e_type != ET_CORE)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: ELF e_type %u is not ET_CORE%s", path,
				       eh->e_type, etype_name(eh->e_type));
	return NULL;
}

// Reads a header structure, naming it when the file is too short.
static struct kp_error *read_hdr(struct kp_file *file, uint64_t offset, void *buf,
				 size_t len, const char *what)
{
	if (file->size && (offset > file->size || len > file->size - offset))
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: truncated: %s at 0x%" PRIx64
				       " needs bytes up to 0x%" PRIx64
				       " but the file has 0x%" PRIx64, file->path, what,
				       offset, offset + len, file->size);
	return kp_file_read(file, offset, buf, len);
}

// Number of program headers, following PN_XNUM extended numbering
// (section header 0's sh_info holds the real count).
static struct kp_error *get_phnum(struct kp_file *file, const Elf64_Ehdr *eh,
				  uint64_t *ret)
{
	if (eh->e_phnum != PN_XNUM) {
		*ret = eh->e_phnum;
		return NULL;
	}
	if (eh->e_shoff == 0)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: e_phnum is PN_XNUM but there is no section header",
				       file->path);
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return kp_error_create(KP_ERR_FORMAT, "%s: e_shentsize %u, expected %zu",
				       file->path, eh->e_shentsize, sizeof(Elf64_Shdr));
	Elf64_Shdr sh;
	struct kp_error *err = read_hdr(file, eh->e_shoff, &sh, sizeof(sh),
					"section header 0 (PN_XNUM)");
	if (err)
		return err;
	*ret = sh.sh_info;
	return NULL;
}

struct elf_state {
	struct kp_file *file;
	struct kp_memory *mem;
	Elf64_Phdr *ph;
	uint64_t phnum;
	bool has_virt;
	bool live;		// /proc/kcore
};

static struct kp_error *read_notes(struct elf_state *st, struct kp_source *src)
{
	uint64_t total = 0;
	for (uint64_t i = 0; i < st->phnum; i++) {
		const Elf64_Phdr *p = &st->ph[i];
		if (p->p_type != PT_NOTE || p->p_filesz == 0)
			continue;
		if (p->p_filesz > MAX_NOTES_TOTAL - total)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: PT_NOTE segments exceed %llu MiB",
					       st->file->path, MAX_NOTES_TOTAL >> 20);
		total += p->p_filesz;
		uint8_t *buf = malloc(p->p_filesz);
		if (!buf)
			return &kp_enomem;
		char where[64];
		snprintf(where, sizeof(where), "PT_NOTE #%" PRIu64, i);
		struct kp_error *err = read_hdr(st->file, p->p_offset, buf, p->p_filesz,
						where);
		if (err) {
			free(buf);
			return err;
		}
		char *w = NULL;
		if (asprintf(&w, "%s: %s", st->file->path, where) < 0)
			w = NULL;
		err = kp_notes_parse(buf, p->p_filesz, w ? w : where, p->p_offset, src);
		free(w);
		free(buf);
		if (err)
			return err;
	}
	return NULL;
}

// Only kernel-half virtual addresses (bit 63 set: x86-64 with 4- and 5-level
// paging, arm64's TTBR1 half) make a virtual segment. QEMU 7.2 dump-guest-memory without paging writes
// p_vaddr = p_paddr (measured; older versions write 0): those are physical.
static bool is_kernel_vaddr(uint64_t vaddr)
{
	return vaddr >> 63;
}

static struct kp_error *add_load(struct elf_state *st, uint64_t i, bool use_paddr)
{
	const Elf64_Phdr *p = &st->ph[i];
	const char *path = st->file->path;
	uint64_t filesz = p->p_filesz, memsz = p->p_memsz;
	if (memsz < filesz)	// be liberal: the bytes beyond memsz are not memory
		filesz = memsz;
	if (memsz == 0)
		return NULL;
	if (p->p_offset + filesz < p->p_offset)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: PT_LOAD #%" PRIu64 ": p_offset 0x%" PRIx64
				       " + p_filesz 0x%" PRIx64 " overflows", path, i,
				       p->p_offset, filesz);
	if (st->file->size && p->p_offset + filesz > st->file->size)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: truncated: PT_LOAD #%" PRIu64
				       " needs bytes up to 0x%" PRIx64
				       " but the file has 0x%" PRIx64, path, i,
				       p->p_offset + filesz, st->file->size);
	uint64_t addrs[2] = {p->p_vaddr, p->p_paddr};
	bool want[2] = {is_kernel_vaddr(p->p_vaddr), use_paddr};
	for (int s = 0; s < 2; s++) {
		if (!want[s])
			continue;
		uint64_t a = addrs[s];
		if (a + (memsz - 1) < a)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: PT_LOAD #%" PRIu64 ": %s 0x%" PRIx64
					       " + p_memsz 0x%" PRIx64
					       " wraps past the end of the address space",
					       path, i, s ? "p_paddr" : "p_vaddr", a, memsz);
		enum kp_space space = s ? KP_PHYS : KP_VIRT;
		struct kp_error *err = kp_memory_add(st->mem, space, a, filesz,
						     kp_file_read_fn, st->file, p->p_offset);
		if (!err && memsz > filesz)
			err = kp_memory_add(st->mem, space, a + filesz, memsz - filesz,
					    kp_read_zero, NULL, 0);
		if (err)
			return err;
		if (!s)
			st->has_virt = true;
	}
	return NULL;
}

// Whether load i's physical range is an alias inside another load's:
// /proc/kcore's KCORE_TEXT segment (the kernel image, _text.._end) maps
// physical memory that a KCORE_RAM segment (the linear map) maps too, and
// arm64 unmaps the image's __init part once it is freed (free_initmem()),
// after which kcore reads zeros there while the linear map shows what the
// pages hold now (user pages, slabs). Physical reads go through the RAM one.
static bool physical_alias(const struct elf_state *st, uint64_t i)
{
	const Elf64_Phdr *p = &st->ph[i];
	for (uint64_t j = 0; j < st->phnum; j++) {
		const Elf64_Phdr *q = &st->ph[j];
		if (j == i || q->p_type != PT_LOAD || q->p_paddr == UINT64_MAX ||
		    q->p_paddr + q->p_filesz < q->p_paddr)
			continue;
		if (q->p_paddr <= p->p_paddr && p->p_paddr + p->p_filesz <= q->p_paddr + q->p_filesz &&
		    (q->p_filesz > p->p_filesz || j < i))
			return true;
	}
	return false;
}

static struct kp_error *add_loads(struct elf_state *st)
{
	// Physical addresses: kcore writes (u64)-1 where there is none (vmalloc,
	// vmemmap; fs/proc/kcore.c since 4.x); kernels before that wrote 0 for
	// every segment, so several virtual loads at p_paddr 0 mean "unknown".
	uint64_t zero_paddr_virt = 0;
	for (uint64_t i = 0; i < st->phnum; i++) {
		const Elf64_Phdr *p = &st->ph[i];
		if (p->p_type == PT_LOAD && p->p_paddr == 0 && is_kernel_vaddr(p->p_vaddr))
			zero_paddr_virt++;
	}
	for (uint64_t i = 0; i < st->phnum; i++) {
		const Elf64_Phdr *p = &st->ph[i];
		if (p->p_type != PT_LOAD)
			continue;
		bool use_paddr = p->p_paddr != UINT64_MAX &&
				 !(p->p_paddr == 0 && is_kernel_vaddr(p->p_vaddr) &&
				   zero_paddr_virt > 1) &&
				 !(st->live && p->p_paddr + p->p_filesz >= p->p_paddr && physical_alias(st, i));
		struct kp_error *err = add_load(st, i, use_paddr);
		if (err)
			return err;
	}
	return NULL;
}

// The lost ranges, physical and, where a PT_LOAD maps them at a virtual
// address too (kpeek's snapshots give RAM its direct-map addresses), there.
static struct kp_error *add_lost(struct elf_state *st, const struct kp_source *src)
{
	for (size_t i = 0; i < src->nlost; i++) {
		uint64_t start = src->lost[i].start, end = src->lost[i].end;
		struct kp_error *err = kp_memory_add(st->mem, KP_PHYS, start, end - start, kp_source_read_lost,
						     (void *)st->file->path, start);
		for (uint64_t j = 0; !err && j < st->phnum; j++) {
			const Elf64_Phdr *p = &st->ph[j];
			uint64_t lo = start > p->p_paddr ? start : p->p_paddr;
			uint64_t hi = p->p_paddr + p->p_filesz < end ? p->p_paddr + p->p_filesz : end;
			if (p->p_type != PT_LOAD || !is_kernel_vaddr(p->p_vaddr) || lo >= hi ||
			    p->p_paddr + p->p_filesz < p->p_paddr)
				continue;
			err = kp_memory_add(st->mem, KP_VIRT, p->p_vaddr + (lo - p->p_paddr), hi - lo,
					    kp_source_read_lost, (void *)st->file->path, lo);
		}
		if (err)
			return err;
	}
	return NULL;
}

static struct kp_error *elf_open(struct kp_file *file, struct kp_memory *mem,
				 struct kp_source *src)
{
	const char *path = file->path;
	Elf64_Ehdr eh;
	struct kp_error *err = read_hdr(file, 0, &eh, sizeof(eh), "ELF header");
	if (err)
		return err;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return kp_error_create(KP_ERR_FORMAT, "%s: not an ELF file", path);
	err = check_ehdr(path, &eh);
	if (err)
		return err;

	struct elf_state st = {.file = file, .mem = mem};
	err = get_phnum(file, &eh, &st.phnum);
	if (err)
		return err;
	if (st.phnum == 0)
		return kp_error_create(KP_ERR_FORMAT, "%s: ELF core has no program headers",
				       path);
	if (eh.e_phentsize != sizeof(Elf64_Phdr))
		return kp_error_create(KP_ERR_FORMAT, "%s: e_phentsize %u, expected %zu",
				       path, eh.e_phentsize, sizeof(Elf64_Phdr));
	if (st.phnum > MAX_PHNUM)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: %" PRIu64 " program headers (more than %u)",
				       path, st.phnum, MAX_PHNUM);
	uint64_t ph_bytes = st.phnum * sizeof(Elf64_Phdr);
	if (eh.e_phoff + ph_bytes < eh.e_phoff ||
	    (file->size && eh.e_phoff + ph_bytes > file->size))
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: truncated: %" PRIu64 " program headers at 0x%"
				       PRIx64 " need bytes up to 0x%" PRIx64
				       " but the file has 0x%" PRIx64, path, st.phnum,
				       (uint64_t)eh.e_phoff, eh.e_phoff + ph_bytes, file->size);
	st.ph = malloc(ph_bytes);
	if (!st.ph)
		return &kp_enomem;
	err = kp_file_read(file, eh.e_phoff, st.ph, ph_bytes);
	if (err)
		goto out;

	struct kp_source tmp = {0};
	tmp.live = strcmp(path, KCORE_PATH) == 0;
	st.live = tmp.live;
	err = read_notes(&st, &tmp);
	if (!err)
		err = add_lost(&st, &tmp);
	if (!err)
		err = add_loads(&st);
	if (err) {
		kp_source_deinit(&tmp);
		goto out;
	}
	tmp.elf_machine = eh.e_machine;
	if (tmp.live) {
		// kcore's NT_PRSTATUS is an empty placeholder, not CPU state.
		kp_source_drop_cpus(&tmp);
		tmp.kind = "live /proc/kcore";
	} else {
		tmp.kind = st.has_virt ? "ELF vmcore" : "ELF vmcore (physical only)";
	}
	*src = tmp;
out:
	free(st.ph);
	return err;
}

const struct kp_source_ops kp_elf_core_ops = {
	.name = "ELF core",
	.probe = elf_probe,
	.open = elf_open,
};
