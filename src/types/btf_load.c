// SPDX-License-Identifier: MIT
// Loading and validating BTF blobs (btf_load.h). The layout is the kernel's
// (include/uapi/linux/btf.h): a header, a type section of variable-length
// records, a string section. The validation walks every record, so that a
// blob read out of a dump (whose .BTF section anyone could have edited)
// reaches libbpf only when libbpf would accept it without complaint.
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/btf.h>

#include "io/file.h"
#include "types/btf_load.h"
#include "util/error.h"
#include "util/le.h"

// Type ids are 31-bit in practice; the kernel's BTF has ~100k types.
#define MAX_TYPES (1u << 24)

struct blob {
	const uint8_t *types;	// type section
	uint32_t type_len;
	uint32_t str_len;
	uint32_t type_start;	// file offset of the type section, for messages
	const char *where;
	uint32_t ntypes;	// records counted by the first pass (ids 1..ntypes)
	// Split BTF: its ids continue the base's (base_types + 1 on), its
	// string offsets the base's strings (base_strs on); 0 for a whole BTF.
	uint32_t base_types, base_strs;
};

// Bytes of a record's trailing data (after the 12-byte struct btf_type), or
// -1 for an unknown kind. Kinds and their data as of Linux 6.0 (ENUM64).
static long trailing(unsigned kind, uint32_t vlen)
{
	switch (kind) {
	case BTF_KIND_INT: return 4;
	case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE: case BTF_KIND_CONST: case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC: case BTF_KIND_FLOAT: case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY: return 12;
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: return 12L * vlen;
	case BTF_KIND_ENUM: return 8L * vlen;
	case BTF_KIND_FUNC_PROTO: return 8L * vlen;
	case BTF_KIND_VAR: return 4;
	case BTF_KIND_DATASEC: return 12L * vlen;
	case BTF_KIND_DECL_TAG: return 4;
	case BTF_KIND_ENUM64: return 12L * vlen;
	}
	return -1;
}

static struct kp_error *bad(const struct blob *b, uint32_t id, uint64_t off, const char *what,
			    uint64_t value)
{
	return kp_error_create(KP_ERR_FORMAT,
			       "%s: corrupt BTF: type [%" PRIu32 "] at offset 0x%" PRIx64
			       ": %s (%" PRIu64 ")", b->where, id, b->type_start + off, what, value);
}

static bool name_ok(const struct blob *b, uint32_t off)
{
	return (uint64_t)off < (uint64_t)b->base_strs + b->str_len;
}

static bool ref_ok(const struct blob *b, uint32_t id)
{
	return (uint64_t)id <= (uint64_t)b->base_types + b->ntypes;
}

// One record at off (already known to fit): names, references and the
// per-kind rules libbpf relies on.
static struct kp_error *check_type(const struct blob *b, uint32_t id, uint64_t off)
{
	const uint8_t *p = b->types + off;
	uint32_t name_off = kp_le32(p), info = kp_le32(p + 4), st = kp_le32(p + 8);
	unsigned kind = BTF_INFO_KIND(info);
	uint32_t vlen = BTF_INFO_VLEN(info);
	const uint8_t *d = p + 12;
	if (!name_ok(b, name_off))
		return bad(b, id, off, "name offset past the string section", name_off);
	switch (kind) {
	case BTF_KIND_INT: {
		uint32_t enc = kp_le32(d);
		if (st != 1 && st != 2 && st != 4 && st != 8 && st != 16)
			return bad(b, id, off, "integer size", st);
		if (BTF_INT_BITS(enc) > 128 || BTF_INT_OFFSET(enc) + BTF_INT_BITS(enc) > st * 8)
			return bad(b, id, off, "integer bits", enc);
		break;
	}
	case BTF_KIND_PTR: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC:
	case BTF_KIND_VAR: case BTF_KIND_TYPE_TAG: case BTF_KIND_DECL_TAG:
		if (!ref_ok(b, st))
			return bad(b, id, off, "referenced type id out of range", st);
		break;
	case BTF_KIND_ARRAY:
		if (!ref_ok(b, kp_le32(d)) || !ref_ok(b, kp_le32(d + 4)))
			return bad(b, id, off, "array element or index type out of range",
				   kp_le32(d));
		break;
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		for (uint32_t i = 0; i < vlen; i++, d += 12) {
			if (!name_ok(b, kp_le32(d)))
				return bad(b, id, off, "member name offset", kp_le32(d));
			if (!ref_ok(b, kp_le32(d + 4)))
				return bad(b, id, off, "member type id out of range", kp_le32(d + 4));
		}
		break;
	case BTF_KIND_ENUM: case BTF_KIND_ENUM64:
		for (uint32_t i = 0; i < vlen; i++, d += kind == BTF_KIND_ENUM ? 8 : 12)
			if (!name_ok(b, kp_le32(d)))
				return bad(b, id, off, "enumerator name offset", kp_le32(d));
		break;
	case BTF_KIND_FUNC_PROTO:
		if (!ref_ok(b, st))
			return bad(b, id, off, "return type id out of range", st);
		for (uint32_t i = 0; i < vlen; i++, d += 8) {
			if (!name_ok(b, kp_le32(d)))
				return bad(b, id, off, "parameter name offset", kp_le32(d));
			if (!ref_ok(b, kp_le32(d + 4)))
				return bad(b, id, off, "parameter type id out of range", kp_le32(d + 4));
		}
		break;
	case BTF_KIND_DATASEC:
		for (uint32_t i = 0; i < vlen; i++, d += 12)
			if (!ref_ok(b, kp_le32(d)))
				return bad(b, id, off, "variable type id out of range", kp_le32(d));
		break;
	}
	return NULL;
}

