// SPDX-License-Identifier: MIT
// The one way a walker of kernel objects ends (walk.c): the state every
// iterator embeds, from which kp_*_iter_status() answers.
//
// The rules (kpeek.h, "Walks"): an error is the walk's last word, returned
// once after everything it could read was yielded; in a dump an
// inconsistency is an error naming the structure and the address; on a live
// kernel it is a change, and the walk starts again from the head, at most
// KP_WALK_LIVE_PASSES passes, answering with the first pass that met no
// change or else with the last one, marked.
#ifndef KP_LINUX_LIB_WALK_H
#define KP_LINUX_LIB_WALK_H

#include <kpeek/kpeek.h>

struct kp_lx_walk {
	bool live;		// the source is a live kernel
	enum kp_walk_end end;
	unsigned restarts;
	uint64_t left_out;
	uint64_t partial;
	bool at_limit;		// the caller's limit ended it
	struct kp_error *final;	// what ended the walk, until it is returned
	struct kp_error *note;	// the first partial object's error
	bool finished;		// the iterator said it is done
};

void kp_lx_walk_init(struct kp_lx_walk *w, struct kp_kernel *kernel);
// A pass met a change on a live kernel: true if another pass may start
// (counted), false when the passes are used up.
bool kp_lx_walk_restart(struct kp_lx_walk *w);
// The answer is a pass that met changes (live, passes used up).
void kp_lx_walk_changed(struct kp_lx_walk *w);
// An object was found but could not be read (err says which and why): left
// out, the walk goes on; the first such error ends it at the end.
void kp_lx_walk_left_out(struct kp_lx_walk *w, struct kp_error *err);
// An object is yielded with a part that could not be read (err says which):
// counted, the walk goes on and ends as it would; err is returned at the
// end if nothing ended the walk.
void kp_lx_walk_partial(struct kp_lx_walk *w, struct kp_error *err);
// An object found could not be read (err says which): in a dump it is
// left out (kp_lx_walk_left_out), on a live kernel it went away under the
// walk (kp_lx_walk_changed, err dropped) unless err says the kernel lacks
// what reading it needs (KP_ERR_NOT_FOUND, KP_ERR_UNSUPPORTED: left out as
// in a dump). Out of memory is returned, for the caller to return;
// otherwise NULL.
struct kp_error *kp_lx_walk_unreadable(struct kp_lx_walk *w, struct kp_error *err);
// err ends the walk (kept until kp_lx_walk_finish() returns it; a second
// error after the first is dropped).
void kp_lx_walk_stop(struct kp_lx_walk *w, struct kp_error *err);
// The iterator is done: NULL, or the error that ended the walk (returned
// once; the caller owns it).
struct kp_error *kp_lx_walk_finish(struct kp_lx_walk *w);
void kp_lx_walk_status(const struct kp_lx_walk *w, struct kp_walk_status *ret);
void kp_lx_walk_deinit(struct kp_lx_walk *w);

#endif
