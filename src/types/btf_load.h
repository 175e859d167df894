// SPDX-License-Identifier: MIT
// Loading BTF blobs: a raw BTF file, the .BTF section of an ELF file (a
// vmlinux), or bytes the caller read (the kernel's own .BTF section read out
// of a dump). Every blob is validated completely (header, sections, every
// type record and every reference) before libbpf parses it, so libbpf never
// sees malformed input and never logs anything.
#ifndef KP_TYPES_BTF_LOAD_H
#define KP_TYPES_BTF_LOAD_H

#include <stddef.h>
#include <stdint.h>

struct btf;
struct kp_error;

// The kernel's BTF is ~4-6 MB; anything far beyond that is not BTF.
#define KP_BTF_MAX_SIZE (256u << 20)

// Checks a raw BTF blob; where names the source in errors ("BTF file /x",
// ".BTF in memory at 0x..."). KP_ERR_FORMAT naming the offset when corrupt.
struct kp_error *kp_btf_validate(const void *data, size_t size, const char *where);
// The same for split BTF (module BTF) over a base of base_types types and
// base_strs bytes of strings: ids and name offsets continue the base's.
struct kp_error *kp_btf_validate_split(const void *data, size_t size, const char *where,
				       uint32_t base_types, uint32_t base_strs);
struct kp_error *kp_btf_from_blob(const void *data, size_t size, const char *where,
				  struct btf **ret);
// A raw BTF file or an ELF file with a .BTF section.
struct kp_error *kp_btf_from_file(const char *path, struct btf **ret);

#endif
