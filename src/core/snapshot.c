// SPDX-License-Identifier: MIT
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

#include "arch/arch.h"
#include "core/kernel.h"
#include "core/snapshot.h"
#include "format/source.h"
#include "io/memory.h"
#include "util/error.h"
#include "util/vec.h"
#include "util/opts.h"

#define PAGE SNAP_PAGE

// Writes [pa, pa + size) at file offset foff (page-aligned), skipping zero pages.
static struct kp_error *copy_range(struct snap_copy *c, uint64_t pa, uint64_t size, uint64_t foff)
{
	for (uint64_t at = 0; at < size;) {
		size_t len = size - at < SNAP_CHUNK ? (size_t)(size - at) : SNAP_CHUNK;
		struct kp_error *err = snap_read_chunk(c, pa + at, len);
		if (err)
			return kp_error_prefix(err, "snapshot: reading physical 0x%" PRIx64,
					       pa + at);
		// Runs of non-zero pages (pages counted from the range's start, which
		// is page-aligned in the file).
		size_t run = 0, off = 0;
		while (off < len) {
			size_t n = len - off < PAGE ? len - off : PAGE;
			bool zero = snap_page_is_zero(c->buf + off, n);
			if (zero) {
				c->st.zero_bytes += n;
				if (off > run) {
					err = snap_write_at(c->out, c->buf + run, off - run,
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
			err = snap_write_at(c->out, c->buf + run, len - run, foff + at + run);
			if (err)
				return err;
		}
		if ((err = snap_chunk_done(c, pa + at, len)))
			return err;
		at += len;
	}
	return NULL;
}

// ---------------------------------------------------------------- ELF

// Where everything goes in the file.
struct elf_layout {
	Elf64_Ehdr eh;
	bool xnum;		// PN_XNUM: section header 0 holds the count
	Elf64_Shdr sh;
	Elf64_Phdr *ph;		// PT_NOTE, one PT_LOAD per range, the image's
	uint64_t phnum;
	uint64_t notes_off;
	uint64_t total;		// bytes of memory
	uint64_t file_size;
};

// The kernel image load lets tools that read the kernel's page tables
// through its virtual address (drgn) start without translating: *range is
// the RAM range that holds it, n if none does.
static void find_image_load(struct kp_kernel *k, const struct kp_range *ranges, size_t n,
			    Elf64_Phdr *ret, size_t *range)
{
	const struct kp_arch *arch = kp_kernel_arch(k);
	const struct kp_arch_ctx *ctx = kp_kernel_arch_ctx(k);
	struct kp_symbol text, end;
	uint64_t map_va, map_pa, image_start, image_end;
	*range = n;
	arch->image_range(ctx, &image_start, &image_end);
	if (!kp_symbol_find(k, "_text", &text) || !kp_symbol_find(k, "_end", &end) ||
	    !arch->image_map(ctx, &map_va, &map_pa) || text.address < map_va ||
	    text.address < image_start || end.address <= text.address ||
	    end.address > image_end)
		return;
	uint64_t text_pa = text.address - map_va + map_pa;
	uint64_t text_size = ((end.address + PAGE - 1) & ~(PAGE - 1)) - text.address;
	// Not for an image at physical 0 (only synthetic kernels): every
	// kernel-half load at p_paddr 0 is how old kernels' kcore said "no
	// physical address", and readers would drop the RAM load too.
	for (size_t i = 0; i < n && text_pa; i++) {
		if (text_pa >= ranges[i].start && text_pa < ranges[i].end &&
		    text_size <= ranges[i].end - text_pa)
			*range = i;
	}
	*ret = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X,
			    .p_vaddr = text.address, .p_paddr = text_pa,
			    .p_filesz = text_size, .p_memsz = text_size, .p_align = PAGE};
}

// The ELF header for l->phnum program headers (and section header 0 when
// that needs PN_XNUM); returns the file offset after the headers.
static uint64_t elf_header(const struct kp_arch *arch, struct elf_layout *l)
{
	Elf64_Ehdr *eh = &l->eh;
	l->xnum = l->phnum >= PN_XNUM;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_CORE;
	eh->e_machine = arch->elf_machine;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(Elf64_Ehdr);
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = l->xnum ? PN_XNUM : (Elf64_Half)l->phnum;
	uint64_t off = eh->e_phoff + l->phnum * sizeof(Elf64_Phdr);
	if (l->xnum) {
		// PN_XNUM: section header 0's sh_info holds the count (as Linux
		// coredumps do, fs/binfmt_elf.c fill_extnum_info).
		eh->e_shoff = off;
		eh->e_shentsize = sizeof(Elf64_Shdr);
		eh->e_shnum = 1;
		l->sh.sh_size = 1;
		l->sh.sh_info = (Elf64_Word)l->phnum;
		off += sizeof(l->sh);
	}
	return off;
}

// One PT_LOAD per physical range, each at a page-aligned file offset from
// off on, with its direct-map address when the architecture knows one.
static void ram_loads(const struct kp_arch *arch, const struct kp_arch_ctx *ctx,
		      const struct kp_range *ranges, size_t n, uint64_t off,
		      struct elf_layout *l)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t size = ranges[i].end - ranges[i].start;
		uint64_t pa = ranges[i].start;
		// Direct-map addresses let crash and drgn use the loads as kdump
		// vmcores have them; unknown, 0 marks "physical only" as QEMU does.
		uint64_t va = 0, last;
		if (!arch->phys_to_virt(ctx, pa, &va) ||
		    !arch->phys_to_virt(ctx, pa + (size - 1), &last) || last - va != size - 1)
			va = 0;
		// Same offset within a page as the address: page runs line up.
		uint64_t foff = off + (pa & (PAGE - 1));
		l->ph[1 + i] = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X,
					    .p_offset = foff, .p_vaddr = va, .p_paddr = pa,
					    .p_filesz = size, .p_memsz = size, .p_align = PAGE};
		off = (foff + size + PAGE - 1) & ~(PAGE - 1);
		l->total += size;
	}
	l->file_size = l->ph[n].p_offset + l->ph[n].p_filesz;
}

