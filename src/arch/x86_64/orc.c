// SPDX-License-Identifier: MIT
// x86-64 stacks: the kernel's own ORC unwind tables (4.14+), read from
// memory, and the unwinding rules of arch/x86/kernel/unwind_orc.c.
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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/unwind.h"
#include "arch/x86_64/x86_64.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "util/error.h"

#define ORC_ENTRY_SIZE 6
#define ORC_HASH_SIZE 20
#define LOOKUP_BLOCK_SIZE 256	// LOOKUP_BLOCK_ORDER 8
#define MODULE_CACHE 8
// No kernel has this many entries (6.12: 409,174); a larger table is corrupt.
#define MAX_ORC_ENTRIES (16u << 20)

enum orc_type { T_UNDEFINED, T_END, T_CALL, T_REGS, T_REGS_PARTIAL };
enum orc_reg {
	R_UNDEFINED, R_PREV_SP, R_SP, R_BP, R_SP_INDIRECT, R_BP_INDIRECT,
	R_AX, R_DX, R_DI, R_R10, R_R13, R_BAD,
};

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

struct orc {
	int16_t sp_offset, bp_offset;
	enum orc_reg sp_reg, bp_reg;
	enum orc_type type;
	bool signal;
	uint64_t ip;		// where the entry starts (search()); 0 if made up
};

// One ORC table: vmlinux's or a module's.
struct table {
	uint64_t ip, entries;	// addresses of the two arrays
	uint32_t n;
};

// struct pt_regs members in kp_regs order (kp_x86_reg_names, PRSTATUS).
static const char *const pt_regs_members[] = {
	"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx",
	"dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss",
};
#define NPTREGS (sizeof(pt_regs_members) / sizeof(pt_regs_members[0]))
enum { PT_BP = 4, PT_R10 = 7, PT_AX = 10, PT_DX = 12, PT_DI = 14, PT_IP = 16, PT_CS = 17,
       PT_SP = 19, PT_R13 = 2 };

struct kp_unwinder {
	struct kp_unwind_env env;
	int version;
	struct table core;
	bool has_lookup;
	uint64_t stext, etext, lookup;
	uint32_t lookup_blocks;
	// Layouts from BTF.
	uint64_t thread_sp;		// task_struct.thread.sp
	uint64_t frame_bp, frame_ret, frame_size;	// struct inactive_task_frame
	uint64_t pt_off[NPTREGS], pt_size;
	uint64_t mod_ip, mod_orc, mod_num;	// struct module.arch.*
	bool has_mod_orc;
	uint64_t ret_from_fork[2];	// ret_from_fork_asm (6.6+), ret_from_fork
	struct {
		uint64_t module;
		struct table t;
	} mods[MODULE_CACHE];
	unsigned next_mod;
};

static struct kp_error *read_virt(struct kp_unwinder *u, uint64_t addr, void *buf, size_t n)
{
	return kp_memory_read(u->env.mem, KP_VIRT, addr, buf, n);
}

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
		if ((err = read_virt(u, start, h, sizeof(h))))
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
	    kp_ok(read_virt(u, blocks_sym, &blocks, 4)) && blocks > 1 &&
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
		if ((err = read_virt(u, at, &rel, 4)))
			return kp_error_prefix(err, "ORC table");
		if (at + (int64_t)rel <= ip) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	uint8_t raw[ORC_ENTRY_SIZE];
	if ((err = read_virt(u, t->entries + (uint64_t)ORC_ENTRY_SIZE * found, raw, sizeof(raw))))
		return kp_error_prefix(err, "ORC table");
	decode(u, raw, ret);
	int32_t rel;
	uint64_t at = t->ip + 4ull * found;
	if ((err = read_virt(u, at, &rel, 4)))
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
	if (kp_ok(read_virt(u, mod + u->mod_ip, &ipt, 8)) &&
	    kp_ok(read_virt(u, mod + u->mod_orc, &orct, 8)) &&
	    kp_ok(read_virt(u, mod + u->mod_num, &n, 4)) && n <= MAX_ORC_ENTRIES)
		t = (struct table){ ipt, orct, n };
	u->mods[u->next_mod].module = mod;
	u->mods[u->next_mod].t = t;
	u->next_mod = (u->next_mod + 1) % MODULE_CACHE;
	*ret = t;
	return t.n > 0;
}

