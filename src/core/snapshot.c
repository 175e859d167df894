// kp_snapshot_write: copies the physical memory of any source (the live
// /proc/kcore above all) into a new ELF vmcore that kpeek, crash and drgn read.
//
// Layout: Ehdr, Phdrs (PT_NOTE, one PT_LOAD per physical range, then, as in
// kdump vmcores, a PT_LOAD of the kernel image at its virtual address whose
// bytes are those of the RAM load holding it), the section header 0 when the
// count needs PN_XNUM, the notes, then each range's bytes at a 4 KiB-aligned
// offset. All-zero pages are skipped with the file
// pre-sized by ftruncate, so they stay holes. The output is written under a
// temporary name and renamed into place only when complete.
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/kernel.h"

#define PAGE 4096ULL
#define CHUNK (4U << 20)	// bytes read from the source at a time
#define NT_QEMU_STATE 0		// "QEMU" notes have type 0 (QEMU target/i386/arch_dump.c)

// x86-64 struct elf_prstatus (include/uapi/linux/elfcore.h, unchanged since 2.6):
// 336 bytes, pr_reg (struct user_regs_struct, 27 u64) at 112.
#define PRSTATUS_SIZE 336
#define PRSTATUS_REG_OFFSET 112
enum { REG_RIP = 16, REG_CS = 17, REG_RSP = 19, REG_GS_BASE = 22 };
// QEMUCPUState version 1 with kernel_gs_base (QEMU >= 5.0): 16 GPRs from 8
// (rsp is the 7th), rip 136, segments from 152 (24 bytes each: cs ds es fs gs ss
// ldt tr gdt idt; limit at +4, base at +16), cr[5] at 392, kernel_gs_base 432.
#define QEMU_STATE_SIZE 440
#define QEMU_RSP_OFFSET (8 + 6 * 8)
#define QEMU_RIP_OFFSET 136
#define QEMU_SEG_OFFSET(i) (152 + 24 * (i))
enum { QSEG_CS = 0, QSEG_GS = 4, QSEG_GDT = 8, QSEG_IDT = 9 };
#define QEMU_CR_OFFSET 392
#define QEMU_KERNEL_GS_BASE_OFFSET 432

struct out {
	int fd;
	const char *path;	// the final name, for messages
};