static struct kp_error *lay_out(struct kp_kernel *k, const struct kp_range *ranges, size_t n,
				size_t notes_len, struct elf_layout *l)
{
	const struct kp_arch *arch = kp_kernel_arch(k);
	Elf64_Phdr image = {0};
	size_t image_range;
	find_image_load(k, ranges, n, &image, &image_range);
	l->phnum = 1 + (uint64_t)n + (image_range < n);
	l->notes_off = elf_header(arch, l);
	uint64_t off = (l->notes_off + notes_len + PAGE - 1) & ~(PAGE - 1);
	if (!(l->ph = calloc(l->phnum, sizeof(*l->ph))))
		return &kp_enomem;
	l->ph[0] = (Elf64_Phdr){.p_type = PT_NOTE, .p_offset = l->notes_off,
				.p_filesz = notes_len, .p_memsz = notes_len, .p_align = 4};
	ram_loads(arch, kp_kernel_arch_ctx(k), ranges, n, off, l);
	if (image_range < n) {
		// The image's bytes are those of the RAM load holding it.
		const Elf64_Phdr *ram = &l->ph[1 + image_range];
		image.p_offset = ram->p_offset + (image.p_paddr - ram->p_paddr);
		l->ph[1 + n] = image;
	}
	return NULL;
}

