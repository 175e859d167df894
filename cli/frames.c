// SPDX-License-Identifier: MIT
// A stack frame as bt prints it (text and JSON), shared by bt and report.
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "output.h"

static bool ok(struct kp_error *err)
{
	kp_error_destroy(err);
	return !err;
}

static void frame_symbol(struct kp_kernel *k, const struct kp_frame *f, struct kp_symbol *sym,
			 uint64_t *off, bool *found)
{
	// A return address may be one past the end of a noreturn call's
	// function: name the call (the kernel's %pB does the same).
	uint64_t at = f->flags & KP_FRAME_EXACT ? f->pc : f->pc - 1;
	*found = ok(kp_symbol_by_address(k, at, sym));
	*off = *found ? f->pc - sym->address : 0;
}

// "name+0xoff/0xsize [module]" of frame f (the kernel's %pB), its pc if no
// symbol has it.
void cli_frame_name(struct kp_kernel *k, const struct kp_frame *f, char *buf, size_t size)
{
	struct kp_symbol sym;
	uint64_t off;
	bool found;
	frame_symbol(k, f, &sym, &off, &found);
	if (!found)
		snprintf(buf, size, "0x%" PRIx64, f->pc);
	else if (sym.size)
		snprintf(buf, size, "%s+0x%" PRIx64 "/0x%" PRIx64 "%s%s%s", sym.name, off,
			 sym.size, sym.module ? " [" : "", sym.module ? sym.module : "",
			 sym.module ? "]" : "");
	else
		snprintf(buf, size, "%s+0x%" PRIx64 "%s%s%s", sym.name, off,
			 sym.module ? " [" : "", sym.module ? sym.module : "", sym.module ? "]" : "");
}

void cli_frame_json(struct kp_kernel *k, struct out *o, const struct kp_frame *f)
{
	struct kp_symbol sym;
	uint64_t off;
	bool found;
	frame_symbol(k, f, &sym, &off, &found);
	out_begin_object(o, NULL);
	out_kv_hex(o, "pc", f->pc);
	out_kv_hex(o, "sp", f->sp);
	bool user = f->flags & KP_FRAME_USER;
	bool named = found && !user;
	out_kv_str(o, "symbol", named ? sym.name : NULL);
	// Unknown: null (a symbol table without sizes gives 0).
	out_kv_int_known(o, "offset", named, (int64_t)off);
	out_kv_int_known(o, "size", named && sym.size, (int64_t)sym.size);
	out_kv_str(o, "module", named ? sym.module : NULL);
	out_kv_bool(o, "exact", f->flags & KP_FRAME_EXACT);
	out_kv_bool(o, "reliable", !(f->flags & KP_FRAME_UNRELIABLE));
	out_kv_bool(o, "user", user);
	if (f->nregs)
		out_regs(o, "regs", f->nregs, f->regs, f->reg_names);
	out_end_object(o);
}
