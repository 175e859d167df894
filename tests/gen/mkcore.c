// SPDX-License-Identifier: MIT
// mkcore: synthetic x86-64 ELF cores for tests (see mkcore.h).
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mkcore.h"

struct load {
	uint64_t vaddr, paddr, filesz, memsz;
	uint8_t *data;		// NULL: a hole
	bool raw;		// explicit offset, nothing written
	uint64_t offset;	// assigned by layout() unless raw
};

struct mkcore {
	struct load *loads;
	size_t nloads;
	uint8_t *notes;
	size_t notes_len;
	uint16_t e_type, e_machine;
	bool xnum;
	// Layout, computed by layout().
	uint64_t phoff, shoff, notes_off, total;
	size_t header_len;
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "mkcore: out of memory\n");
		abort();
	}
	return p;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

struct mkcore *mkcore_create(void)
{
	struct mkcore *mc = xrealloc(NULL, sizeof(*mc));
	memset(mc, 0, sizeof(*mc));
	mc->e_type = ET_CORE;
	mc->e_machine = EM_X86_64;
	return mc;
}

void mkcore_destroy(struct mkcore *mc)
{
	if (!mc)
		return;
	for (size_t i = 0; i < mc->nloads; i++)
		free(mc->loads[i].data);
	free(mc->loads);
	free(mc->notes);
	free(mc);
}

static struct load *new_load(struct mkcore *mc)
{
	mc->loads = xrealloc(mc->loads, (mc->nloads + 1) * sizeof(*mc->loads));
	struct load *l = &mc->loads[mc->nloads++];
	memset(l, 0, sizeof(*l));
	return l;
}

void mkcore_add_load(struct mkcore *mc, uint64_t vaddr, uint64_t paddr,
		     const void *data, uint64_t filesz, uint64_t memsz)
{
	struct load *l = new_load(mc);
	l->vaddr = vaddr;
	l->paddr = paddr;
	l->filesz = filesz;
	l->memsz = memsz;
	if (data && filesz) {
		l->data = xrealloc(NULL, filesz);
		memcpy(l->data, data, filesz);
	}
}

size_t mkcore_add_load_raw(struct mkcore *mc, uint64_t vaddr, uint64_t paddr,
			   uint64_t offset, uint64_t filesz, uint64_t memsz)
{
	struct load *l = new_load(mc);
	l->vaddr = vaddr;
	l->paddr = paddr;
	l->filesz = filesz;
	l->memsz = memsz;
	l->raw = true;
	l->offset = offset;
	return mc->nloads - 1;
}

void mkcore_add_note(struct mkcore *mc, const char *name, uint32_t type,
		     const void *desc, size_t len)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1;
	size_t size = 12 + align_up(namesz, 4) + align_up(len, 4);
	mc->notes = xrealloc(mc->notes, mc->notes_len + size);
	uint8_t *p = mc->notes + mc->notes_len;
	memset(p, 0, size);
	uint32_t hdr[3] = {namesz, (uint32_t)len, type};
	memcpy(p, hdr, sizeof(hdr));
	memcpy(p + 12, name, namesz);
	if (len)
		memcpy(p + 12 + align_up(namesz, 4), desc, len);
	mc->notes_len += size;
}

void mkcore_add_vmcoreinfo(struct mkcore *mc, const char *text)
{
	mkcore_add_note(mc, "VMCOREINFO", 0, text, strlen(text));
}

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

void mkcore_add_prstatus(struct mkcore *mc, uint32_t pid, uint64_t rip, uint64_t rsp,
			 uint64_t cs, uint64_t gs_base)
{
	// x86-64 struct elf_prstatus: pr_pid at 32, pr_reg at 112 (27 u64 in
	// struct user_regs_struct order), pr_fpvalid, padding: 336 bytes.
	uint8_t d[336] = {0};
	put_u32(d + 32, pid);
	uint8_t *reg = d + 112;
	put_u64(reg + 8 * 16, rip);
	put_u64(reg + 8 * 17, cs);
	put_u64(reg + 8 * 19, rsp);
	put_u64(reg + 8 * 20, 0x18);	// ss
	put_u64(reg + 8 * 22, gs_base);
	mkcore_add_note(mc, "CORE", NT_PRSTATUS, d, sizeof(d));
}

void mkcore_add_qemu_cpu(struct mkcore *mc, const struct mkcore_qemu_cpu *cpu)
{
	uint8_t d[440] = {0};
	uint32_t size = cpu->old_layout ? 432 : 440;
	put_u32(d, 1);		// version
	put_u32(d + 4, size);
	put_u64(d + 8 + 8 * 6, cpu->rsp);	// rax rbx rcx rdx rsi rdi rsp
	put_u64(d + 136, cpu->rip);
	put_u64(d + 144, cpu->rflags);
	// Segments at 152, 24 bytes each: cs ds es fs gs ss ldt tr gdt idt.
	put_u32(d + 152, cpu->cs_selector);
	put_u64(d + 152 + 24 * 4 + 16, cpu->gs_base);
	put_u32(d + 152 + 24 * 8 + 4, cpu->gdt_limit);
	put_u64(d + 152 + 24 * 8 + 16, cpu->gdt_base);
	put_u32(d + 152 + 24 * 9 + 4, cpu->idt_limit);
	put_u64(d + 152 + 24 * 9 + 16, cpu->idt_base);
	put_u64(d + 392, cpu->cr0);
	put_u64(d + 392 + 8 * 2, cpu->cr2);
	put_u64(d + 392 + 8 * 3, cpu->cr3);
	put_u64(d + 392 + 8 * 4, cpu->cr4);
	if (!cpu->old_layout)
		put_u64(d + 432, cpu->kernel_gs_base);
	mkcore_add_note(mc, "QEMU", 0, d, size);
}

