// SPDX-License-Identifier: MIT
// x86-64 stacks: the kernel's own ORC unwind tables (4.14+), read from
// memory, and the entry for an address (orc_find() of
// arch/x86/kernel/unwind_orc.c).
//
//   __start_orc_unwind_ip   s32 per entry: the code address the entry starts
//                           at, relative to the s32's own address, sorted
//   __start_orc_unwind      struct orc_entry per entry (6 bytes, packed)
//   orc_lookup              u32 per 256-byte block of [_stext, _etext): the
//                           first entry of the block (filled at boot)
//   module.arch.orc_unwind_ip / orc_unwind / num_orcs   the same per module
//
// struct orc_entry is { s16 sp_offset; s16 bp_offset; u16 bits } and the
// bits changed meaning three times (versions are ours, not the kernel's):
//   1  4.14-6.2  sp_reg:4 bp_reg:4 type:2 end:1; types CALL, REGS,
//                REGS_PARTIAL; sp_reg UNDEFINED with end = end of stack
//   2  6.3       sp_reg:4 bp_reg:4 type:2 signal:1 end:1 (ffb1b4a41016)
//   3  6.4       sp_reg:4 bp_reg:4 type:3 signal:1; types UNDEFINED,
//                END_OF_STACK, CALL, REGS, REGS_PARTIAL (fb799447ae29)
//   4  7.1       as 3, registers renumbered (AX added, SP 3, PREV_SP 8)
// 6.4 added .orc_header (__start_orc_header): a 20-byte hash of
// orc_types.h that names the version; older kernels are told by release.
// The unwinding rules that apply an entry are orc_unwind.c's.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/orc.h"
#include "arch/x86_64/x86_64.h"
#include "symbols/symtab.h"
#include "util/error.h"

#define ORC_ENTRY_SIZE 6
#define ORC_HASH_SIZE 20
#define LOOKUP_BLOCK_SIZE 256	// LOOKUP_BLOCK_ORDER 8
// No kernel has this many entries (6.12: 409,174); a larger table is corrupt.
#define MAX_ORC_ENTRIES (16u << 20)

// ORC register numbers of each version (arch/x86/include/asm/orc_types.h).
static const enum orc_reg regs_v1[16] = {
	R_UNDEFINED, R_PREV_SP, R_DX, R_DI, R_BP, R_SP, R_R10, R_R13, R_BP_INDIRECT,
	R_SP_INDIRECT, R_BAD, R_BAD, R_BAD, R_BAD, R_BAD, R_BAD,
};
static const enum orc_reg regs_v4[16] = {
	R_UNDEFINED, R_AX, R_DX, R_SP, R_BP, R_DI, R_R10, R_R13, R_PREV_SP,
	R_SP_INDIRECT, R_BP_INDIRECT, R_BAD, R_BAD, R_BAD, R_BAD, R_BAD,
};

// The .orc_header hashes (scripts/orc_hash.sh over orc_types.h).
static const struct {
	int version;
	uint8_t hash[ORC_HASH_SIZE];
} hashes[] = {
	{ 2, { 0xdb, 0x84, 0xae, 0xd4, 0x10, 0x3b, 0x31, 0xdd, 0x51, 0xe0,
	       0x17, 0xf8, 0xf7, 0x97, 0x83, 0xca, 0x98, 0x5c, 0x2c, 0x51 } },
	{ 3, { 0xfe, 0x5d, 0x32, 0xbf, 0x58, 0x1b, 0xd6, 0x3b, 0x2c, 0xa9,
	       0xa5, 0xc6, 0x5b, 0xa5, 0xa6, 0x25, 0xea, 0xb3, 0xfe, 0x24 } },
	// Debian's 7.2.13 (the renumbering of 7.1).
	{ 4, { 0x13, 0x7c, 0x36, 0xad, 0x76, 0x27, 0xc4, 0xdd, 0x55, 0x93,
	       0x21, 0x76, 0xbb, 0x0e, 0xcd, 0xbd, 0x50, 0x41, 0xfc, 0x82 } },
};

