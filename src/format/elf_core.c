// ELF cores: /proc/kcore, kdump vmcores (copies of /proc/vmcore) and QEMU
// dump-guest-memory files. Only headers and notes are read at open; segment
// contents are read on demand through the memory map.
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/source.h"

#define KCORE_PATH "/proc/kcore"
// Bounds against hostile headers.
#define MAX_PHNUM (1U << 20)
#define MAX_NOTES_TOTAL (64ULL << 20)
#define MAX_CPUS 65536

// ---------------------------------------------------------------- notes

// x86-64 struct elf_prstatus: pr_reg (struct user_regs_struct, 27 u64) starts
// at byte 112 (include/uapi/linux/elfcore.h, unchanged since 2.6).
#define PRSTATUS_REG_OFFSET 112
#define PRSTATUS_REG_COUNT 27
enum { REG_RIP = 16, REG_CS = 17, REG_RSP = 19, REG_GS_BASE = 22 };

// QEMUCPUState (QEMU target/i386/arch_dump.c, version 1): u32 version, u32
// size, 16 GPRs, rip, rflags, then ten segments {u32 selector, limit, flags,
// pad; u64 base} in the order cs ds es fs gs ss ldt tr gdt idt, then cr[5];
// kernel_gs_base was appended later (QEMU 5.0), so 'size' tells which.
#define QEMU_SEG_OFFSET(i) (152 + 24 * (i))
enum { QSEG_GS = 4, QSEG_GDT = 8, QSEG_IDT = 9 };
#define QEMU_CR_OFFSET 392
#define QEMU_KERNEL_GS_BASE_OFFSET 432
#define QEMU_MIN_SIZE QEMU_KERNEL_GS_BASE_OFFSET

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

// The i-th PRSTATUS and the i-th QEMU note describe the same CPU. Slots are
// filled in order, so "first slot without a PRSTATUS" is a binary search.
static size_t first_without(const struct kp_source *src, bool qemu)
{
	size_t lo = 0, hi = src->ncpus;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		bool has = qemu ? src->cpus[mid].has_control : src->cpus[mid].has_prstatus;
		if (has)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t cpu_capacity(size_t n)
{
	if (n == 0)
		return 0;
	size_t cap = 4;
	while (cap < n)
		cap *= 2;
	return cap;
}

static struct kp_error *cpu_slot(struct kp_source *src, bool qemu, const char *where,
				 uint64_t offset, struct kp_cpu_state **ret)
{
	size_t i = first_without(src, qemu);
	if (i == src->ncpus) {
		if (src->ncpus >= MAX_CPUS)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: note at offset 0x%" PRIx64
					       ": more than %d CPU notes", where, offset,
					       MAX_CPUS);
		if (cpu_capacity(src->ncpus + 1) > cpu_capacity(src->ncpus)) {
			struct kp_cpu_state *cpus =
				realloc(src->cpus, cpu_capacity(src->ncpus + 1) * sizeof(*cpus));
			if (!cpus)
				return &kp_enomem;
			src->cpus = cpus;
		}
		memset(&src->cpus[src->ncpus], 0, sizeof(*src->cpus));
		src->ncpus++;
	}
	*ret = &src->cpus[i];
	return NULL;
}

static struct kp_error *parse_prstatus(const uint8_t *desc, size_t len, const char *where,
				       uint64_t offset, struct kp_source *src)
{
	if (len < PRSTATUS_REG_OFFSET + PRSTATUS_REG_COUNT * 8)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: CORE NT_PRSTATUS note at offset 0x%" PRIx64
				       " has %zu bytes, x86-64 needs at least %d", where,
				       offset, len, PRSTATUS_REG_OFFSET + PRSTATUS_REG_COUNT * 8);
	struct kp_cpu_state *cpu;
	struct kp_error *err = cpu_slot(src, false, where, offset, &cpu);
	if (err)
		return err;
	const uint8_t *reg = desc + PRSTATUS_REG_OFFSET;
	cpu->has_prstatus = true;
	cpu->rip = get_u64(reg + 8 * REG_RIP);
	cpu->rsp = get_u64(reg + 8 * REG_RSP);
	cpu->cs = get_u64(reg + 8 * REG_CS);
	if (!cpu->has_control)
		cpu->gs_base = get_u64(reg + 8 * REG_GS_BASE);
	return NULL;
}

