// SPDX-License-Identifier: MIT
// The printk ring buffer's layout (kp_lx_prb_layout): from BTF, or from
// VMCOREINFO's OFFSET()/SIZE() entries for the ring buffer (5.10+) when the
// kernel's BTF is not at hand. printk.c decodes the ring with it.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "format/vmcoreinfo.h"
#include "linux/printk/printk.h"
#include "util/error.h"

bool kp_lx_prb_layout_ok(const struct kp_lx_prb_layout *l)
{
	return l->desc_size >= 24 && l->desc_size <= 4096 && l->info_size >= 24 &&
	       l->info_size <= 4096 && l->state_var + 8 <= l->desc_size &&
	       l->text_begin + 8 <= l->desc_size && l->text_next + 8 <= l->desc_size &&
	       l->seq + 8 <= l->info_size && l->ts_nsec + 8 <= l->info_size &&
	       l->text_len + 2 <= l->info_size && l->caller_id + 4 <= l->info_size &&
	       l->facility < l->info_size && l->flags_byte < l->info_size &&
	       l->flags_shift < 8 && l->level_shift < 8;
}

// ---------------------------------------------------------------- layout

// The ring buffer's structs (kernel/printk/printk_ringbuffer.h, 5.10+).
enum { RB_DESC_RING, RB_TEXT_DATA_RING, RB_N };
static const struct kp_member_spec rb_members[RB_N] = {
	[RB_DESC_RING] = { .name = "desc_ring" }, [RB_TEXT_DATA_RING] = { .name = "text_data_ring" },
};
static const struct kp_struct_spec rb_spec = KP_STRUCT_SPEC("struct printk_ringbuffer", rb_members);
enum { DR_COUNT_BITS, DR_DESCS, DR_INFOS, DR_HEAD_ID, DR_TAIL_ID, DR_N };
static const struct kp_member_spec dr_members[DR_N] = {
	[DR_COUNT_BITS] = { .name = "count_bits" }, [DR_DESCS] = { .name = "descs" }, [DR_INFOS] = { .name = "infos" },
	[DR_HEAD_ID] = { .name = "head_id" }, [DR_TAIL_ID] = { .name = "tail_id" },
};
static const struct kp_struct_spec dr_spec = KP_STRUCT_SPEC("struct prb_desc_ring", dr_members);
enum { TR_SIZE_BITS, TR_DATA, TR_N };
static const struct kp_member_spec tr_members[TR_N] = {
	[TR_SIZE_BITS] = { .name = "size_bits" }, [TR_DATA] = { .name = "data" },
};
static const struct kp_struct_spec tr_spec = KP_STRUCT_SPEC("struct prb_data_ring", tr_members);
enum { D_STATE_VAR, D_TEXT_BLK_LPOS, D_N };
static const struct kp_member_spec d_members[D_N] = {
	[D_STATE_VAR] = { .name = "state_var" }, [D_TEXT_BLK_LPOS] = { .name = "text_blk_lpos" },
};
static const struct kp_struct_spec d_spec = KP_STRUCT_SPEC("struct prb_desc", d_members);
enum { LP_BEGIN, LP_NEXT, LP_N };
static const struct kp_member_spec lp_members[LP_N] = {
	[LP_BEGIN] = { .name = "begin" }, [LP_NEXT] = { .name = "next" },
};
static const struct kp_struct_spec lp_spec = KP_STRUCT_SPEC("struct prb_data_blk_lpos", lp_members);
enum { I_SEQ, I_TS_NSEC, I_TEXT_LEN, I_CALLER_ID, I_FACILITY, I_FLAGS, I_LEVEL, I_N };
static const struct kp_member_spec i_members[I_N] = {
	[I_SEQ] = { .name = "seq" }, [I_TS_NSEC] = { .name = "ts_nsec" }, [I_TEXT_LEN] = { .name = "text_len" },
	[I_CALLER_ID] = { .name = "caller_id" },
	// Not in VMCOREINFO: found in BTF, else where every kernel since 5.10
	// puts them (below).
	[I_FACILITY] = { .name = "facility", .flags = KP_MEMBER_OPTIONAL },
	[I_FLAGS] = { .name = "flags", .flags = KP_MEMBER_OPTIONAL },	// u8 flags:5
	[I_LEVEL] = { .name = "level", .flags = KP_MEMBER_OPTIONAL },	// u8 level:3
};
static const struct kp_struct_spec i_spec = KP_STRUCT_SPEC("struct printk_info", i_members);

// A struct's layout from VMCOREINFO (OFFSET(type.member), SIZE(type)),
// which the kernel writes for exactly this reader (dmesg of a dump without
// BTF, and no BTF to load when it is there), else from BTF.
struct from {
	struct kp_kernel *k;
	const struct kp_struct_spec *spec;
	const struct kp_struct_layout *l;	// BTF's, once asked for
	struct kp_error *why;			// why not BTF
	bool tried;
};

static void from_init(struct from *f, struct kp_kernel *k, const struct kp_struct_spec *spec)
{
	*f = (struct from){ .k = k, .spec = spec };
}