static struct kp_error *write_at(struct out *o, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(o->fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return kp_error_os(errno, "%s: write of %zu bytes at offset 0x%" PRIx64,
					   o->path, len, off);
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return NULL;
}

// ---------------------------------------------------------------- notes

struct notes {
	uint8_t *buf;
	size_t len, cap;
};

static bool note_add(struct notes *nb, const char *name, uint32_t type, const void *desc,
		     size_t descsz)
{
	size_t namesz = strlen(name) + 1;
	size_t need = 12 + ((namesz + 3) & ~3UL) + ((descsz + 3) & ~3UL);
	if (descsz > UINT32_MAX)
		return false;
	if (nb->len + need > nb->cap) {
		size_t cap = nb->cap ? nb->cap : 4096;
		while (cap < nb->len + need)
			cap *= 2;
		uint8_t *n = realloc(nb->buf, cap);
		if (!n)
			return false;
		nb->buf = n;
		nb->cap = cap;
	}
	uint8_t *p = nb->buf + nb->len;
	memset(p, 0, need);
	uint32_t hdr[3] = {(uint32_t)namesz, (uint32_t)descsz, type};
	memcpy(p, hdr, 12);
	memcpy(p + 12, name, namesz);
	memcpy(p + 12 + ((namesz + 3) & ~3UL), desc, descsz);
	nb->len += need;
	return true;
}

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

// The notes the source had: VMCOREINFO text and the CPU state kpeek keeps
// (the registers it uses; the others are written as 0).
static struct kp_error *build_notes(const struct kp_source *src, struct notes *nb)
{
	if (src->vmcoreinfo &&
	    !note_add(nb, "VMCOREINFO", 0, src->vmcoreinfo, src->vmcoreinfo_size))
		return &kp_enomem;
	for (size_t i = 0; i < src->ncpus; i++) {
		const struct kp_cpu_state *c = &src->cpus[i];
		if (c->has_prstatus) {
			uint8_t d[PRSTATUS_SIZE] = {0};
			uint8_t *reg = d + PRSTATUS_REG_OFFSET;
			put_u64(reg + 8 * REG_RIP, c->rip);
			put_u64(reg + 8 * REG_CS, c->cs);
			put_u64(reg + 8 * REG_RSP, c->rsp);
			put_u64(reg + 8 * REG_GS_BASE, c->gs_base);
			if (!note_add(nb, "CORE", NT_PRSTATUS, d, sizeof(d)))
				return &kp_enomem;
		}
		if (c->has_control) {
			uint8_t d[QEMU_STATE_SIZE] = {0};
			put_u32(d, 1);
			put_u32(d + 4, QEMU_STATE_SIZE);
			put_u64(d + QEMU_RSP_OFFSET, c->rsp);
			put_u64(d + QEMU_RIP_OFFSET, c->rip);
			put_u32(d + QEMU_SEG_OFFSET(QSEG_CS), (uint32_t)c->cs);
			put_u64(d + QEMU_SEG_OFFSET(QSEG_GS) + 16, c->gs_base);
			put_u64(d + QEMU_SEG_OFFSET(QSEG_GDT) + 16, c->gdt_base);
			put_u32(d + QEMU_SEG_OFFSET(QSEG_IDT) + 4, (uint32_t)c->idt_limit);
			put_u64(d + QEMU_SEG_OFFSET(QSEG_IDT) + 16, c->idt_base);
			put_u64(d + QEMU_CR_OFFSET, c->cr0);
			put_u64(d + QEMU_CR_OFFSET + 3 * 8, c->cr3);
			put_u64(d + QEMU_CR_OFFSET + 4 * 8, c->cr4);
			put_u64(d + QEMU_KERNEL_GS_BASE_OFFSET, c->kernel_gs_base);
			if (!note_add(nb, "QEMU", NT_QEMU_STATE, d, sizeof(d)))
				return &kp_enomem;
		}
	}
	return NULL;
}

// ---------------------------------------------------------------- data

static bool page_is_zero(const uint8_t *p, size_t len)
{
	// p is 8-byte aligned (a CHUNK buffer at a multiple of PAGE).
	const uint64_t *w = (const uint64_t *)p;
	size_t i = 0;
	for (; i < len / 8; i++)
		if (w[i])
			return false;
	for (i *= 8; i < len; i++)
		if (p[i])
			return false;
	return true;
}

struct copy {
	struct kp_memory *mem;
	struct out *out;
	const struct kp_snapshot_options *opts;
	uint8_t *buf;
	uint64_t done, total;
	struct kp_snapshot_stats st;
};

// Dumps of damaged or filtered memory have pages that cannot be read (kdump
// excluded pages, corrupt compressed pages): the copy has zeros there.
static bool unreadable(const struct kp_error *err)
{
	return err->code == KP_ERR_FAULT || err->code == KP_ERR_FORMAT;
}

static struct kp_error *read_chunk(struct copy *c, uint64_t pa, size_t len)
{
	struct kp_error *err = kp_memory_read(c->mem, KP_PHYS, pa, c->buf, len);
	if (!err)
		return NULL;
	if (!unreadable(err))
		return err;
	kp_error_destroy(err);
	// Page by page, so one bad page costs only itself.
	for (size_t off = 0; off < len;) {
		size_t n = PAGE - ((pa + off) & (PAGE - 1));
		if (n > len - off)
			n = len - off;
		err = kp_memory_read(c->mem, KP_PHYS, pa + off, c->buf + off, n);
		if (err) {
			if (!unreadable(err))
				return err;
			kp_error_destroy(err);
			memset(c->buf + off, 0, n);
			c->st.unreadable_bytes += n;
		}
		off += n;
	}
	return NULL;
}

// Writes [pa, pa + size) at file offset foff (page-aligned), skipping zero pages.
static struct kp_error *copy_range(struct copy *c, uint64_t pa, uint64_t size, uint64_t foff)
{
	for (uint64_t at = 0; at < size;) {
		if (c->opts->cancel && *c->opts->cancel)
			return kp_error_create(KP_ERR_INTERRUPTED,
					       "%s: snapshot interrupted at physical 0x%" PRIx64,
					       c->out->path, pa + at);
		size_t len = size - at < CHUNK ? (size_t)(size - at) : CHUNK;
		struct kp_error *err = read_chunk(c, pa + at, len);
		if (err)
			return kp_error_prefix(err, "snapshot: reading physical 0x%" PRIx64,
					       pa + at);
		// Runs of non-zero pages (pages counted from the range's start, which
		// is page-aligned in the file).
		size_t run = 0, off = 0;
		while (off < len) {
			size_t n = len - off < PAGE ? len - off : PAGE;
			bool zero = page_is_zero(c->buf + off, n);
			if (zero) {
				c->st.zero_bytes += n;
				if (off > run) {
					err = write_at(c->out, c->buf + run, off - run,
						       foff + at + run);
					if (err)
						return err;
				}
				run = off + n;
			} else {
				c->st.data_bytes += n;
			}
			off += n;
		}
		if (len > run) {
			err = write_at(c->out, c->buf + run, len - run, foff + at + run);
			if (err)
				return err;
		}
		at += len;
		c->done += len;
		if (c->opts->progress)
			c->opts->progress(c->done, c->total, c->opts->arg);
	}
	return NULL;
}

// ---------------------------------------------------------------- ELF

static struct kp_error *write_elf(struct kp_kernel *k, struct out *out,
				  const struct kp_snapshot_options *opts,
				  struct kp_snapshot_stats *ret)
{
	const struct kp_range *ranges;
	size_t n = kp_memory_ranges(k->mem, KP_PHYS, &ranges);
	if (n == 0)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: cannot snapshot: the source has no physical memory",
				       k->file->path);
	struct notes nb = {0};
	struct kp_error *err = build_notes(&k->src, &nb);
	if (err) {
		free(nb.buf);
		return err;
	}
	// The kernel image load lets tools that read the kernel's page tables
	// through its virtual address (drgn) start without translating.
	uint64_t text_va = 0, text_pa = 0, text_size = 0;
	size_t text_range = n;
	struct kp_symbol text, end;
	struct kp_error *serr = kp_symtab_by_name(k->symtab, "_text", &text);
	if (!serr)
		serr = kp_symtab_by_name(k->symtab, "_end", &end);
	if (!serr && k->has_phys_base && text.address >= KP_START_KERNEL_MAP &&
	    end.address > text.address &&
	    end.address - KP_START_KERNEL_MAP <= KP_KERNEL_IMAGE_SIZE) {
		text_va = text.address;
		text_pa = text.address - KP_START_KERNEL_MAP + k->phys_base;
		text_size = ((end.address + PAGE - 1) & ~(PAGE - 1)) - text.address;
		// Not for an image at physical 0 (only synthetic kernels): every
		// kernel-half load at p_paddr 0 is how old kernels' kcore said
		// "no physical address", and readers would drop the RAM load too.
		for (size_t i = 0; i < n && text_pa; i++) {
			if (text_pa >= ranges[i].start && text_pa < ranges[i].end &&
			    text_size <= ranges[i].end - text_pa)
				text_range = i;
		}
	}
	kp_error_destroy(serr);
	uint64_t phnum = 1 + (uint64_t)n + (text_range < n);
	bool xnum = phnum >= PN_XNUM;
	Elf64_Ehdr eh = {0};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(Elf64_Ehdr);
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = xnum ? PN_XNUM : (Elf64_Half)phnum;
	uint64_t off = eh.e_phoff + phnum * sizeof(Elf64_Phdr);
	Elf64_Shdr sh = {0};
	if (xnum) {
		// PN_XNUM: section header 0's sh_info holds the count (as Linux
		// coredumps do, fs/binfmt_elf.c fill_extnum_info).
		eh.e_shoff = off;
		eh.e_shentsize = sizeof(Elf64_Shdr);
		eh.e_shnum = 1;
		sh.sh_size = 1;
		sh.sh_info = (Elf64_Word)phnum;
		off += sizeof(sh);
	}
	uint64_t notes_off = off;
	off = (notes_off + nb.len + PAGE - 1) & ~(PAGE - 1);

	Elf64_Phdr *ph = calloc(phnum, sizeof(*ph));
	if (!ph) {
		free(nb.buf);
		return &kp_enomem;
	}
	ph[0] = (Elf64_Phdr){.p_type = PT_NOTE, .p_offset = notes_off, .p_filesz = nb.len,
			     .p_memsz = nb.len, .p_align = 4};
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t size = ranges[i].end - ranges[i].start;
		uint64_t pa = ranges[i].start;
		// Direct-map addresses let crash and drgn use the loads as kdump
		// vmcores have them; unknown, 0 marks "physical only" as QEMU does.
		uint64_t va = 0;
		if (k->has_page_offset_base && pa <= UINT64_MAX - k->page_offset_base &&
		    size - 1 <= UINT64_MAX - k->page_offset_base - pa)
			va = k->page_offset_base + pa;
		// Same offset within a page as the address: page runs line up.
		uint64_t foff = off + (pa & (PAGE - 1));
		ph[1 + i] = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X,
					 .p_offset = foff, .p_vaddr = va, .p_paddr = pa,
					 .p_filesz = size, .p_memsz = size, .p_align = PAGE};
		off = (foff + size + PAGE - 1) & ~(PAGE - 1);
		total += size;
	}
	uint64_t file_size = ph[n].p_offset + ph[n].p_filesz;
	if (text_range < n) {
		const Elf64_Phdr *ram = &ph[1 + text_range];
		ph[1 + n] = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X,
					 .p_offset = ram->p_offset + (text_pa - ram->p_paddr),
					 .p_vaddr = text_va, .p_paddr = text_pa,
					 .p_filesz = text_size, .p_memsz = text_size,
					 .p_align = PAGE};
	}

	struct copy c = {.mem = k->mem, .out = out, .opts = opts, .total = total};
	c.st.ranges = n;
	c.st.bytes = total;
	c.st.file_size = file_size;
	if (file_size > INT64_MAX)
		err = kp_error_create(KP_ERR_UNSUPPORTED,
				      "%s: a snapshot of 0x%" PRIx64 " bytes is too large",
				      out->path, file_size);
	else if (ftruncate(out->fd, (off_t)file_size) < 0)
		err = kp_error_os(errno, "%s: cannot size the output to %" PRIu64 " bytes",
				  out->path, file_size);
	if (!err)
		err = write_at(out, &eh, sizeof(eh), 0);
	if (!err)
		err = write_at(out, ph, phnum * sizeof(*ph), eh.e_phoff);
	if (!err && xnum)
		err = write_at(out, &sh, sizeof(sh), eh.e_shoff);
	if (!err)
		err = write_at(out, nb.buf, nb.len, notes_off);
	free(nb.buf);
	if (!err) {
		c.buf = malloc(CHUNK);
		if (!c.buf)
			err = &kp_enomem;
	}
	if (!err && opts->progress)
		opts->progress(0, total, opts->arg);
	for (size_t i = 0; i < n && !err; i++)
		err = copy_range(&c, ph[1 + i].p_paddr, ph[1 + i].p_filesz, ph[1 + i].p_offset);
	free(c.buf);
	free(ph);
	if (!err)
		*ret = c.st;
	return err;
}

