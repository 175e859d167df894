// SPDX-License-Identifier: MIT
// kdump-compressed and flattened headers, bitmaps, descriptors and pages.
#include "fuzz_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_source(&kp_kdump_ops, data, size);
}
