// SPDX-License-Identifier: MIT
// Creating errors inside the library. A struct kp_error is one line of text
// naming what was wrong and where, a code, and for faults the first failing
// address; callers see it through the getters of kpeek.h.
#ifndef KP_UTIL_ERROR_H
#define KP_UTIL_ERROR_H

#include <kpeek/kpeek.h>

struct kp_error {
	enum kp_error_code code;
	int errnum;		// errno for KP_ERR_OS / system-call permission errors, else 0
	bool has_address;
	uint64_t address;	// first failing address for KP_ERR_FAULT
	uint64_t span;		// a fault of a page-table walk: the bytes from
				// address it covers too (the span of the entry
				// that is absent or whose table cannot be read;
				// 0: unknown), for scans to step over at once
	char *message;		// one line, no trailing newline
};

// Static singletons: never freed (kp_error_destroy() ignores them).
// kp_not_found ("not found") is for "absent" results that the caller turns
// into its own message or treats as a value.
extern struct kp_error kp_enomem;
extern struct kp_error kp_not_found;

struct kp_error *kp_error_create(enum kp_error_code code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
// KP_ERR_FAULT with the address recorded.
struct kp_error *kp_error_fault(uint64_t address, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
// KP_ERR_OS; the message gets ": strerror(errnum)" appended. Maps EPERM/EACCES
// to KP_ERR_PERMISSION and ENOENT to KP_ERR_NOT_FOUND (errnum kept).
struct kp_error *kp_error_os(int errnum, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
// KP_ERR_OUTPUT (writing the caller's output failed), with ": strerror(errnum)".
struct kp_error *kp_error_output(int errnum, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
// Returns err with "PREFIX: " prepended to its message (consumes err; copies a
// singleton). Never fails: on out-of-memory the original error is returned.
struct kp_error *kp_error_prefix(struct kp_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
// A new error with the same code, errno, address and message.
struct kp_error *kp_error_copy(const struct kp_error *err);
// True (and err destroyed) when err is NULL; false when it is an error,
// which is destroyed too: for probes whose failure only means "absent".
static inline bool kp_ok(struct kp_error *err)
{
	if (!err)
		return true;
	kp_error_destroy(err);
	return false;
}
// For a search that tries candidates in turn and reports the first one's
// error if none fits: keeps err in *first if that is empty, else destroys it.
static inline void kp_error_keep_first(struct kp_error **first, struct kp_error *err)
{
	if (*first)
		kp_error_destroy(err);
	else
		*first = err;
}

#endif
