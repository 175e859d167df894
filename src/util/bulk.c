// SPDX-License-Identifier: MIT
#include <sys/mman.h>

#include "util/bulk.h"

void *kp_bulk_alloc(size_t size)
{
	if (!size)
		size = 1;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void kp_bulk_free(void *p, size_t size)
{
	if (p)
		munmap(p, size ? size : 1);
}