// The header: magic, version, size, and no field we do not know.
static struct kp_error *check_header(const void *data, size_t size, const char *where,
				     struct btf_header *hdr)
{
	if (size < sizeof(*hdr))
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: truncated BTF: %zu bytes, the header needs %zu",
				       where, size, sizeof(*hdr));
	memcpy(hdr, data, sizeof(*hdr));
	if (hdr->magic == __builtin_bswap16(BTF_MAGIC))
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: big-endian BTF (magic 0x%04x at offset 0) is not supported",
				       where, hdr->magic);
	if (hdr->magic != BTF_MAGIC)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: bad BTF magic 0x%04x at offset 0 (expected 0x%04x)",
				       where, hdr->magic, BTF_MAGIC);
	if (hdr->version != BTF_VERSION)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: unsupported BTF version %u at offset 2 (expected %u)",
				       where, hdr->version, BTF_VERSION);
	if (size > KP_BTF_MAX_SIZE)
		return kp_error_create(KP_ERR_FORMAT, "%s: BTF of %zu bytes (more than %u MiB)",
				       where, size, KP_BTF_MAX_SIZE >> 20);
	if (hdr->hdr_len < sizeof(*hdr) || hdr->hdr_len > size)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: bad BTF header length %u at offset 4 (blob is %zu bytes)",
				       where, hdr->hdr_len, size);
	// Fields the kernel added after the ones we know must be zero
	// (libbpf and the kernel refuse them otherwise).
	for (size_t i = sizeof(*hdr); i < hdr->hdr_len; i++)
		if (((const uint8_t *)data)[i])
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: unknown nonzero BTF header field at offset %zu",
					       where, i);
	return NULL;
}

// The type and string sections: inside the blob, aligned, apart; strings
// NUL-terminated (a split BTF's are the base's continued).
static struct kp_error *check_sections(const void *data, size_t size, const char *where,
				       const struct btf_header *hdr, bool split,
				       uint32_t base_strs)
{
	uint64_t meta = size - hdr->hdr_len;
	// Types start at hdr_len + type_off: libbpf checks only type_off, and
	// an odd hdr_len would leave every struct btf_type misaligned.
	if (hdr->type_off % 4 || hdr->hdr_len % 4)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: BTF type section at offset %u + %u is not 4-byte aligned",
				       where, hdr->hdr_len, hdr->type_off);
	if ((uint64_t)hdr->type_off + hdr->type_len > meta)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: BTF type section [%u, +%u) runs past the end (%" PRIu64
				       " bytes after the header)",
				       where, hdr->type_off, hdr->type_len, meta);
	if ((uint64_t)hdr->str_off + hdr->str_len > meta)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: BTF string section [%u, +%u) runs past the end (%" PRIu64
				       " bytes after the header)",
				       where, hdr->str_off, hdr->str_len, meta);
	if ((uint64_t)hdr->type_off + hdr->type_len > hdr->str_off)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: BTF type section [%u, +%u) overlaps the string section at %u",
				       where, hdr->type_off, hdr->type_len, hdr->str_off);
	const char *strs = (const char *)data + hdr->hdr_len + hdr->str_off;
	// Split BTF may have no strings of its own, and its first need not be
	// empty (libbpf's btf_parse_str_sec()).
	if (split && hdr->str_len == 0) {
		;
	} else if (hdr->str_len == 0 || hdr->str_len > BTF_MAX_NAME_OFFSET ||
		   (!split && strs[0] != '\0') || strs[hdr->str_len - 1] != '\0' ||
		   (uint64_t)base_strs + hdr->str_len > BTF_MAX_NAME_OFFSET)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: bad BTF string section at offset %u (length %u)",
				       where, hdr->hdr_len + hdr->str_off, hdr->str_len);
	if (hdr->type_len % 4)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: BTF type section length %u is not a multiple of 4",
				       where, hdr->type_len);
	return NULL;
}

