// SPDX-License-Identifier: MIT
// Buffers filled whole right after they are allocated (a BTF section read
// out of a dump, a name index): mapped with their pages already in place,
// because taking one page fault per 4 KiB is most of the time of a first
// answer (bench/README.md: ~12 us a fault on a paravirtualized guest,
// 1,250 of them for a 5 MB BTF).
#ifndef KP_UTIL_BULK_H
#define KP_UTIL_BULK_H

#include <stddef.h>

// size bytes, zeroed; NULL on out-of-memory. Free with kp_bulk_free.
void *kp_bulk_alloc(size_t size);
void kp_bulk_free(void *p, size_t size);

#endif