// struct pt_regs members in kp_regs order (kp_x86_reg_names, PRSTATUS).
static const char *const pt_regs_members[] = {
	"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx",
	"dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss",
};
_Static_assert(sizeof(pt_regs_members) / sizeof(pt_regs_members[0]) == NPTREGS,
	       "NPTREGS (orc.h) counts pt_regs_members");

static bool sym(struct kp_unwinder *u, const char *name, uint64_t *ret)
{
	struct kp_symbol s;
	if (!kp_symtab_find(u->env.st, name, &s))
		return false;
	*ret = s.address;
	return true;
}

static int version_from_release(const char *r)
{
	char *end;
	long major = strtol(r, &end, 10), minor = 0;
	if (end == r)
		return 0;
	if (*end == '.')
		minor = strtol(end + 1, NULL, 10);
	if (major < 6 || (major == 6 && minor < 3))
		return 1;
	if (major == 6 && minor == 3)
		return 2;
	if (major < 7 || (major == 7 && minor < 1))
		return 3;
	return 4;
}

static struct kp_error *find_version(struct kp_unwinder *u)
{
	uint64_t start, stop;
	if (sym(u, "__start_orc_header", &start) && sym(u, "__stop_orc_header", &stop)) {
		uint8_t h[ORC_HASH_SIZE];
		struct kp_error *err;
		if (stop - start != ORC_HASH_SIZE)
			return kp_error_create(KP_ERR_FORMAT, "ORC header at 0x%" PRIx64
					       " is %" PRIu64 " bytes, not %d", start, stop - start,
					       ORC_HASH_SIZE);
		if ((err = kp_orc_read(u, start, h, sizeof(h))))
			return kp_error_prefix(err, "ORC header");
		for (size_t i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++)
			if (!memcmp(h, hashes[i].hash, sizeof(h))) {
				u->version = hashes[i].version;
				return NULL;
			}
		return kp_error_create(KP_ERR_UNSUPPORTED, "unknown ORC format (header at 0x%" PRIx64
				       " hashes orc_types.h as %02x%02x%02x%02x...)", start, h[0],
				       h[1], h[2], h[3]);
	}
	u->version = version_from_release(u->env.release);
	if (!u->version)
		return kp_error_create(KP_ERR_UNSUPPORTED, "ORC format unknown: no ORC header and no kernel release");
	return NULL;
}

static bool member(struct kp_unwinder *u, const char *type, const char *m, uint64_t *off)
{
	return u->env.member(u->env.arg, type, m, off, NULL);
}

static struct kp_error *find_layouts(struct kp_unwinder *u)
{
	static const char ptr[] = "struct pt_regs";
	if (!member(u, "struct task_struct", "thread.sp", &u->thread_sp) ||
	    !member(u, "struct inactive_task_frame", "bp", &u->frame_bp) ||
	    !member(u, "struct inactive_task_frame", "ret_addr", &u->frame_ret))
		return kp_error_create(KP_ERR_NOT_FOUND, "BTF lacks task_struct.thread.sp or struct inactive_task_frame");
	// ret_addr is the last member (arch/x86/include/asm/switch_to.h).
	u->frame_size = u->frame_ret + 8;
	for (size_t i = 0; i < NPTREGS; i++)
		if (!member(u, ptr, pt_regs_members[i], &u->pt_off[i]))
			return kp_error_create(KP_ERR_NOT_FOUND, "BTF lacks struct pt_regs.%s",
					       pt_regs_members[i]);
	u->pt_size = u->pt_off[PT_SP + 1] + 8;	// ss is the last of the frame
	u->has_mod_orc = member(u, "struct module", "arch.orc_unwind_ip", &u->mod_ip) &&
			 member(u, "struct module", "arch.orc_unwind", &u->mod_orc) &&
			 member(u, "struct module", "arch.num_orcs", &u->mod_num);
	return NULL;
}