// Pass 1: the records tile the type section exactly; b->ntypes counts them.
static struct kp_error *count_types(struct blob *b)
{
	uint64_t off = 0;
	uint32_t n = 0;
	while (off < b->type_len) {
		if (b->type_len - off < 12)
			return bad(b, n + 1, off, "record header runs past the type section",
				   b->type_len - off);
		uint32_t info = kp_le32(b->types + off + 4);
		long extra = trailing(BTF_INFO_KIND(info), BTF_INFO_VLEN(info));
		if (extra < 0)
			return bad(b, n + 1, off, "unknown kind", BTF_INFO_KIND(info));
		if ((uint64_t)extra > b->type_len - off - 12)
			return bad(b, n + 1, off, "record runs past the type section",
				   (uint64_t)extra);
		if (++n > MAX_TYPES - b->base_types)
			return bad(b, n, off, "too many types", n);
		off += 12 + (uint64_t)extra;
	}
	b->ntypes = n;
	return NULL;
}

// Pass 2: every name and reference inside the blob.
static struct kp_error *check_types(const struct blob *b)
{
	uint64_t off = 0;
	for (uint32_t id = 1; id <= b->ntypes; id++) {
		struct kp_error *err = check_type(b, b->base_types + id, off);
		if (err)
			return err;
		uint32_t info = kp_le32(b->types + off + 4);
		off += 12 + (uint64_t)trailing(BTF_INFO_KIND(info), BTF_INFO_VLEN(info));
	}
	return NULL;
}

static struct kp_error *validate(const void *data, size_t size, const char *where,
				 uint32_t base_types, uint32_t base_strs)
{
	struct btf_header hdr;
	struct kp_error *err = check_header(data, size, where, &hdr);
	if (!err)
		err = check_sections(data, size, where, &hdr, base_types > 0, base_strs);
	if (err)
		return err;
	struct blob b = {
		.types = (const uint8_t *)data + hdr.hdr_len + hdr.type_off,
		.type_len = hdr.type_len, .str_len = hdr.str_len,
		.type_start = hdr.hdr_len + hdr.type_off, .where = where,
		.base_types = base_types, .base_strs = base_strs,
	};
	if ((err = count_types(&b)))
		return err;
	return check_types(&b);
}

struct kp_error *kp_btf_validate(const void *data, size_t size, const char *where)
{
	return validate(data, size, where, 0, 0);
}

struct kp_error *kp_btf_validate_split(const void *data, size_t size, const char *where,
				       uint32_t base_types, uint32_t base_strs)
{
	if (!base_types)
		return kp_error_create(KP_ERR_INVALID, "%s: split BTF over an empty base", where);
	return validate(data, size, where, base_types, base_strs);
}

struct kp_error *kp_btf_from_blob(const void *data, size_t size, const char *where,
				  struct btf **ret)
{
	struct kp_error *err = kp_btf_validate(data, size, where);
	if (err)
		return err;
	struct btf *btf = btf__new(data, (uint32_t)size);
	if (!btf)
		return kp_error_create(KP_ERR_FORMAT, "%s: libbpf rejected the BTF: %s", where,
				       strerror(errno));
	*ret = btf;
	return NULL;
}

// The .BTF section of an ELF file (a vmlinux), found with libelf.
static struct kp_error *from_elf(const char *path, const char *buf, size_t len,
				 struct btf **ret)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)buf, len);
	if (!elf)
		return kp_error_create(KP_ERR_FORMAT, "BTF file %s: not a readable ELF file: %s",
				       path, elf_errmsg(-1));
	struct kp_error *err = NULL;
	size_t shstrndx;
	Elf_Scn *scn = NULL, *btf_scn = NULL;
	if (elf_getshdrstrndx(elf, &shstrndx)) {
		err = kp_error_create(KP_ERR_FORMAT, "BTF file %s: no section name table", path);
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".BTF")) {
			btf_scn = scn;
			break;
		}
	}
	Elf_Data *data = btf_scn ? elf_getdata(btf_scn, NULL) : NULL;
	if (!data || !data->d_buf) {
		err = kp_error_create(KP_ERR_NOT_FOUND, "BTF file %s: ELF file without a .BTF section",
				      path);
		goto out;
	}
	char where[512];
	snprintf(where, sizeof(where), "BTF file %s (.BTF section)", path);
	err = kp_btf_from_blob(data->d_buf, data->d_size, where, ret);
out:
	elf_end(elf);
	return err;
}

struct kp_error *kp_btf_from_file(const char *path, struct btf **ret)
{
	char *buf;
	size_t len;
	struct kp_error *err = kp_read_whole_file(path, &buf, &len);
	if (err)
		return kp_error_prefix(err, "BTF file %s", path);
	if (len >= 4 && memcmp(buf, "\177ELF", 4) == 0) {
		err = from_elf(path, buf, len, ret);
	} else {
		char where[512];
		snprintf(where, sizeof(where), "BTF file %s", path);
		err = kp_btf_from_blob(buf, len, where, ret);
	}
	free(buf);
	return err;
}
