// SPDX-License-Identifier: MIT
// Size-tagged structs of the public API (KP_OPTS/KP_INIT in kpeek.h): the
// caller's struct starts with size_t sz, the size it was compiled with. An
// older caller's struct is shorter (missing fields read as zero); a newer
// caller's is longer (its extra fields must be zero: they ask for something
// this library cannot do).
#ifndef KP_UTIL_OPTS_H
#define KP_UTIL_OPTS_H

#include <stddef.h>
#include <string.h>

#include "util/error.h"

// Copies the caller's options (user, may be NULL: all defaults) into *ret, a
// zeroed struct of this library's size known; fails with KP_ERR_INVALID
// naming the struct when sz is too small to be one or unknown fields are set.
struct kp_error *kp_opts_copy(const void *user, void *ret, size_t known, const char *name);

// Writes a result the library built at full size (known bytes at src) into
// the caller's struct, whose sz says how much of it the caller has. sz
// itself is kept. False if the caller's sz is too small to hold one.
bool kp_out_copy(void *user, const void *src, size_t known);

#endif
