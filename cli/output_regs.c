// SPDX-License-Identifier: MIT
// CPU registers as bt (exception frames) and panic (the panicking CPU) print
// them, through the output API (output.h).
#include <ctype.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>

#include "output.h"

void out_regs(struct out *o, const char *key, unsigned nregs, const uint64_t *regs,
	      const char *const *names)
{
	if (out_is_json(o)) {
		out_begin_object(o, key);
		for (unsigned i = 0; i < nregs && names[i]; i++)
			out_kv_hex(o, names[i], regs[i]);
		out_end_object(o);
		return;
	}
	unsigned col = 0;
	for (unsigned i = 0; i < nregs && names[i]; i++) {
		char name[16];
		size_t j = 0;
		for (; names[i][j] && j + 1 < sizeof(name); j++)
			name[j] = (char)toupper((unsigned char)names[i][j]);
		name[j] = '\0';
		out_text(o, "%s%8s: %016" PRIx64, col ? " " : "   ", name, regs[i]);
		if (++col == 3) {
			out_text(o, "\n");
			col = 0;
		}
	}
	if (col)
		out_text(o, "\n");
}