// Sizes the file (the zero pages it will not write stay holes) and writes
// everything but the memory.
static struct kp_error *write_headers(struct snap_out *out, const struct elf_layout *l,
				      const struct snap_notes *nb)
{
	struct kp_error *err = NULL;
	if (l->file_size > INT64_MAX)
		err = kp_error_create(KP_ERR_UNSUPPORTED,
				      "%s: a snapshot of 0x%" PRIx64 " bytes is too large",
				      out->path, l->file_size);
	else if (ftruncate(out->fd, (off_t)l->file_size) < 0)
		err = kp_error_output(errno, "%s: cannot size the output to %" PRIu64 " bytes",
				  out->path, l->file_size);
	if (!err)
		err = snap_write_at(out, &l->eh, sizeof(l->eh), 0);
	if (!err)
		err = snap_write_at(out, l->ph, l->phnum * sizeof(*l->ph), l->eh.e_phoff);
	if (!err && l->xnum)
		err = snap_write_at(out, &l->sh, sizeof(l->sh), l->eh.e_shoff);
	if (!err)
		err = snap_write_at(out, nb->buf, nb->len, l->notes_off);
	return err;
}

// Copies the memory of every RAM load, reporting progress.
static struct kp_error *copy_memory(struct snap_copy *c, const struct elf_layout *l, size_t n)
{
	if (!(c->buf = malloc(SNAP_CHUNK)))
		return &kp_enomem;
	struct kp_error *err = NULL;
	if (c->opts->progress)
		c->opts->progress(0, l->total, c->opts->arg);
	for (size_t i = 0; i < n && !err; i++)
		err = copy_range(c, l->ph[1 + i].p_paddr, l->ph[1 + i].p_filesz,
				 l->ph[1 + i].p_offset);
	free(c->buf);
	return err;
}

// The pages the source could not give, in a "KPEEK" note after the data,
// with the program headers written again after it, one PT_NOTE longer:
// readers of the snapshot then know them as lost, not as zeros. (A
// snapshot that lost nothing keeps its headers where they are.)
static struct kp_error *write_lost(struct snap_copy *c, struct elf_layout *l)
{
	static const char name[8] = KP_NOTE_NAME;	// "KPEEK\0", padded to 8
	uint64_t note_off = (l->file_size + 7) & ~7ULL, desc = 16 * (uint64_t)c->nlost;
	uint32_t h[3] = { sizeof(KP_NOTE_NAME), (uint32_t)desc, KP_NT_LOST };
	uint64_t len = sizeof(h) + sizeof(name) + desc;
	uint8_t *buf = malloc(len);
	Elf64_Phdr *ph = realloc(l->ph, (l->phnum + 1) * sizeof(*ph));
	if (!buf || !ph) {
		free(buf);
		if (ph)
			l->ph = ph;
		return &kp_enomem;
	}
	l->ph = ph;
	memcpy(buf, h, sizeof(h));
	memcpy(buf + sizeof(h), name, sizeof(name));
	for (size_t i = 0; i < c->nlost; i++) {
		memcpy(buf + sizeof(h) + sizeof(name) + 16 * i, &c->lost[i].start, 8);
		memcpy(buf + sizeof(h) + sizeof(name) + 16 * i + 8, &c->lost[i].end, 8);
	}
	ph[l->phnum++] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = note_off, .p_filesz = len,
				       .p_memsz = len, .p_align = 4 };
	uint64_t ph_off = (note_off + len + 7) & ~7ULL;
	elf_header(kp_arch_by_elf_machine(l->eh.e_machine), l);
	l->eh.e_phoff = ph_off;
	if (l->xnum)
		l->eh.e_shoff = ph_off + l->phnum * sizeof(*ph);
	struct kp_error *err = snap_write_at(c->out, buf, len, note_off);
	free(buf);
	if (!err)
		err = snap_write_at(c->out, ph, l->phnum * sizeof(*ph), ph_off);
	if (!err && l->xnum)
		err = snap_write_at(c->out, &l->sh, sizeof(l->sh), l->eh.e_shoff);
	if (!err)
		err = snap_write_at(c->out, &l->eh, sizeof(l->eh), 0);
	if (!err)
		l->file_size = ph_off + l->phnum * sizeof(*ph) + (l->xnum ? sizeof(l->sh) : 0);
	return err;
}

