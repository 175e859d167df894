// SPDX-License-Identifier: MIT
// /proc/PID/cmdline and /proc/PID/environ from a dump: the bytes of the
// process's argument and environment areas, read from its user memory as
// fs/proc/base.c does (get_mm_cmdline(), environ_read(); 4.18+):
//   - cmdline is [arg_start, arg_end), unless the last byte of that area is
//     not a NUL: the process rewrote its arguments (setproctitle(3)) and
//     may have run over into the environment area, which then counts when
//     env_start == arg_end; the result is then what get_mm_proctitle()
//     gives: from arg_start up to and including the first NUL, at most a
//     page;
//   - environ is [env_start, env_end).
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/mm/mm.h"
#include "util/error.h"

struct area {
	uint64_t arg_start, arg_end, env_start, env_end;
};

static struct kp_error *area(struct kp_kernel *k, uint64_t task, struct area *ret)
{
	const struct kp_struct_layout *l;
	uint64_t mm;
	uint8_t buf[2048];
	struct kp_error *err;
	if ((err = kp_lx_task_mm(k, task, &mm)) || (err = kp_kernel_layout(k, &kp_lx_mm_spec, &l)))
		return err;
	if (kp_layout_span(l) > sizeof(buf))
		return kp_error_create(KP_ERR_UNSUPPORTED, "mm_struct span of %" PRIu64 " bytes", kp_layout_span(l));
	if ((err = kp_read(k, KP_VIRT, mm + l->lo, buf, kp_layout_span(l))))
		return kp_error_prefix(err, "reading mm_struct at 0x%" PRIx64, mm);
	ret->arg_start = kp_layout_u64(l, buf, KP_LX_MM_ARG_START);
	ret->arg_end = kp_layout_u64(l, buf, KP_LX_MM_ARG_END);
	ret->env_start = kp_layout_u64(l, buf, KP_LX_MM_ENV_START);
	ret->env_end = kp_layout_u64(l, buf, KP_LX_MM_ENV_END);
	return NULL;
}

// size bytes of user memory at start into a new buffer (+1 for a NUL).
static struct kp_error *copy(struct kp_kernel *k, uint64_t task, uint64_t start, uint64_t size,
			     const char *what, char **ret)
{
	if (size > KP_LX_MAX_ARGS)
		return kp_error_create(KP_ERR_FORMAT, "the %s area at 0x%" PRIx64 " claims %" PRIu64
				       " bytes (more than %u: corrupt?)", what, start, size, KP_LX_MAX_ARGS);
	char *buf = malloc(size + 1);
	if (!buf)
		return &kp_enomem;
	struct kp_user *u;
	struct kp_error *err = kp_user_create(k, task, &u);
	if (!err) {
		err = kp_user_read(u, start, buf, size);
		kp_user_destroy(u);
	}
	if (err) {
		free(buf);
		return kp_error_prefix(err, "its %s", what);
	}
	buf[size] = '\0';
	*ret = buf;
	return NULL;
}

// A task that exited (its mm released, exit_mm()) has empty arguments and
// environment, as its /proc/PID/cmdline and environ read (get_task_mm()
// NULL: 0 bytes): a live ps that lists a process as it exits, or a zombie
// in a dump, is no error. A kernel thread stays one (nothing to read).
static struct kp_error *exited_area(struct kp_kernel *k, uint64_t task, struct area *ret)
{
	struct kp_error *err = area(k, task, ret);
	if (err && err->code == KP_ERR_NOT_FOUND) {
		kp_error_destroy(err);
		*ret = (struct area){ 0, 0, 0, 0 };
		return NULL;
	}
	return err;
}

struct kp_error *kp_task_cmdline(struct kp_kernel *k, uint64_t task, char **ret, size_t *len_ret)
{
	struct area a;
	char *buf;
	struct kp_error *err = exited_area(k, task, &a);
	if (err)
		return err;
	if (a.arg_start >= a.arg_end) {
		if (!(buf = calloc(1, 1)))
			return &kp_enomem;
		*ret = buf;
		*len_ret = 0;
		return NULL;
	}
	if ((err = copy(k, task, a.arg_start, a.arg_end - a.arg_start, "argument", &buf)))
		return err;
	size_t len = a.arg_end - a.arg_start;
	if (buf[len - 1] != '\0') {
		// setproctitle(): up to the first NUL from arg_start, over into
		// the environment area when it follows, at most a page.
		uint64_t end = a.env_start == a.arg_end && a.env_end >= a.env_start ? a.env_end : a.arg_end;
		uint64_t want = end - a.arg_start;
		uint64_t page = kp_kernel_page_size(k);
		if (want > page)
			want = page;
		free(buf);
		if ((err = copy(k, task, a.arg_start, want, "argument", &buf)))
			return err;
		size_t got = strnlen(buf, want);
		len = got < want ? got + 1 : got;	// the NUL when there is one
		buf[len] = '\0';	// NUL-terminated beyond len, as the API says
	}
	*ret = buf;
	*len_ret = len;
	return NULL;
}

struct kp_error *kp_task_environ(struct kp_kernel *k, uint64_t task, char **ret, size_t *len_ret)
{
	struct area a;
	char *buf;
	struct kp_error *err = exited_area(k, task, &a);
	if (err)
		return err;
	uint64_t size = a.env_end > a.env_start ? a.env_end - a.env_start : 0;
	if (!size) {
		if (!(buf = calloc(1, 1)))
			return &kp_enomem;
	} else if ((err = copy(k, task, a.env_start, size, "environment", &buf))) {
		return err;
	}
	*ret = buf;
	*len_ret = size;
	return NULL;
}
