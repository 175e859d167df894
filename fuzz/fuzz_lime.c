// SPDX-License-Identifier: MIT
// LiME range headers and AVML's snappy-framed chunks, then reads of every
// range.
#include "fuzz_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_source(&kp_lime_ops, data, size);
}
