// SPDX-License-Identifier: MIT
// How a listing of kernel objects ended, said the same way by every
// command that lists them (ps, bt, lsmod, dmesg, list): the library's walk
// status (struct kp_walk_status) and the iterator's last word.
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "output.h"

static const char *reason(const struct cli_walk *w)
{
	if (w->st.end == KP_WALK_LIVE_CHANGED)
		return "live-changed";
	if (w->st.end == KP_WALK_COMPLETE && !w->err)
		return NULL;
	if (w->at_limit)
		return "limit";
	switch (w->err ? kp_error_code(w->err) : 0) {
	case KP_ERR_FAULT: return "unreadable";
	case KP_ERR_FORMAT:
	case KP_ERR_LOOP: return "corrupt";
	default: return "error";
	}
}

bool cli_walk_complete(const struct cli_walk *w)
{
	return !reason(w);
}

void cli_walk_json(struct out *o, const struct cli_walk *w)
{
	const char *why = reason(w);
	out_kv_bool(o, "complete", !why);
	if (!why)
		return;
	out_kv_str(o, "reason", why);
	out_kv_str(o, "error", w->err ? kp_error_message(w->err) : NULL);
	out_kv_uint(o, "left_out", w->st.left_out);
	out_kv_uint(o, "partial", w->st.partial);
	out_kv_uint(o, "restarts", w->st.restarts);
}

int cli_walk_end(const char *cmd, const char *objects, struct cli_walk *w)
{
	if (w->err) {
		struct kp_error *err = w->err;
		w->err = NULL;
		return cli_error_prefix(err, "%s: incomplete", cmd);
	}
	if (w->st.end == KP_WALK_LIVE_CHANGED) {
		// Like /proc, a listing of a changing system is a snapshot: exit 0.
		fflush(stdout);
		fprintf(stderr, "kpeek: %s: the live kernel changed during the walk (%u restarts): "
			"the list may miss %s that appeared or went away meanwhile\n",
			cmd, w->st.restarts, objects);
	}
	return 0;
}
