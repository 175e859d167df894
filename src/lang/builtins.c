// SPDX-License-Identifier: MIT
// sizeof and per_cpu() in expressions.
//
// per_cpu(var, cpu) is the kernel's macro (include/linux/percpu-defs.h): a
// per-CPU variable's "address" is an offset into the per-CPU areas, and
// CPU cpu's copy is at that offset plus __per_cpu_offset[cpu]. The CPU
// must be a possible one (kp_kernel_check_cpu): below nr_cpu_ids and in
// cpu_possible_mask, as the offset of any other points at no area.
#include <inttypes.h>
#include <linux/btf.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "lang/arith.h"
#include "lang/builtins.h"
#include "types/types.h"
#include "util/error.h"

struct kp_error *kp_per_cpu_check_var(const struct kp_value *var)
{
	if (!var->lvalue || var->bit_size)
		return kp_error_create(KP_ERR_TYPE, "per_cpu() needs a variable");
	return NULL;
}

// per_cpu() of something that is not a per-CPU variable adds a CPU's offset
// to an ordinary address and reads garbage: the variable must be typed
// per-CPU by BTF (in .data..percpu) or lie between __per_cpu_start and
// __per_cpu_end.
static struct kp_error *check_percpu(struct kp_kernel *k, const struct kp_value *var)
{
	uint64_t start, end;
	bool known = kp_kernel_percpu_section(k, &start, &end);
	if (var->percpu || (known && var->address >= start && var->address < end))
		return NULL;
	if (known)
		return kp_error_create(KP_ERR_TYPE, "per_cpu(): %s%s0x%" PRIx64 " is not a "
				       "per-CPU variable (not in __per_cpu_start..__per_cpu_end, "
				       "0x%" PRIx64 "..0x%" PRIx64 ")",
				       var->symbol ? var->symbol : "", var->symbol ? " at " : "",
				       var->address, start, end);
	return kp_error_create(KP_ERR_TYPE, "per_cpu(): %s%s0x%" PRIx64 " is not a per-CPU "
			       "variable (BTF does not place it in .data..percpu)",
			       var->symbol ? var->symbol : "", var->symbol ? " at " : "",
			       var->address);
}

struct kp_error *kp_per_cpu(struct kp_eval_env *e, const struct kp_value *var,
			    struct kp_value *cpu, struct kp_value **ret)
{
	struct kp_num c;
	struct kp_symbol sym;
	uint64_t off;
	struct kp_error *err = kp_num_of(cpu, &c);
	if (err)
		return err;
	if ((err = check_percpu(e->k, var)))
		return err;
	if ((err = kp_kernel_check_cpu(e->k, c.x)))
		return kp_error_prefix(err, "per_cpu()");
	if ((err = kp_symbol_by_name(e->k, "__per_cpu_offset", &sym)))
		return kp_error_prefix(err, "per_cpu()");
	if ((err = kp_read(e->k, KP_VIRT, sym.address + c.x * 8, &off, 8)))
		return err;
	err = kp_value_lvalue(e->k, var->type, var->address + off, ret);
	if (!err && var->untyped) {
		(*ret)->untyped = true;
		(*ret)->symbol = var->symbol ? strdup(var->symbol) : NULL;
	}
	return err;
}

struct kp_error *kp_sizeof_type(struct kp_eval_env *e, uint32_t type, struct kp_value **ret)
{
	uint64_t size;
	struct kp_error *err = kp_btf_size_checked(kp_types_btf(e->types), type, &size);
	if (err)
		return err;
	if (!size && kp_btf_kind(kp_types_btf(e->types), type) != BTF_KIND_ARRAY) {
		char *name = kp_value_type_str(kp_types_btf(e->types), type);
		err = kp_error_create(KP_ERR_TYPE, "sizeof of incomplete type %s",
				      name ? name : "?");
		free(name);
		return err;
	}
	return kp_ulong_value(e, size, ret);
}

struct kp_error *kp_sizeof_value(struct kp_eval_env *e, const struct kp_value *v,
				 struct kp_value **ret)
{
	if (v->untyped)
		return kp_value_untyped_error(v);
	if (v->bit_size)
		return kp_error_create(KP_ERR_TYPE, "sizeof of a bitfield");
	return kp_sizeof_type(e, v->type, ret);
}
