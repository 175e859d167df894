// SPDX-License-Identifier: MIT
// struct kp_error: one-line errors with a code and, for faults, an address.
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

struct kp_error kp_enomem = {
	.code = KP_ERR_NOMEM,
	.message = "cannot allocate memory",
};

struct kp_error kp_not_found = {
	.code = KP_ERR_NOT_FOUND,
	.message = "not found",
};

static bool is_singleton(const struct kp_error *err)
{
	return err == &kp_enomem || err == &kp_not_found;
}

static struct kp_error *verror(enum kp_error_code code, int errnum, bool has_address,
			       uint64_t address, const char *fmt, va_list ap)
{
	struct kp_error *err = calloc(1, sizeof(*err));
	if (!err)
		return &kp_enomem;
	if (vasprintf(&err->message, fmt, ap) < 0) {
		free(err);
		return &kp_enomem;
	}
	err->code = code;
	err->errnum = errnum;
	err->has_address = has_address;
	err->address = address;
	return err;
}

struct kp_error *kp_error_create(enum kp_error_code code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct kp_error *err = verror(code, 0, false, 0, fmt, ap);
	va_end(ap);
	return err;
}

struct kp_error *kp_error_fault(uint64_t address, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct kp_error *err = verror(KP_ERR_FAULT, 0, true, address, fmt, ap);
	va_end(ap);
	return err;
}

// err with ": strerror(errnum)" appended to its message.
static struct kp_error *with_strerror(struct kp_error *err, int errnum)
{
	char *msg;
	if (!is_singleton(err) && asprintf(&msg, "%s: %s", err->message, strerror(errnum)) >= 0) {
		free(err->message);
		err->message = msg;
	}
	return err;
}

struct kp_error *kp_error_os(int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	enum kp_error_code code = (errnum == EPERM || errnum == EACCES) ?
		KP_ERR_PERMISSION : (errnum == ENOENT ? KP_ERR_NOT_FOUND : KP_ERR_OS);
	struct kp_error *err = verror(code, errnum, false, 0, fmt, ap);
	va_end(ap);
	return with_strerror(err, errnum);
}

struct kp_error *kp_error_output(int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct kp_error *err = verror(KP_ERR_OUTPUT, errnum, false, 0, fmt, ap);
	va_end(ap);
	return with_strerror(err, errnum);
}

struct kp_error *kp_error_prefix(struct kp_error *err, const char *fmt, ...)
{
	if (!err)
		return NULL;
	char *prefix, *msg;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&prefix, fmt, ap);
	va_end(ap);
	if (n < 0)
		return err;
	if (asprintf(&msg, "%s: %s", prefix, err->message) < 0) {
		free(prefix);
		return err;
	}
	free(prefix);
	if (is_singleton(err)) {
		struct kp_error *copy = calloc(1, sizeof(*copy));
		if (!copy) {
			free(msg);
			return err;
		}
		*copy = *err;
		copy->message = msg;
		return copy;
	}
	free(err->message);
	err->message = msg;
	return err;
}

struct kp_error *kp_error_copy(const struct kp_error *e)
{
	struct kp_error *c = e->has_address ? kp_error_fault(e->address, "%s", e->message) :
		kp_error_create(e->code, "%s", e->message);
	if (c != &kp_enomem) {
		c->code = e->code;
		c->errnum = e->errnum;
		c->span = e->span;
	}
	return c;
}

void kp_error_destroy(struct kp_error *err)
{
	if (!err || is_singleton(err))
		return;
	free(err->message);
	free(err);
}

const char *kp_error_code_name(enum kp_error_code code)
{
	switch (code) {
	case KP_ERR_NOMEM: return "NOMEM";
	case KP_ERR_NOT_FOUND: return "NOT_FOUND";
	case KP_ERR_FAULT: return "FAULT";
	case KP_ERR_OS: return "OS";
	case KP_ERR_FORMAT: return "FORMAT";
	case KP_ERR_INVALID: return "INVALID";
	case KP_ERR_TYPE: return "TYPE";
	case KP_ERR_SYNTAX: return "SYNTAX";
	case KP_ERR_PERMISSION: return "PERMISSION";
	case KP_ERR_UNSUPPORTED: return "UNSUPPORTED";
	case KP_ERR_LOOP: return "LOOP";
	case KP_ERR_INTERRUPTED: return "INTERRUPTED";
	case KP_ERR_OUTPUT: return "OUTPUT";
	}
	return "UNKNOWN";
}

enum kp_error_code kp_error_code(const struct kp_error *err)
{
	return err->code;
}

const char *kp_error_message(const struct kp_error *err)
{
	return err->message;
}

int kp_error_errno(const struct kp_error *err)
{
	return err->errnum;
}

bool kp_error_address(const struct kp_error *err, uint64_t *ret)
{
	if (!err->has_address)
		return false;
	*ret = err->address;
	return true;
}
