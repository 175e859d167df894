// SPDX-License-Identifier: MIT
// Growing arrays (vec.h).
#include <stdint.h>
#include <stdlib.h>

#include "util/vec.h"

bool kp_vec_reserve(void **ptr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return false;
		n *= 2;
	}
	if (elem && n > SIZE_MAX / elem)
		return false;
	void *p = realloc(*ptr, n * elem);
	if (!p)
		return false;
	*ptr = p;
	*cap = n;
	return true;
}