void mkcore_set_type(struct mkcore *mc, uint16_t e_type, uint16_t e_machine)
{
	mc->e_type = e_type;
	mc->e_machine = e_machine;
}

void mkcore_set_xnum(struct mkcore *mc, bool xnum)
{
	mc->xnum = xnum;
}

static size_t phnum(const struct mkcore *mc)
{
	return mc->nloads + (mc->notes_len ? 1 : 0);
}

static void layout(struct mkcore *mc)
{
	mc->phoff = sizeof(Elf64_Ehdr);
	uint64_t end = mc->phoff + phnum(mc) * sizeof(Elf64_Phdr);
	mc->shoff = 0;
	if (mc->xnum) {
		mc->shoff = end;
		end += sizeof(Elf64_Shdr);
	}
	mc->notes_off = align_up(end, 8);
	end = mc->notes_off + mc->notes_len;
	mc->header_len = end;
	uint64_t off = align_up(end, 4096);
	mc->total = end;
	for (size_t i = 0; i < mc->nloads; i++) {
		struct load *l = &mc->loads[i];
		if (l->raw)
			continue;
		l->offset = off;
		off = align_up(off + l->filesz, 4096);
		if (l->offset + l->filesz > mc->total)
			mc->total = l->offset + l->filesz;
	}
}

static uint8_t *build_header(struct mkcore *mc)
{
	layout(mc);
	uint8_t *h = xrealloc(NULL, mc->header_len);
	memset(h, 0, mc->header_len);
	Elf64_Ehdr eh = {0};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = mc->e_type;
	eh.e_machine = mc->e_machine;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = mc->phoff;
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	size_t n = phnum(mc);
	if (mc->xnum) {
		eh.e_phnum = PN_XNUM;
		eh.e_shoff = mc->shoff;
		eh.e_shentsize = sizeof(Elf64_Shdr);
		eh.e_shnum = 1;
		Elf64_Shdr sh = {0};
		sh.sh_info = (uint32_t)n;
		memcpy(h + mc->shoff, &sh, sizeof(sh));
	} else {
		eh.e_phnum = (uint16_t)n;
	}
	memcpy(h, &eh, sizeof(eh));
	Elf64_Phdr *ph = (Elf64_Phdr *)(h + mc->phoff);
	size_t k = 0;
	if (mc->notes_len) {
		Elf64_Phdr p = {.p_type = PT_NOTE, .p_offset = mc->notes_off,
				.p_filesz = mc->notes_len};
		memcpy(&ph[k++], &p, sizeof(p));
		memcpy(h + mc->notes_off, mc->notes, mc->notes_len);
	}
	for (size_t i = 0; i < mc->nloads; i++) {
		const struct load *l = &mc->loads[i];
		Elf64_Phdr p = {
			.p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X,
			.p_offset = l->offset, .p_vaddr = l->vaddr, .p_paddr = l->paddr,
			.p_filesz = l->filesz, .p_memsz = l->memsz, .p_align = 4096,
		};
		memcpy(&ph[k++], &p, sizeof(p));
	}
	return h;
}

int mkcore_write(struct mkcore *mc, const char *path)
{
	uint8_t *h = build_header(mc);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(h);
		return -1;
	}
	int ret = 0;
	if (pwrite(fd, h, mc->header_len, 0) != (ssize_t)mc->header_len)
		ret = -1;
	for (size_t i = 0; i < mc->nloads && ret == 0; i++) {
		const struct load *l = &mc->loads[i];
		if (!l->data)
			continue;
		const uint8_t *p = l->data;
		uint64_t done = 0;
		while (done < l->filesz) {
			ssize_t w = pwrite(fd, p + done, l->filesz - done,
					   (off_t)(l->offset + done));
			if (w <= 0) {
				ret = -1;
				break;
			}
			done += (uint64_t)w;
		}
	}
	if (ret == 0 && ftruncate(fd, (off_t)mc->total) < 0)
		ret = -1;
	int saved = errno;
	close(fd);
	free(h);
	errno = saved;
	return ret;
}

char *mkcore_write_tmp(struct mkcore *mc)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	char *path;
	if (asprintf(&path, "%s/mkcore-XXXXXX", dir) < 0)
		abort();
	int fd = mkstemp(path);
	if (fd < 0 || mkcore_write(mc, path) < 0) {
		fprintf(stderr, "mkcore: cannot write %s: %s\n", path, strerror(errno));
		abort();
	}
	close(fd);
	return path;
}

void mkcore_to_buffer(struct mkcore *mc, size_t max_len, uint8_t **buf_ret,
		      size_t *len_ret)
{
	uint8_t *h = build_header(mc);
	if (mc->total > max_len) {
		fprintf(stderr, "mkcore: image of %llu bytes is larger than %zu\n",
			(unsigned long long)mc->total, max_len);
		abort();
	}
	uint8_t *buf = xrealloc(NULL, mc->total);
	memset(buf, 0, mc->total);
	memcpy(buf, h, mc->header_len);
	for (size_t i = 0; i < mc->nloads; i++) {
		const struct load *l = &mc->loads[i];
		if (l->data)
			memcpy(buf + l->offset, l->data, l->filesz);
	}
	free(h);
	*buf_ret = buf;
	*len_ret = mc->total;
}

uint64_t mkcore_phoff(const struct mkcore *mc)
{
	return mc->phoff;
}

uint64_t mkcore_notes_offset(const struct mkcore *mc)
{
	return mc->notes_off;
}

uint64_t mkcore_load_offset(const struct mkcore *mc, size_t i)
{
	return i < mc->nloads ? mc->loads[i].offset : 0;
}

int mkcore_write_bytes(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, (const uint8_t *)buf + done, len - done);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)w;
	}
	return close(fd);
}
