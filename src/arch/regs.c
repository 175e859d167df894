// SPDX-License-Identifier: MIT
// CPU registers from NT_PRSTATUS notes, shared by the architectures (arch.h).
#include <string.h>

#include "arch/arch.h"
#include "util/le.h"

#define PRSTATUS_REG_OFFSET 112

bool kp_prstatus_regs(const uint8_t *desc, size_t len, unsigned nregs, unsigned pc,
		      unsigned sp, unsigned fp, struct kp_regs *ret)
{
	if (nregs > KP_MAX_REGS || len < PRSTATUS_REG_OFFSET + nregs * 8)
		return false;
	memset(ret, 0, sizeof(*ret));
	ret->nregs = nregs;
	for (unsigned i = 0; i < nregs; i++)
		ret->r[i] = kp_le64(desc + PRSTATUS_REG_OFFSET + 8 * i);
	ret->pc = ret->r[pc];
	ret->sp = ret->r[sp];
	ret->fp = ret->r[fp];
	return true;
}

void kp_flags_append(char *buf, size_t size, size_t *len, const char *word)
{
	size_t n = strlen(word), sep = *len ? 1 : 0;
	if (*len + sep + n + 1 > size)
		return;
	if (sep)
		buf[(*len)++] = ' ';
	memcpy(buf + *len, word, n + 1);
	*len += n;
}