static const struct kp_struct_layout *btf(struct from *f)
{
	if (!f->tried) {
		f->tried = true;
		if ((f->why = kp_kernel_layout(f->k, f->spec, &f->l)))
			f->l = NULL;
	}
	return f->l;
}

static struct kp_error *no_layout(struct from *f, const char *what)
{
	return kp_error_create(KP_ERR_NOT_FOUND,
			       "printk ring buffer (no BTF or VMCOREINFO layout): %s: %s", what,
			       f->why ? kp_error_message(f->why) : "not in BTF");
}

static struct kp_error *off(struct from *f, unsigned member, uint64_t *ret)
{
	const struct kp_vmcoreinfo *vi = kp_kernel_vmcoreinfo(f->k);
	const char *type = f->spec->type + strlen("struct ");
	if (vi && kp_vmcoreinfo_offset(vi, type, f->spec->members[member].name, ret))
		return NULL;
	if (btf(f)) {
		*ret = kp_layout_off(f->l, member);
		return NULL;
	}
	return no_layout(f, f->spec->members[member].name);
}

static struct kp_error *size(struct from *f, uint64_t *ret)
{
	const struct kp_vmcoreinfo *vi = kp_kernel_vmcoreinfo(f->k);
	if (vi && kp_vmcoreinfo_size(vi, f->spec->type + strlen("struct "), ret))
		return NULL;
	if (btf(f)) {
		*ret = f->l->size;
		return NULL;
	}
	return no_layout(f, "its size");
}

// u8 facility after u16 text_len, then the flags:5 / level:3 bit-fields
// in the next byte, flags in the low bits (every kernel since 5.10): from
// BTF where it was needed for the layout anyway.
static void info_bytes(const struct from *f, struct kp_lx_prb_layout *l)
{
	l->facility = l->text_len + 2;
	l->flags_byte = l->text_len + 3;
	l->flags_shift = 0;
	l->level_shift = 5;
	const struct kp_struct_layout *il = f->l;
	if (!il)
		return;
	if (kp_layout_has(il, I_FACILITY))
		l->facility = kp_layout_off(il, I_FACILITY);
	const struct kp_member_layout *fl = &il->m[I_FLAGS], *lv = &il->m[I_LEVEL];
	if (fl->present && lv->present && fl->bit_size && lv->bit_size && fl->offset == lv->offset) {
		l->flags_byte = fl->offset;
		l->flags_shift = fl->bit_offset;
		l->level_shift = lv->bit_offset;
	}
}

struct kp_error *kp_lx_prb_layout(struct kp_kernel *k, struct kp_lx_prb_layout *ret)
{
	struct kp_lx_prb_layout l = {0};
	uint64_t begin, next, lpos;
	struct from rb, dr, tr, d, lp, in;
	from_init(&rb, k, &rb_spec);
	from_init(&dr, k, &dr_spec);
	from_init(&tr, k, &tr_spec);
	from_init(&d, k, &d_spec);
	from_init(&lp, k, &lp_spec);
	from_init(&in, k, &i_spec);
	struct kp_error *err;
	if (!(err = off(&rb, RB_DESC_RING, &l.desc_ring)) &&
	    !(err = off(&rb, RB_TEXT_DATA_RING, &l.text_data_ring)) &&
	    !(err = off(&dr, DR_COUNT_BITS, &l.count_bits)) &&
	    !(err = off(&dr, DR_DESCS, &l.descs)) &&
	    !(err = off(&dr, DR_INFOS, &l.infos)) &&
	    !(err = off(&dr, DR_HEAD_ID, &l.head_id)) &&
	    !(err = off(&dr, DR_TAIL_ID, &l.tail_id)) &&
	    !(err = off(&tr, TR_SIZE_BITS, &l.size_bits)) &&
	    !(err = off(&tr, TR_DATA, &l.data)) &&
	    !(err = size(&d, &l.desc_size)) &&
	    !(err = off(&d, D_STATE_VAR, &l.state_var)) &&
	    !(err = off(&d, D_TEXT_BLK_LPOS, &lpos)) &&
	    !(err = off(&lp, LP_BEGIN, &begin)) &&
	    !(err = off(&lp, LP_NEXT, &next)) &&
	    !(err = size(&in, &l.info_size)) &&
	    !(err = off(&in, I_SEQ, &l.seq)) &&
	    !(err = off(&in, I_TS_NSEC, &l.ts_nsec)) &&
	    !(err = off(&in, I_TEXT_LEN, &l.text_len)) &&
	    !(err = off(&in, I_CALLER_ID, &l.caller_id))) {
		l.text_begin = lpos + begin;
		l.text_next = lpos + next;
		info_bytes(&in, &l);
	}
	struct from *all[] = { &rb, &dr, &tr, &d, &lp, &in };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		kp_error_destroy(all[i]->why);
	if (err)
		return err;
	if (!kp_lx_prb_layout_ok(&l))
		return kp_error_create(KP_ERR_FORMAT, "printk ring buffer: implausible struct layout (desc %llu bytes, info %llu bytes)",
				       (unsigned long long)l.desc_size, (unsigned long long)l.info_size);
	*ret = l;
	return NULL;
}