static struct kp_error *write_elf(struct kp_kernel *k, struct snap_out *out,
				  const struct kp_snapshot_options *opts,
				  struct kp_snapshot_stats *ret)
{
	const struct kp_range *ranges;
	struct kp_memory *mem = kp_kernel_memory(k);
	size_t n = kp_memory_ranges(mem, KP_PHYS, &ranges);
	if (n == 0) {
		KP_INIT(kp_kernel_info, info);
		kp_kernel_get_info(k, &info);
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: cannot snapshot: the source has no physical memory",
				       info.path);
	}
	struct snap_notes nb = {0};
	struct elf_layout l = {0};
	struct kp_error *err = snap_build_notes(kp_kernel_source(k), &nb);
	if (!err)
		err = lay_out(k, ranges, n, nb.len, &l);
	if (err) {
		free(nb.buf);
		return err;
	}
	struct snap_copy c = {.mem = mem, .out = out, .opts = opts, .total = l.total};
	c.st.ranges = n;
	c.st.bytes = l.total;
	c.st.file_size = l.file_size;
	err = write_headers(out, &l, &nb);
	free(nb.buf);
	if (!err)
		err = copy_memory(&c, &l, n);
	if (!err && c.nlost)
		err = write_lost(&c, &l);
	c.st.lost_ranges = c.nlost;
	c.st.file_size = l.file_size;
	free(c.lost);
	free(l.ph);
	if (!err) {
		size_t sz = ret->sz;
		*ret = c.st;
		ret->sz = sz;
	}
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
			struct kp_error *err = kp_error_output(errno, "%s: cannot create", tmp);
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
	struct kp_snapshot_options o;
	struct kp_error *err = kp_opts_copy(opts, &o, sizeof(o), "kp_snapshot_options");
	if (err)
		return err;
	opts = &o;
	if (!path || !*path)
		return kp_error_create(KP_ERR_INVALID, "snapshot: no output file name");
	if (opts->format > KP_SNAPSHOT_FLATTENED)
		return kp_error_create(KP_ERR_INVALID, "%s: unknown snapshot format %d", path,
				       (int)opts->format);
	// Fail before copying anything rather than at the final rename.
	struct stat st;
	if (lstat(path, &st) == 0)
		return kp_error_os(EEXIST, "%s", path);
	char *tmp = NULL;
	int fd = -1;
	err = create_temp(path, &tmp, &fd);
	if (err)
		return err;
	struct snap_out out = {.fd = fd, .path = path, .flat = opts->format == KP_SNAPSHOT_FLATTENED};
	KP_INIT(kp_snapshot_stats, stats);
	err = opts->format == KP_SNAPSHOT_ELF ? write_elf(k, &out, opts, &stats)
					      : snap_write_kdump(k, &out, opts, &stats);
	if (!err && fsync(fd) < 0)
		err = kp_error_output(errno, "%s: fsync", tmp);
	if (close(fd) < 0 && !err)
		err = kp_error_output(errno, "%s: close", tmp);
	if (!err && rename_noreplace(tmp, path) < 0)
		err = kp_error_output(errno, "%s: cannot rename %s to it", path, tmp);
	if (err)
		unlink(tmp);
	free(tmp);
	if (!err && ret)
		kp_out_copy(ret, &stats, sizeof(stats));
	return err;
}

struct kp_error *kp_snapshot_write_fd(struct kp_kernel *k, int fd, const char *name,
				      const struct kp_snapshot_options *opts,
				      struct kp_snapshot_stats *ret)
{
	struct kp_snapshot_options o;
	struct kp_error *err = kp_opts_copy(opts, &o, sizeof(o), "kp_snapshot_options");
	if (err)
		return err;
	if (o.format != KP_SNAPSHOT_FLATTENED)
		return kp_error_create(KP_ERR_INVALID, "%s: only the flattened format can be written to a "
				       "stream (the others seek)", name);
	struct snap_out out = {.fd = fd, .path = name, .flat = true};
	KP_INIT(kp_snapshot_stats, stats);
	err = snap_write_kdump(k, &out, &o, &stats);
	if (!err && ret)
		kp_out_copy(ret, &stats, sizeof(stats));
	return err;
}
