// SPDX-License-Identifier: MIT
// comm: prints the command name of every task of a kernel, live or from a
// dump, then PID 1's arguments, with libkpeek's public API only.
//
//   cc comm.c $(pkg-config --cflags --libs kpeek) -o comm
//   ./comm [DUMP]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	// ...and one process in depth: PID 1's arguments, read from its own
	// memory as /proc/1/cmdline gives them (a dump may lack those pages).
	uint64_t task;
	if (!err && !(err = kp_task_by_pid(k, 1, &task))) {
		char *args;
		size_t len;
		struct kp_error *e = kp_task_cmdline(k, task, &args, &len);
		if (e) {
			printf("pid 1's arguments: %s\n", kp_error_message(e));
			kp_error_destroy(e);
		} else {
			printf("pid 1's arguments:");
			for (size_t i = 0; i < len; i += strlen(args + i) + 1)
				printf(" %s", args + i);
			printf("\n");
			free(args);
		}
	}
	kp_kernel_destroy(k);
	if (!err)
		return 0;
fail:
	fprintf(stderr, "comm: %s\n", kp_error_message(err));
	kp_error_destroy(err);
	return 1;
}