struct kp_error *kp_x86_unwinder_create(const struct kp_arch_ctx *ctx, const struct kp_unwind_env *env,
				       struct kp_unwinder **ret)
{
	(void)ctx;	// ORC needs nothing of the page-table layout
	struct kp_unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return &kp_enomem;
	u->env = *env;
	uint64_t start, stop, orc_start, orc_stop;
	struct kp_error *err = NULL;
	if (!sym(u, "__start_orc_unwind_ip", &start) || !sym(u, "__stop_orc_unwind_ip", &stop) ||
	    !sym(u, "__start_orc_unwind", &orc_start) || !sym(u, "__stop_orc_unwind", &orc_stop)) {
		err = kp_error_create(KP_ERR_NOT_FOUND, "no ORC tables (__start_orc_unwind_ip and __start_orc_unwind not in the symbols; CONFIG_UNWINDER_ORC=n?)");
		goto fail;
	}
	uint64_t n = (stop - start) / 4;
	if (stop < start || (stop - start) % 4 || orc_stop - orc_start != n * ORC_ENTRY_SIZE ||
	    n > MAX_ORC_ENTRIES || !n) {
		err = kp_error_create(KP_ERR_FORMAT, "ORC tables inconsistent: %" PRIu64
				      " bytes of addresses at 0x%" PRIx64 ", %" PRIu64
				      " bytes of entries at 0x%" PRIx64, stop - start, start,
				      orc_stop - orc_start, orc_start);
		goto fail;
	}
	u->core = (struct table){ start, orc_start, (uint32_t)n };
	uint64_t lookup_end, blocks_sym;
	uint32_t blocks;
	// orc_lookup[]: lookup_num_blocks u32s, set by unwind_init() at boot.
	if (sym(u, "_stext", &u->stext) && sym(u, "_etext", &u->etext) &&
	    sym(u, "orc_lookup", &u->lookup) && sym(u, "orc_lookup_end", &lookup_end) &&
	    sym(u, "lookup_num_blocks", &blocks_sym) &&
	    kp_ok(kp_orc_read(u, blocks_sym, &blocks, 4)) && blocks > 1 &&
	    (uint64_t)blocks * 4 <= lookup_end - u->lookup && u->etext > u->stext) {
		u->has_lookup = true;
		u->lookup_blocks = blocks;
	}
	if ((err = find_version(u)) || (err = find_layouts(u)))
		goto fail;
	sym(u, "ret_from_fork_asm", &u->ret_from_fork[0]);
	sym(u, "ret_from_fork", &u->ret_from_fork[1]);
	*ret = u;
	return NULL;
fail:
	free(u);
	return err;
}

void kp_x86_unwinder_destroy(struct kp_unwinder *u)
{
	free(u);
}

static void decode(const struct kp_unwinder *u, const uint8_t raw[ORC_ENTRY_SIZE], struct orc *o)
{
	uint16_t f = (uint16_t)(raw[4] | raw[5] << 8);
	o->sp_offset = (int16_t)(raw[0] | raw[1] << 8);
	o->bp_offset = (int16_t)(raw[2] | raw[3] << 8);
	const enum orc_reg *regs = u->version >= 4 ? regs_v4 : regs_v1;
	o->sp_reg = regs[f & 15];
	o->bp_reg = regs[f >> 4 & 15];
	if (u->version >= 3) {
		unsigned t = f >> 8 & 7;
		o->type = t <= T_REGS_PARTIAL ? (enum orc_type)t : T_UNDEFINED;
		o->signal = f >> 11 & 1;
		return;
	}
	unsigned t = f >> 8 & 3;
	bool end = u->version == 2 ? f >> 11 & 1 : f >> 10 & 1;
	o->type = t == 0 ? T_CALL : t == 1 ? T_REGS : t == 2 ? T_REGS_PARTIAL : T_UNDEFINED;
	o->signal = u->version == 2 ? f >> 10 & 1 : t != 0;
	// Before 6.4 an undefined sp_reg was the end of the stack or a hole.
	if (o->sp_reg == R_UNDEFINED)
		o->type = end ? T_END : T_UNDEFINED;
}

