// SPDX-License-Identifier: MIT
// check idt: the interrupt vector table (x86-64's idt_table; the CPU
// uses a read-only alias of it) holds the address of every exception
// and interrupt handler; all of them are entry code in kernel text
// (asm_exc_*, asm_sysvec_*, irq_entries_start's stubs). A rootkit that
// takes over an interrupt (the old int 0x80 / debug-exception hooks)
// rewrites a gate. The architecture decodes the entries
// (kp_arch.vector_handler); one without such a table has nothing to check.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "checks/check.h"
#include "core/kernel.h"
#include "util/error.h"

struct kp_error *kp_ck_idt(struct kp_ck *c)
{
	const struct kp_arch *a = c->arch;
	if (!a->vector_table) {
		kp_ck_not_applicable(c, "no interrupt vector table of pointers on this architecture (exception vectors are code)");
		return NULL;
	}
	struct kp_symbol t;
	if (!kp_symbol_find(c->k, a->vector_table, &t)) {
		kp_ck_cannot(c, "no %s symbol (kallsyms without variables?)", a->vector_table);
		return NULL;
	}
	size_t size = (size_t)a->vector_count * a->vector_size;
	uint8_t *table = malloc(size);
	if (!table)
		return &kp_enomem;
	struct kp_error *err = kp_read(c->k, KP_VIRT, t.address, table, size);
	if (err) {
		free(table);
		return kp_ck_cannot_err(c, kp_error_prefix(err, "%s at 0x%" PRIx64, a->vector_table,
							    t.address), "vectors");
	}
	// The boot handlers' stubs: from their symbol to the next one.
	struct kp_symbol boot = {0};
	if (a->vector_boot_handlers && kp_symbol_find(c->k, a->vector_boot_handlers, &boot) &&
	    !boot.size) {
		struct kp_symbol at;
		boot.size = kp_kernel_symbol_at(c->k, boot.address, &at) ? at.size : 0;
	}
	unsigned present = 0, at_boot = 0;
	for (unsigned v = 0; !err && v < a->vector_count; v++) {
		uint64_t h;
		if (!a->vector_handler(table + (size_t)v * a->vector_size, &h))
			continue;
		present++;
		char why[200] = "", where[160];
		if (boot.size && h >= boot.address && h - boot.address < boot.size) {
			at_boot++;	// a vector Linux does not use, as boot left it
		} else if (!kp_ck_in_text(c, h)) {
			kp_ck_where(c, h, where, sizeof(where));
			snprintf(why, sizeof(why), "handler in %s", where);
		}
		err = kp_ck_add(c, h, NULL, why[0] ? why : NULL, "vector %u (0x%02x)", v, v);
	}
	free(table);
	if (!err)
		err = kp_ck_summary(c, "%s: %u vectors, %u present, %u of them still at the boot handlers (%s)",
				    a->vector_table, a->vector_count, present, at_boot,
				    a->vector_boot_handlers ? a->vector_boot_handlers : "none");
	return err;
}
