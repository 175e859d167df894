// The cache behind kp_types_layout(): (type name, member) -> (offset, size),
// direct-mapped. Kernel helpers ask the same few dozen layouts again and
// again (every task, every module); a hit is a hash and a compare.
#ifndef KP_TYPES_LAYOUT_H
#define KP_TYPES_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct kp_types;

#define KP_LAYOUT_CACHE 64

struct kp_layout_cache {
	struct {
		char *key;		// "TYPE\0MEMBER" (member "" for the type's size)
		size_t key_len;
		uint64_t offset, size;
	} slot[KP_LAYOUT_CACHE];
};

void kp_layout_cache_clear(struct kp_layout_cache *cache);
// The cache of a kernel's types (types.c).
struct kp_layout_cache *kp_types_layout_cache(struct kp_types *types);

#endif