// The last entry of t[lo, hi) whose address is <= ip (__orc_find()).
static struct kp_error *search(struct kp_unwinder *u, const struct table *t, uint32_t lo,
			       uint32_t hi, uint64_t ip, struct orc *ret)
{
	uint32_t found = lo;
	struct kp_error *err;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int32_t rel;
		uint64_t at = t->ip + 4ull * mid;
		if ((err = kp_orc_read(u, at, &rel, 4)))
			return kp_error_prefix(err, "ORC table");
		if (at + (int64_t)rel <= ip) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	uint8_t raw[ORC_ENTRY_SIZE];
	if ((err = kp_orc_read(u, t->entries + (uint64_t)ORC_ENTRY_SIZE * found, raw, sizeof(raw))))
		return kp_error_prefix(err, "ORC table");
	decode(u, raw, ret);
	int32_t rel;
	uint64_t at = t->ip + 4ull * found;
	if ((err = kp_orc_read(u, at, &rel, 4)))
		return kp_error_prefix(err, "ORC table");
	ret->ip = at + (int64_t)rel;
	return NULL;
}

static bool module_table(struct kp_unwinder *u, uint64_t ip, struct table *ret)
{
	uint64_t mod;
	if (!u->has_mod_orc || !u->env.module_at(u->env.arg, ip, &mod))
		return false;
	for (unsigned i = 0; i < MODULE_CACHE; i++)
		if (u->mods[i].module == mod) {
			*ret = u->mods[i].t;
			return ret->n > 0;
		}
	uint64_t ipt, orct;
	uint32_t n;
	struct table t = { 0, 0, 0 };
	if (kp_ok(kp_orc_read(u, mod + u->mod_ip, &ipt, 8)) &&
	    kp_ok(kp_orc_read(u, mod + u->mod_orc, &orct, 8)) &&
	    kp_ok(kp_orc_read(u, mod + u->mod_num, &n, 4)) && n <= MAX_ORC_ENTRIES)
		t = (struct table){ ipt, orct, n };
	u->mods[u->next_mod].module = mod;
	u->mods[u->next_mod].t = t;
	u->next_mod = (u->next_mod + 1) % MODULE_CACHE;
	*ret = t;
	return t.n > 0;
}

struct kp_error *kp_orc_find(struct kp_unwinder *u, uint64_t ip, struct orc *ret,
			     bool *found_ret)
{
	*found_ret = true;
	if (u->has_lookup && ip >= u->stext && ip < u->etext) {
		uint64_t idx = (ip - u->stext) / LOOKUP_BLOCK_SIZE;
		uint32_t se[2];
		if (idx + 1 < u->lookup_blocks &&
		    kp_ok(kp_orc_read(u, u->lookup + 4 * idx, se, sizeof(se))) && se[0] <= se[1] &&
		    se[1] < u->core.n)
			return search(u, &u->core, se[0], se[1] + 1, ip, ret);
		// A damaged lookup table: the whole table instead.
	}
	// Outside [_stext, _etext): vmlinux's init text (the whole table, as
	// the kernel searches it), or a module's own table.
	int32_t rel;
	struct kp_error *err = kp_orc_read(u, u->core.ip, &rel, 4);
	if (err)
		return kp_error_prefix(err, "ORC table");
	uint64_t first = u->core.ip + (int64_t)rel, mod;
	bool in_module = u->env.module_at(u->env.arg, ip, &mod);
	if (!in_module && ip >= first)
		return search(u, &u->core, 0, u->core.n, ip, ret);
	struct table t;
	if (in_module && module_table(u, ip, &t))
		return search(u, &t, 0, t.n, ip, ret);
	*found_ret = false;	// generated code, or a module without ORC
	return NULL;
}
