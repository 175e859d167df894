// SPDX-License-Identifier: MIT
// check bpf: every loaded BPF program (kernel/bpf/syscall.c: prog_idr, an
// IDR of struct bpf_prog *) with its id, type and name, as bpftool prog
// lists them. BPF rootkits (ebpfkit, TripleCross, boopkit) are tracing
// programs that call the helpers which change what user space sees:
// bpf_probe_write_user, bpf_override_return, bpf_send_signal(_thread).
// The verifier rewrites a helper call's imm to the helper's address minus
// __bpf_call_base (do_misc_fixups()), so the calls in prog->insnsi name
// their helpers by symbol; such a program is a finding, the others are
// listed in the summary.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/kernel.h"
#include "core/layout.h"
#include "linux/lib/xarray.h"
#include "util/error.h"
#include "util/le.h"

#define MAX_INSNS (1u << 20)	// BPF_COMPLEXITY_LIMIT_INSNS
#define MAX_LISTED 64		// programs named in the summary
#define BPF_CALL_INSN 0x85	// BPF_JMP | BPF_CALL

static const char *const risky[] = {
	"bpf_probe_write_user", "bpf_override_return", "bpf_send_signal", "bpf_send_signal_thread",
};

struct state {
	struct kp_ck *c;
	uint64_t type, len, aux, insnsi;	// struct bpf_prog
	uint64_t aux_id, aux_name, aux_attach;	// struct bpf_prog_aux
	bool has_attach;
	uint64_t call_base;
	unsigned count, flagged;
};

static void type_name(struct kp_kernel *k, uint32_t type, char *buf, size_t size)
{
	const char *name = kp_kernel_enum_name(k, "bpf_prog_type", type);
	snprintf(buf, size, "type %u", type);
	if (name && !strncmp(name, "BPF_PROG_TYPE_", strlen("BPF_PROG_TYPE_"))) {
		snprintf(buf, size, "%s", name + strlen("BPF_PROG_TYPE_"));
		for (char *q = buf; *q; q++)
			*q = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a' : *q);
	}
}