// ---------------------------------------------------------------- files

static struct kp_error *create_temp(const char *path, char **tmp_ret, int *fd_ret)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t len = strlen(path);
	char *tmp = malloc(len + sizeof(".tmp-XXXXXX"));
	if (!tmp)
		return &kp_enomem;
	for (int attempt = 0; attempt < 100; attempt++) {
		uint8_t rnd[6];
		if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
			uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL + attempt;
			memcpy(rnd, &x, sizeof(rnd));
		}
		memcpy(tmp, path, len);
		memcpy(tmp + len, ".tmp-", 5);
		for (int i = 0; i < 6; i++)
			tmp[len + 5 + i] = alphabet[rnd[i] % (sizeof(alphabet) - 1)];
		tmp[len + 11] = '\0';
		// kpeek's own output, the only file it writes: new, private (memory
		// holds secrets), never a file that was there before.
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			*tmp_ret = tmp;
			*fd_ret = fd;
			return NULL;
		}
		if (errno != EEXIST) {
			struct kp_error *err = kp_error_os(errno, "%s: cannot create", tmp);
			free(tmp);
			return err;
		}
	}
	free(tmp);
	return kp_error_create(KP_ERR_OS, "%s: cannot find an unused temporary name", path);
}

// rename() that never replaces an existing file.
static int rename_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	// File systems without RENAME_NOREPLACE: link() fails on an existing name.
	if (link(from, to) < 0)
		return -1;
	unlink(from);
	return 0;
}