static struct kp_error *parse_qemu(const uint8_t *desc, size_t len, const char *where,
				   uint64_t offset, struct kp_source *src)
{
	uint32_t size = len >= 8 ? get_u32(desc + 4) : 0;
	if (len < 8 || size < QEMU_MIN_SIZE || size > len)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: QEMU CPU note at offset 0x%" PRIx64
				       " has %zu bytes (state size %" PRIu32
				       "), need at least %d", where, offset, len, size,
				       QEMU_MIN_SIZE);
	struct kp_cpu_state *cpu;
	struct kp_error *err = cpu_slot(src, true, where, offset, &cpu);
	if (err)
		return err;
	cpu->has_control = true;
	cpu->cr0 = get_u64(desc + QEMU_CR_OFFSET);
	cpu->cr3 = get_u64(desc + QEMU_CR_OFFSET + 3 * 8);
	cpu->cr4 = get_u64(desc + QEMU_CR_OFFSET + 4 * 8);
	cpu->idt_base = get_u64(desc + QEMU_SEG_OFFSET(QSEG_IDT) + 16);
	cpu->idt_limit = get_u32(desc + QEMU_SEG_OFFSET(QSEG_IDT) + 4);
	cpu->gdt_base = get_u64(desc + QEMU_SEG_OFFSET(QSEG_GDT) + 16);
	cpu->gs_base = get_u64(desc + QEMU_SEG_OFFSET(QSEG_GS) + 16);
	if (size >= QEMU_KERNEL_GS_BASE_OFFSET + 8)
		cpu->kernel_gs_base = get_u64(desc + QEMU_KERNEL_GS_BASE_OFFSET);
	return NULL;
}

static bool name_is(const uint8_t *name, uint32_t namesz, const char *want)
{
	size_t n = strnlen((const char *)name, namesz);
	return n == strlen(want) && memcmp(name, want, n) == 0;
}

struct kp_error *kp_notes_parse(const uint8_t *buf, size_t len, const char *where,
				uint64_t file_offset, struct kp_source *src)
{
	size_t off = 0;
	// Fewer than a header's worth of trailing bytes is padding, not a note.
	while (len - off >= 12) {
		uint64_t at = file_offset + off;
		uint32_t namesz = get_u32(buf + off), descsz = get_u32(buf + off + 4);
		uint32_t type = get_u32(buf + off + 8);
		// 64-bit arithmetic: neither sum can overflow.
		uint64_t name_off = off + 12;
		uint64_t desc_off = name_off + (((uint64_t)namesz + 3) & ~3ULL);
		uint64_t end = desc_off + descsz;
		if (desc_off > len || end > len)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: note at offset 0x%" PRIx64
					       " (namesz %" PRIu32 ", descsz %" PRIu32
					       ") runs past the end of the note segment (0x%zx bytes)",
					       where, at, namesz, descsz, len);
		const uint8_t *name = buf + name_off, *desc = buf + desc_off;
		struct kp_error *err = NULL;
		if (name_is(name, namesz, "VMCOREINFO") && type == 0) {
			if (!src->vmcoreinfo) {
				size_t n = strnlen((const char *)desc, descsz);
				char *text = malloc(n + 1);
				if (!text)
					return &kp_enomem;
				memcpy(text, desc, n);
				text[n] = '\0';
				src->vmcoreinfo = text;
				src->vmcoreinfo_size = n;
			}
		} else if (name_is(name, namesz, "CORE") && type == NT_PRSTATUS) {
			err = parse_prstatus(desc, descsz, where, at, src);
		} else if (name_is(name, namesz, "QEMU")) {
			err = parse_qemu(desc, descsz, where, at, src);
		}
		if (err)
			return err;
		// The last note's padding may be missing.
		uint64_t next = (end + 3) & ~3ULL;
		off = next < len ? (size_t)next : len;
	}
	return NULL;
}

void kp_source_deinit(struct kp_source *src)
{
	if (!src)
		return;
	free(src->vmcoreinfo);
	free(src->cpus);
	if (src->destroy)
		src->destroy(src->priv);
	memset(src, 0, sizeof(*src));
}

// ---------------------------------------------------------------- ELF

static bool elf_probe(const uint8_t *head, size_t len)
{
	// Any ELF file: open() explains what kind of ELF it is when it is not an
	// x86-64 core (a vmlinux passed as a dump, a 32-bit core, ...).
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
				       "%s: big-endian ELF is not supported (need x86-64)", path);
	if (eh->e_type != ET_CORE)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: ELF e_type %u is not ET_CORE%s", path,
				       eh->e_type, etype_name(eh->e_type));
	if (eh->e_machine != EM_X86_64)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: ELF core for machine %u is not supported (need x86-64)",
				       path, eh->e_machine);
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

// Only kernel-half virtual addresses (bit 63 set: 4- and 5-level) make a
// virtual segment. QEMU 7.2 dump-guest-memory without paging writes
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
				   zero_paddr_virt > 1);
		struct kp_error *err = add_load(st, i, use_paddr);
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
	err = read_notes(&st, &tmp);
	if (!err)
		err = add_loads(&st);
	if (err) {
		kp_source_deinit(&tmp);
		goto out;
	}
	if (tmp.live) {
		// kcore's NT_PRSTATUS is an empty placeholder, not CPU state.
		free(tmp.cpus);
		tmp.cpus = NULL;
		tmp.ncpus = 0;
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