enum { P_TYPE, P_LEN, P_AUX, P_INSNSI, P_N };
static const struct kp_member_spec prog_members[P_N] = {
	[P_TYPE] = { .name = "type" }, [P_LEN] = { .name = "len" }, [P_AUX] = { .name = "aux" }, [P_INSNSI] = { .name = "insnsi" },
};
static const struct kp_struct_spec prog_spec = KP_STRUCT_SPEC("struct bpf_prog", prog_members);
enum { A_ID, A_NAME, A_ATTACH, A_N };
static const struct kp_member_spec aux_members[A_N] = {
	[A_ID] = { .name = "id" }, [A_NAME] = { .name = "name" },
	[A_ATTACH] = { .name = "attach_func_name", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec aux_spec = KP_STRUCT_SPEC("struct bpf_prog_aux", aux_members);
static const struct kp_member_spec idr_members[] = { { .name = "idr_rt" } };
static const struct kp_struct_spec idr_spec = KP_STRUCT_SPEC("struct idr", idr_members);

static struct kp_error *on_prog(uint64_t index, uint64_t prog, void *arg)
{
	struct state *s = arg;
	struct kp_kernel *k = s->c->k;
	uint32_t type, len, id = (uint32_t)index;
	uint64_t aux, attach = 0;
	char name[17] = "";
	struct kp_error *err;
	if ((err = kp_read_u32(k, prog + s->type, &type)) ||
	    (err = kp_read_u32(k, prog + s->len, &len)) ||
	    (err = kp_read_u64(k, prog + s->aux, &aux)))
		return kp_error_prefix(err, "struct bpf_prog at 0x%" PRIx64, prog);
	if (aux && ((err = kp_read_u32(k, aux + s->aux_id, &id)) ||
		    (err = kp_read(k, KP_VIRT, aux + s->aux_name, name, 16)) ||
		    (s->has_attach && (err = kp_read_u64(k, aux + s->aux_attach, &attach)))))
		return kp_error_prefix(err, "struct bpf_prog_aux at 0x%" PRIx64, aux);
	for (int i = 0; i < 16; i++)
		if (name[i] && ((unsigned char)name[i] < 0x20 || (unsigned char)name[i] > 0x7e))
			name[i] = '?';
	if (len > MAX_INSNS)
		return kp_error_create(KP_ERR_FORMAT, "struct bpf_prog at 0x%" PRIx64 ": %u instructions (corrupt?)", prog, len);
	s->count++;
	char tname[48], at[160] = "";
	type_name(k, type, tname, sizeof(tname));
	if (attach) {
		char fn[128];
		size_t got = kp_kernel_read_partial(k, attach, fn, sizeof(fn) - 1, true);
		fn[got] = '\0';
		if (got)
			snprintf(at, sizeof(at), " attached to %s", fn);
	}
	// Helpers it calls.
	char why[256] = "";
	uint64_t helper = 0;
	uint8_t *insns = len ? malloc((size_t)len * 8) : NULL;
	if (len && !insns)
		return &kp_enomem;
	if (insns && kp_ok(kp_read(k, KP_VIRT, prog + s->insnsi, insns, (size_t)len * 8)) && s->call_base) {
		for (uint32_t i = 0; i < len && !why[0]; i++) {
			const uint8_t *in = insns + (size_t)i * 8;
			if (in[0] != BPF_CALL_INSN || (in[1] >> 4) != 0)
				continue;	// not a helper call (src_reg 1: bpf-to-bpf, 2: kfunc)
			uint64_t fn = s->call_base + (uint64_t)(int64_t)(int32_t)kp_le32(in + 4);
			struct kp_symbol sym;
			if (!kp_ck_symbol(s->c, fn, &sym) || sym.address != fn)
				continue;
			for (size_t r = 0; r < sizeof(risky) / sizeof(risky[0]); r++)
				if (!strcmp(sym.name, risky[r])) {
					snprintf(why, sizeof(why), "%s program calls %s", tname, risky[r]);
					helper = fn;
				}
		}
	}
	free(insns);
	if (why[0])
		s->flagged++;
	if ((err = kp_ck_add(s->c, helper ? helper : prog, NULL, why[0] ? why : NULL,
			     "bpf prog %u '%s' (struct bpf_prog 0x%" PRIx64 ")", id, name, prog)))
		return err;
	if (s->count <= MAX_LISTED)
		return kp_ck_summary(s->c, "prog %u: %s '%s'%s", id, tname, name, at);
	return NULL;
}

struct kp_error *kp_ck_bpf(struct kp_ck *c)
{
	struct kp_kernel *k = c->k;
	struct state s = { .c = c };
	struct kp_lx_xa_layout xa;
	struct kp_symbol idr, base;
	uint64_t rt;
	struct kp_error *err;
	if (!kp_symbol_find(k, "prog_idr", &idr)) {
		kp_ck_cannot(c, "no prog_idr symbol (no CONFIG_BPF_SYSCALL, or kallsyms without variables)");
		return NULL;
	}
	static const struct kp_struct_spec *const specs[] = { &prog_spec, &aux_spec, &idr_spec };
	const struct kp_struct_layout *l[3];
	if ((err = kp_kernel_layouts(k, specs, 3, l)) || (err = kp_lx_xa_layout(k, &xa)))
		return kp_ck_cannot_err(c, err, "bpf");
	s.type = kp_layout_off(l[0], P_TYPE);
	s.len = kp_layout_off(l[0], P_LEN);
	s.aux = kp_layout_off(l[0], P_AUX);
	s.insnsi = kp_layout_off(l[0], P_INSNSI);
	s.aux_id = kp_layout_off(l[1], A_ID);
	s.aux_name = kp_layout_off(l[1], A_NAME);
	s.has_attach = kp_layout_has(l[1], A_ATTACH);
	s.aux_attach = kp_layout_off(l[1], A_ATTACH);
	rt = kp_layout_off(l[2], 0);
	s.call_base = kp_symbol_find(k, "__bpf_call_base", &base) ? base.address : 0;
	size_t first_summary = kp_check_summary_count(c->out);
	if ((err = kp_lx_xa_walk(k, &xa, idr.address + rt, on_prog, &s)))
		return kp_ck_cannot_err(c, err, "prog_idr");
	(void)first_summary;
	if (s.count > MAX_LISTED)
		err = kp_ck_summary(c, "(%u more programs not listed)", s.count - MAX_LISTED);
	if (!err)
		err = kp_ck_summary(c, "%u BPF programs loaded, %u calling helpers that write user memory, override returns or send signals%s",
				    s.count, s.flagged, s.call_base ? "" : " (helpers not named: no __bpf_call_base symbol)");
	return err;
}