// orc_find(): *found_ret false when no table covers ip.
static struct kp_error *find(struct kp_unwinder *u, uint64_t ip, struct orc *ret, bool *found_ret)
{
	*found_ret = true;
	if (u->has_lookup && ip >= u->stext && ip < u->etext) {
		uint64_t idx = (ip - u->stext) / LOOKUP_BLOCK_SIZE;
		uint32_t se[2];
		if (idx + 1 < u->lookup_blocks &&
		    kp_ok(read_virt(u, u->lookup + 4 * idx, se, sizeof(se))) && se[0] <= se[1] &&
		    se[1] < u->core.n)
			return search(u, &u->core, se[0], se[1] + 1, ip, ret);
		// A damaged lookup table: the whole table instead.
	}
	// Outside [_stext, _etext): vmlinux's init text (the whole table, as
	// the kernel searches it), or a module's own table.
	int32_t rel;
	struct kp_error *err = read_virt(u, u->core.ip, &rel, 4);
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

static struct kp_error *read_u64(struct kp_unwinder *u, uint64_t addr, uint64_t *ret)
{
	struct kp_error *err = read_virt(u, addr, ret, 8);
	return err ? kp_error_prefix(err, "stack") : NULL;
}

// A register of the frame: from the full pt_regs, or the last full ones
// before a partial frame (get_reg() of unwind_orc.c).
static bool get_reg(const struct kp_unwind_frame *f, unsigned i, uint64_t *ret)
{
	if (!f->have_regs || i >= f->regs.nregs)
		return false;
	*ret = f->regs.r[i];
	return true;
}

static struct kp_error *corrupt(uint64_t pc, const char *what)
{
	return kp_error_create(KP_ERR_FORMAT, "corrupt stack at pc 0x%" PRIx64 ": %s", pc, what);
}

static struct kp_error *read_pt_regs(struct kp_unwinder *u, uint64_t at, struct kp_regs *r)
{
	uint8_t buf[512];
	if (u->pt_size > sizeof(buf))
		return kp_error_create(KP_ERR_UNSUPPORTED, "struct pt_regs of %" PRIu64 " bytes", u->pt_size);
	struct kp_error *err = read_virt(u, at, buf, u->pt_size);
	if (err)
		return kp_error_prefix(err, "exception frame");
	memset(r, 0, sizeof(*r));
	r->nregs = NPTREGS;
	for (size_t i = 0; i < NPTREGS; i++)
		memcpy(&r->r[i], buf + u->pt_off[i], 8);
	r->pc = r->r[PT_IP];
	r->sp = r->r[PT_SP];
	r->fp = r->r[PT_BP];
	return NULL;
}

// A CPU's saved registers can hold a pc in a function objtool left without
// ORC: __crash_kexec() is STACK_FRAME_NON_STANDARD (its crash_setup_regs()
// takes the address of a label, _THIS_IP_), and it is where kdump saves the
// registers of the CPU that panicked. Its caller is then the first word
// above sp that is the return address of a direct call (e8 rel32) whose
// target lies in the same ORC-less stretch of text as pc ([undef->ip, pc]),
// and whose own ORC is defined. At most SCAN_WORDS words are read.
#define SCAN_WORDS 1024
static bool caller_of_orcless(struct kp_unwinder *u, const struct kp_unwind_frame *f,
			      const struct orc *undef, struct kp_unwind_frame *ret)
{
	if (!f->exact || !f->have_regs || !undef->ip)
		return false;
	for (uint64_t i = 0; i < SCAN_WORDS; i++) {
		uint64_t slot = f->sp + 8 * i, r;
		uint8_t call[5];
		if (!kp_ok(read_u64(u, slot, &r)) || r < 5 ||
		    !kp_ok(read_virt(u, r - 5, call, sizeof(call))) || call[0] != 0xe8)
			continue;
		int32_t rel = (int32_t)((uint32_t)call[1] | (uint32_t)call[2] << 8 |
					(uint32_t)call[3] << 16 | (uint32_t)call[4] << 24);
		uint64_t target = r + (int64_t)rel;
		struct orc o;
		bool found;
		if (target < undef->ip || target > f->pc || !kp_ok(find(u, r - 1, &o, &found)) ||
		    !found || o.type == T_UNDEFINED || o.type == T_END)
			continue;
		*ret = *f;
		ret->pc = r;
		ret->sp = slot + 8;
		ret->regs_at = 0;
		ret->have_regs = ret->regs_full = false;
		ret->exact = false;
		return true;
	}
	return false;
}

struct kp_error *kp_x86_unwind_step(struct kp_unwinder *u, struct kp_unwind_frame *f,
				    const char **end_ret)
{
	*end_ret = NULL;
	if (f->user) {
		*end_ret = KP_UNWIND_USER;
		return NULL;
	}
	struct orc o;
	bool found;
	// A return address is the instruction after a call, maybe past the
	// end of a noreturn function: look up the call itself.
	uint64_t at = f->exact ? f->pc : f->pc - 1;
	struct kp_error *err = find(u, at, &o, &found);
	if (err)
		return err;
	bool guess = f->guess;
	if (!found) {
		// Generated code (BPF, trampolines) has no ORC: assume a frame
		// pointer, as the kernel does (orc_fp_entry); not reliable.
		o = (struct orc){ 16, -16, R_BP, R_PREV_SP, T_CALL, false, 0 };
		guess = true;
	}
	if (o.type == T_END) {
		*end_ret = KP_UNWIND_END;
		return NULL;
	}
	if (o.type == T_UNDEFINED) {
		struct kp_unwind_frame n;
		if (!caller_of_orcless(u, f, &o, &n))
			return corrupt(f->pc, "no unwind information (ORC undefined)");
		*f = n;
		return NULL;
	}

	uint64_t sp, v;
	bool indirect = false;
	unsigned reg = 0;
	switch (o.sp_reg) {
	case R_SP:
		sp = f->sp + o.sp_offset;
		break;
	case R_BP:
		sp = f->fp + o.sp_offset;
		break;
	case R_SP_INDIRECT:
		// 5.12+ (87ccc826bf1c): the offset applies after the load;
		// older kernels emit no SP_INDIRECT (none in 5.10's tables).
		sp = f->sp;
		indirect = true;
		break;
	case R_BP_INDIRECT:
		sp = f->fp + o.sp_offset;
		indirect = true;
		break;
	case R_AX: reg = PT_AX; goto from_regs;
	case R_DX: reg = PT_DX; goto from_regs;
	case R_DI: reg = PT_DI; goto from_regs;
	case R_R10: reg = PT_R10; goto from_regs;
	case R_R13: reg = PT_R13;
	from_regs:
		if (!get_reg(f, reg, &sp))
			return corrupt(f->pc, "ORC needs a register that no exception frame saved");
		break;
	default:
		return corrupt(f->pc, "bad ORC stack register");
	}
	if (indirect) {
		if ((err = read_u64(u, sp, &v)))
			return err;
		sp = o.sp_reg == R_SP_INDIRECT ? v + o.sp_offset : v;
	}

	struct kp_unwind_frame n = *f;
	n.guess = guess;
	switch (o.type) {
	case T_CALL:
		if ((err = read_u64(u, sp - 8, &n.pc)))
			return err;
		n.sp = sp;
		n.regs_at = 0;
		n.have_regs = n.regs_full = false;
		n.exact = false;
		break;
	case T_REGS:
		if ((err = read_pt_regs(u, sp, &n.regs)))
			return err;
		n.pc = n.regs.pc;
		n.sp = n.regs.sp;
		n.regs_at = sp;
		n.have_regs = n.regs_full = true;
		n.exact = true;
		break;
	case T_REGS_PARTIAL: {
		// The hardware's iret frame (ip, cs, flags, sp, ss) at sp.
		uint64_t base = sp - u->pt_off[PT_IP];
		uint64_t ip, cs, rsp;
		if ((err = read_u64(u, base + u->pt_off[PT_IP], &ip)) ||
		    (err = read_u64(u, base + u->pt_off[PT_CS], &cs)) ||
		    (err = read_u64(u, base + u->pt_off[PT_SP], &rsp)))
			return err;
		if (!f->regs_full) {
			memset(&n.regs, 0, sizeof(n.regs));
			n.regs.nregs = NPTREGS;
			n.have_regs = false;
		}
		n.regs.r[PT_IP] = ip;
		n.regs.r[PT_CS] = cs;
		n.regs.r[PT_SP] = rsp;
		n.regs.pc = n.pc = ip;
		n.regs.sp = n.sp = rsp;
		n.regs_at = base;
		n.regs_full = false;
		n.exact = true;
		break;
	}
	default:
		return corrupt(f->pc, "bad ORC frame type");
	}
	if (o.type != T_CALL && (n.regs.r[PT_CS] & 3) == 3) {
		n.user = true;	// user_mode(regs): the entry from user space
		*f = n;
		return NULL;
	}
	// Whether the next lookup takes pc as it is: 6.3+ says so per entry,
	// before that every exception frame's pc was exact (set above).
	if (u->version >= 2)
		n.exact = o.signal;

	switch (o.bp_reg) {
	case R_UNDEFINED:
		if (get_reg(&n, PT_BP, &v))
			n.fp = v;
		break;
	case R_PREV_SP:
		if ((err = read_u64(u, sp + o.bp_offset, &n.fp)))
			return err;
		break;
	case R_BP:
		if ((err = read_u64(u, f->fp + o.bp_offset, &n.fp)))
			return err;
		break;
	default:
		return corrupt(f->pc, "bad ORC frame-pointer register");
	}
	*f = n;
	return NULL;
}

struct kp_error *kp_x86_unwind_sleeping(struct kp_unwinder *u, uint64_t task,
					struct kp_unwind_frame *ret)
{
	uint64_t sp, bp, pc;
	struct kp_error *err;
	if ((err = read_u64(u, task + u->thread_sp, &sp)) ||
	    (err = read_u64(u, sp + u->frame_bp, &bp)) || (err = read_u64(u, sp + u->frame_ret, &pc)))
		return kp_error_prefix(err, "task 0x%" PRIx64 ": saved context", task);
	memset(ret, 0, sizeof(*ret));
	ret->pc = pc;
	ret->sp = sp + u->frame_size;
	ret->fp = bp;
	// A task that has never run resumes at ret_from_fork: exactly there
	// (6.4+ unwind_orc.c sets state->signal for it).
	ret->exact = pc && (pc == u->ret_from_fork[0] || pc == u->ret_from_fork[1]);
	return NULL;
}
