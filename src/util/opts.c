// SPDX-License-Identifier: MIT
// Size-tagged structs of the public API (opts.h).
#include <stdint.h>

#include "util/opts.h"
#include "util/error.h"

struct kp_error *kp_opts_copy(const void *user, void *ret, size_t known, const char *name)
{
	memset(ret, 0, known);
	if (!user)
		return NULL;
	size_t sz;
	memcpy(&sz, user, sizeof(sz));
	if (sz < sizeof(size_t))
		return kp_error_create(KP_ERR_INVALID,
				       "struct %s: sz is %zu (set it with KP_OPTS/KP_INIT)", name, sz);
	const uint8_t *p = user;
	for (size_t i = known; i < sz; i++)
		if (p[i])
			return kp_error_create(KP_ERR_UNSUPPORTED,
					       "struct %s: byte %zu is set, but this libkpeek (%s) knows only %zu bytes of it",
					       name, i, KPEEK_VERSION_STRING, known);
	memcpy(ret, user, sz < known ? sz : known);
	memcpy(ret, &known, sizeof(known));
	return NULL;
}

bool kp_out_copy(void *user, const void *src, size_t known)
{
	size_t sz;
	memcpy(&sz, user, sizeof(sz));
	if (sz < sizeof(size_t))
		return false;
	size_t n = sz < known ? sz : known;
	if (n > sizeof(size_t))
		memcpy((uint8_t *)user + sizeof(size_t), (const uint8_t *)src + sizeof(size_t),
		       n - sizeof(size_t));
	if (sz > known)
		memset((uint8_t *)user + known, 0, sz - known);
	return true;
}
