// SPDX-License-Identifier: MIT
// Module BTF added to a kernel's types (kp_types_add_split): each module's
// split BTF is validated against the base, its type ids remapped after the
// types already present, and appended to the working BTF; and the callback
// that loads it when a type name misses (kp_types_set_more).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "types/btf_load.h"
#include "types/types_impl.h"
#include "util/error.h"
#include "util/vec.h"

// Module BTF is split BTF over vmlinux's: ids below first are the kernel's
// (the same in the working BTF), the module's own from first on are
// renumbered to where they now start.
static bool remap(uint32_t *id, uint32_t first, uint32_t end, uint32_t to)
{
	if (*id < first)
		return true;
	if (*id >= end)
		return false;
	*id = to + (*id - first);
	return true;
}

static bool remap_type(struct btf_type *bt, uint32_t first, uint32_t end, uint32_t to)
{
	bool ok = true;
	switch (btf_kind(bt)) {
	case BTF_KIND_INT: case BTF_KIND_FWD: case BTF_KIND_ENUM: case BTF_KIND_ENUM64:
	case BTF_KIND_FLOAT:
		break;
	case BTF_KIND_PTR: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE: case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT: case BTF_KIND_FUNC: case BTF_KIND_VAR: case BTF_KIND_TYPE_TAG:
	case BTF_KIND_DECL_TAG:
		ok = remap(&bt->type, first, end, to);
		break;
	case BTF_KIND_ARRAY: {
		struct btf_array *a = btf_array(bt);
		ok = remap(&a->type, first, end, to) && remap(&a->index_type, first, end, to);
		break;
	}
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: {
		struct btf_member *m = btf_members(bt);
		for (uint32_t i = 0; i < btf_vlen(bt) && ok; i++)
			ok = remap(&m[i].type, first, end, to);
		break;
	}
	case BTF_KIND_FUNC_PROTO: {
		struct btf_param *prm = btf_params(bt);
		ok = remap(&bt->type, first, end, to);
		for (uint32_t i = 0; i < btf_vlen(bt) && ok; i++)
			ok = remap(&prm[i].type, first, end, to);
		break;
	}
	case BTF_KIND_DATASEC: {
		struct btf_var_secinfo *v = btf_var_secinfos(bt);
		for (uint32_t i = 0; i < btf_vlen(bt) && ok; i++)
			ok = remap(&v[i].type, first, end, to);
		break;
	}
	default:
		ok = false;
	}
	return ok;
}

// libbpf 1.1 (Debian 12) declares btf__new_split() but does not export it
// (1.2 does): its file-based parser reads the bytes from a memfd instead.
static struct kp_error *parse_split(const struct kp_types *t, const void *data, size_t size,
				    struct btf **ret)
{
	// Validated first: libbpf must not see (and log about) a corrupt blob.
	struct kp_error *err = kp_btf_validate_split(data, size, "module BTF", (uint32_t)t->nbase,
						     t->base_strs);
	if (err)
		return err;
	int fd = memfd_create("kpeek-split-btf", MFD_CLOEXEC);
	if (fd < 0)
		return kp_error_create(KP_ERR_OS, "memfd_create: %s", strerror(errno));
	const uint8_t *p = data;
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(fd, p + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(fd);
			return kp_error_create(KP_ERR_OS, "memfd: %s", strerror(e));
		}
		done += (size_t)n;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct btf *m = btf__parse_raw_split(path, t->base);
	int e = errno;
	close(fd);
	if (!m)
		return kp_error_create(KP_ERR_FORMAT, "split BTF of %zu bytes does not parse: %s", size,
				       strerror(e));
	*ret = m;
	return NULL;
}

struct kp_error *kp_types_add_split(struct kp_types *t, const void *data, size_t size,
				    size_t *added)
{
	// btf__add_type() adds the names it copies with a string lookup that
	// converts the base to its modifiable form, freeing the strings the
	// module's BTF was parsed over (libbpf 1.1): convert it first. Then
	// the VAR index, which points into the base, is stale.
	free(t->vars);
	t->vars = NULL;
	t->nvars = 0;
	t->vars_indexed = false;
	if (btf__find_str(t->work, "int") == -ENOMEM)
		return &kp_enomem;
	struct btf *m = NULL;
	struct kp_error *err = parse_split(t, data, size, &m);
	if (err)
		return err;
	uint32_t first = btf__type_cnt(t->base), end = btf__type_cnt(m);
	uint32_t to = btf__type_cnt(t->work);
	// parse_split() validated every reference (kp_btf_validate_split()),
	// so remap_type() cannot fail below: the add is all or nothing but for
	// running out of memory.
	for (uint32_t id = first; id < end && !err; id++) {
		int nid = btf__add_type(t->work, m, btf__type_by_id(m, id));
		if (nid < 0) {
			err = nid == -ENOMEM ? &kp_enomem :
			      kp_error_create(KP_ERR_FORMAT, "split BTF type %u: %s", id, strerror(-nid));
			break;
		}
		// libbpf keeps the type data writable in the working BTF.
		struct btf_type *bt = (struct btf_type *)btf__type_by_id(t->work, (uint32_t)nid);
		if (!remap_type(bt, first, end, to))
			err = kp_error_create(KP_ERR_FORMAT, "split BTF type %u (kind %u) names a type past its last (%u)",
					      id, btf_kind(bt), end - 1);
		else
			(*added)++;
	}
	btf__free(m);
	return err;
}

void kp_types_set_more(struct kp_types *t, kp_types_more_fn *fn, void *ctx)
{
	t->more = fn;
	t->more_ctx = ctx;
}

void kp_types_set_more_note(struct kp_types *t, const char *note)
{
	free(t->more_note);
	t->more_note = note ? strdup(note) : NULL;	// a lost note only shortens a message
}

const char *kp_types_more_note(const struct kp_types *t)
{
	return t->more_note;
}

bool kp_types_more(struct kp_types *t)
{
	if (!t->more || t->more_done)
		return false;
	t->more_done = true;
	return t->more(t->more_ctx, t);
}
