// SPDX-License-Identifier: MIT
// The crash signature's text rules over hostile log lines: the kind from a
// message and a record, and the title (doc/signature.md); and the per-CPU
// sizes of a "percpu: Embedded" line (linux/mm/percpu.c), each record
// length. Input: a byte choosing the output size, then message NUL record.
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "linux/mm/mm.h"
#include "linux/panic/panic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	size_t out_size = 1 + data[0] % 255;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	const char *nul = memchr(s, '\0', size);
	const char *record = nul && nul + 1 < s + size ? nul + 1 : "";
	char *out = malloc(out_size);
	if (out) {
		kp_lx_signature_title(s, out, out_size);
		if (strlen(out) >= out_size)
			abort();
		(void)kp_lx_panic_kind(s, record, true);
		free(out);
	}
	struct kp_lx_percpu_line pl;
	for (size_t len = 0; record[len]; len++)
		if (kp_lx_percpu_line(record, len, 4096, &pl) &&
		    (pl.unit > (64u << 20) || pl.unit % 4096 || pl.static_size > pl.unit))
			abort();
	free(s);
	return 0;
}