struct kp_error *kp_snapshot_write(struct kp_kernel *k, const char *path,
				   const struct kp_snapshot_options *opts,
				   struct kp_snapshot_stats *ret)
{
	static const struct kp_snapshot_options defaults;
	if (!opts)
		opts = &defaults;
	if (!path || !*path)
		return kp_error_create(KP_ERR_INVALID, "snapshot: no output file name");
	if (opts->format == KP_SNAPSHOT_KDUMP)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: kdump-compressed snapshots are not implemented yet "
				       "(use the ELF format)", path);
	if (opts->format != KP_SNAPSHOT_ELF)
		return kp_error_create(KP_ERR_INVALID, "%s: unknown snapshot format %d", path,
				       (int)opts->format);
	// Fail before copying anything rather than at the final rename.
	struct stat st;
	if (lstat(path, &st) == 0)
		return kp_error_os(EEXIST, "%s", path);
	char *tmp = NULL;
	int fd = -1;
	struct kp_error *err = create_temp(path, &tmp, &fd);
	if (err)
		return err;
	struct out out = {.fd = fd, .path = path};
	struct kp_snapshot_stats stats;
	err = write_elf(k, &out, opts, &stats);
	if (!err && fsync(fd) < 0)
		err = kp_error_os(errno, "%s: fsync", tmp);
	if (close(fd) < 0 && !err)
		err = kp_error_os(errno, "%s: close", tmp);
	if (!err && rename_noreplace(tmp, path) < 0)
		err = kp_error_os(errno, "%s: cannot rename %s to it", path, tmp);
	if (err)
		unlink(tmp);
	free(tmp);
	if (!err && ret)
		*ret = stats;
	return err;
}
