// SPDX-License-Identifier: MIT
// How walks end (walk.h).
#include "core/kernel.h"
#include "format/source.h"
#include "linux/lib/walk.h"
#include "util/error.h"
#include "util/opts.h"

void kp_lx_walk_init(struct kp_lx_walk *w, struct kp_kernel *k)
{
	*w = (struct kp_lx_walk){ .live = kp_kernel_source(k)->live };
}

bool kp_lx_walk_restart(struct kp_lx_walk *w)
{
	if (!w->live || w->restarts + 1 >= KP_WALK_LIVE_PASSES)
		return false;
	w->restarts++;
	return true;
}

void kp_lx_walk_changed(struct kp_lx_walk *w)
{
	if (w->end == KP_WALK_COMPLETE)
		w->end = KP_WALK_LIVE_CHANGED;
}

void kp_lx_walk_left_out(struct kp_lx_walk *w, struct kp_error *err)
{
	w->left_out++;
	kp_lx_walk_stop(w, err);
}

struct kp_error *kp_lx_walk_unreadable(struct kp_lx_walk *w, struct kp_error *err)
{
	if (err->code == KP_ERR_NOMEM)
		return err;
	// What the kernel lacks (a symbol, a type, a member) or kpeek cannot
	// read is no race: reading again would say the same.
	if (w->live && err->code != KP_ERR_NOT_FOUND && err->code != KP_ERR_UNSUPPORTED) {
		kp_error_destroy(err);
		kp_lx_walk_changed(w);
	} else {
		kp_lx_walk_left_out(w, err);
	}
	return NULL;
}

void kp_lx_walk_partial(struct kp_lx_walk *w, struct kp_error *err)
{
	w->partial++;
	if (!w->note && !w->finished)
		w->note = err;
	else
		kp_error_destroy(err);
}

void kp_lx_walk_stop(struct kp_lx_walk *w, struct kp_error *err)
{
	w->end = KP_WALK_STOPPED;
	if (!w->final && !w->finished)
		w->final = err;
	else
		kp_error_destroy(err);
}

struct kp_error *kp_lx_walk_finish(struct kp_lx_walk *w)
{
	struct kp_error *err = w->final ? w->final : w->note;
	if (w->final)
		kp_error_destroy(w->note);
	w->final = w->note = NULL;
	w->finished = true;
	return err;
}

void kp_lx_walk_status(const struct kp_lx_walk *w, struct kp_walk_status *ret)
{
	struct kp_walk_status st = {
		.sz = sizeof(st), .end = w->end, .restarts = w->restarts, .left_out = w->left_out,
		.partial = w->partial, .at_limit = w->at_limit,
	};
	kp_out_copy(ret, &st, sizeof(st));
}

void kp_lx_walk_deinit(struct kp_lx_walk *w)
{
	kp_error_destroy(w->final);
	kp_error_destroy(w->note);
	w->final = w->note = NULL;
}
