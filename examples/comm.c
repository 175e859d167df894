// SPDX-License-Identifier: MIT
// comm: prints the command name of every task of a kernel, live or from a
// dump, with libkpeek's public API only.
//
//   cc comm.c $(pkg-config --cflags --libs kpeek) -o comm
//   ./comm [DUMP]
#include <stdio.h>
#include <stdlib.h>

#include <kpeek/kpeek.h>

int main(int argc, char **argv)
{
	// NULL: the live kernel through /proc/kcore (needs root).
	KP_OPTS(kp_open_options, opts, .core = argc > 1 ? argv[1] : NULL);
	struct kp_kernel *k;
	struct kp_error *err = kp_kernel_open(&opts, &k);
	if (err)
		goto fail;

	// One value through the expression language...
	struct kp_value *v;
	if (!(err = kp_eval(k, "init_task.comm", &v))) {
		char *text;
		if (!(err = kp_value_format(v, 0, &text))) {
			printf("init_task.comm = %s\n", text);
			free(text);
		}
		kp_value_destroy(v);
	}
	// ...and every task through an iterator.
	struct kp_task_iter *it;
	if (!err && !(err = kp_task_iter_create(k, 0, &it))) {
		const struct kp_task *t;
		while (!(err = kp_task_iter_next(it, &t)) && t)
			printf("%7d %s\n", t->pid, t->comm);
		kp_task_iter_destroy(it);
	}
	kp_kernel_destroy(k);
	if (!err)
		return 0;
fail:
	fprintf(stderr, "comm: %s\n", kp_error_message(err));
	kp_error_destroy(err);
	return 1;
}
