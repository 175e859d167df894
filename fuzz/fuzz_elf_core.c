// SPDX-License-Identifier: MIT
// ELF core headers, program headers and notes, then reads of every segment.
#include "fuzz_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_source(&kp_elf_core_ops, data, size);
}
