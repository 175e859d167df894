// SPDX-License-Identifier: MIT
// The output and the memory copy of kp_snapshot_write (snapshot.h).
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "core/snapshot.h"
#include "format/source.h"
#include "util/error.h"
#include "util/vec.h"

// makedumpfile.h: the flattened format's header and records.
#define FLAT_SIGNATURE "makedumpfile"
#define FLAT_HEADER_SIZE 4096
#define FLAT_TYPE 1
#define FLAT_VERSION 1
#define NT_QEMU_STATE 0		// "QEMU" notes have type 0 (QEMU dump/dump.c)

static struct kp_error *write_all(struct snap_out *o, const void *buf, size_t len, uint64_t off,
				  bool seek)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = seek ? pwrite(o->fd, p, len, (off_t)off) : write(o->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return kp_error_output(errno, "%s: write of %zu bytes at %s0x%" PRIx64, o->path, len,
					   o->flat ? "stream offset " : "offset ", seek ? off : o->pos);
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
		if (!seek)
			o->pos += (uint64_t)n;
	}
	return NULL;
}

static void be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

struct kp_error *snap_write_at(struct snap_out *o, const void *buf, size_t len, uint64_t off)
{
	if (!o->flat)
		return write_all(o, buf, len, off, true);
	uint8_t rh[16];
	be64(rh, off);
	be64(rh + 8, len);
	struct kp_error *err = write_all(o, rh, sizeof(rh), 0, false);
	return err ? err : write_all(o, buf, len, 0, false);
}

struct kp_error *snap_flat_begin(struct snap_out *o)
{
	static uint8_t hdr[FLAT_HEADER_SIZE];
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, FLAT_SIGNATURE, sizeof(FLAT_SIGNATURE) - 1);
	be64(hdr + 16, FLAT_TYPE);
	be64(hdr + 24, FLAT_VERSION);
	return write_all(o, hdr, sizeof(hdr), 0, false);
}

struct kp_error *snap_flat_end(struct snap_out *o)
{
	uint8_t rh[16];
	memset(rh, 0xff, sizeof(rh));	// offset and size -1
	return write_all(o, rh, sizeof(rh), 0, false);
}

// [pa, pa + n) could not be read: a lost range (merged with the last).
static bool lose(struct snap_copy *c, uint64_t pa, uint64_t n)
{
	c->st.unreadable_bytes += n;
	if (c->nlost && c->lost[c->nlost - 1].end == pa) {
		c->lost[c->nlost - 1].end = pa + n;
		return true;
	}
	if (c->nlost >= KP_MAX_LOST || !KP_VEC_RESERVE(c->lost, c->lost_cap, c->nlost + 1))
		return false;
	c->lost[c->nlost++] = (struct kp_range){ pa, pa + n };
	return true;
}

// Dumps of damaged or filtered memory have pages that cannot be read (kdump
// excluded pages, corrupt compressed pages): the copy has zeros there.
static bool unreadable(const struct kp_error *err)
{
	return err->code == KP_ERR_FAULT || err->code == KP_ERR_FORMAT;
}

struct kp_error *snap_read_chunk(struct snap_copy *c, uint64_t pa, size_t len)
{
	memset(c->lost_page, 0, sizeof(c->lost_page));
	struct kp_error *err = kp_memory_read(c->mem, KP_PHYS, pa, c->buf, len);
	if (!err)
		return NULL;
	if (!unreadable(err))
		return err;
	kp_error_destroy(err);
	// Page by page, so one bad page costs only itself.
	for (size_t off = 0; off < len;) {
		size_t n = SNAP_PAGE - ((pa + off) & (SNAP_PAGE - 1));
		if (n > len - off)
			n = len - off;
		err = kp_memory_read(c->mem, KP_PHYS, pa + off, c->buf + off, n);
		if (err) {
			if (!unreadable(err))
				return err;
			kp_error_destroy(err);
			memset(c->buf + off, 0, n);
			c->lost_page[off / SNAP_PAGE] = true;
			if (!lose(c, pa + off, n))
				return c->nlost >= KP_MAX_LOST ?
				       kp_error_create(KP_ERR_UNSUPPORTED, "more than %u unreadable ranges in the source",
						       KP_MAX_LOST) : &kp_enomem;
		}
		off += n;
	}
	return NULL;
}

bool snap_page_is_zero(const uint8_t *p, size_t len)
{
	// p is 8-byte aligned (a chunk buffer at a multiple of SNAP_PAGE).
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

struct kp_error *snap_chunk_done(struct snap_copy *c, uint64_t pa, size_t len)
{
	c->done += len;
	if (c->opts->progress)
		c->opts->progress(c->done, c->total, c->opts->arg);
	if (c->opts->cancel && *c->opts->cancel)
		return kp_error_create(KP_ERR_INTERRUPTED, "%s: snapshot interrupted at physical 0x%" PRIx64,
				       c->out->path, pa + len);
	return NULL;
}

bool snap_note_add(struct snap_notes *nb, const char *name, uint32_t type, const void *desc,
		     size_t descsz)
{
	size_t namesz = strlen(name) + 1;
	size_t need = 12 + ((namesz + 3) & ~3UL) + ((descsz + 3) & ~3UL);
	if (descsz > UINT32_MAX)
		return false;
	if (!KP_VEC_RESERVE(nb->buf, nb->cap, nb->len + need))
		return false;
	uint8_t *p = nb->buf + nb->len;
	memset(p, 0, need);
	uint32_t hdr[3] = {(uint32_t)namesz, (uint32_t)descsz, type};
	memcpy(p, hdr, 12);
	memcpy(p + 12, name, namesz);
	memcpy(p + 12 + ((namesz + 3) & ~3UL), desc, descsz);
	nb->len += need;
	return true;
}

// The notes the source had, as it had them: VMCOREINFO text and every
// CPU's PRSTATUS and QEMU state notes (their layouts are the
// architecture's; the bytes are copied whole).
struct kp_error *snap_build_notes(const struct kp_source *src, struct snap_notes *nb)
{
	if (src->vmcoreinfo &&
	    !snap_note_add(nb, "VMCOREINFO", 0, src->vmcoreinfo, src->vmcoreinfo_size))
		return &kp_enomem;
	for (size_t i = 0; i < src->ncpus; i++) {
		const struct kp_cpu_notes *c = &src->cpus[i];
		if (c->prstatus && !snap_note_add(nb, "CORE", NT_PRSTATUS, c->prstatus, c->prstatus_len))
			return &kp_enomem;
		if (c->qemu && !snap_note_add(nb, "QEMU", NT_QEMU_STATE, c->qemu, c->qemu_len))
			return &kp_enomem;
	}
	return NULL;
}

