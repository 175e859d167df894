// SPDX-License-Identifier: MIT
// The generator's side of synthsys.c and synthsys_net.c: what they share
// while writing the system into RAM.
#ifndef KPT_SYNTHSYS_WORLD_H
#define KPT_SYNTHSYS_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "synthsys.h"

#define PA_INIT_TASK (SK_INIT_TASK - SK_TEXT)

struct sks_world {
	uint8_t *m;
	const struct sk_opts *o;
	uint64_t names;		// the next free byte of SKS_NAMES
};

// A NUL-terminated copy of s in the names area: its (direct map) address.
uint64_t sks_name(struct sks_world *w, const char *s);
// The list_head at head (physical; its address an image one if
// head_is_img) holding the list_heads at nodes (physical), in order.
void sks_list(struct sks_world *w, uint64_t head, const uint64_t *nodes, size_t n, bool head_is_img);
// Network namespaces, interfaces and sockets (synthsys_net.c).
void sks_write_net(struct sks_world *w);

#endif
