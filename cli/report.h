// SPDX-License-Identifier: MIT
// kpeek report (cmd_report.c): the sections after the panic's, in
// report_sections.c; each prints into the report's output and says nothing
// where it has nothing to say.
#ifndef KPEEK_CLI_REPORT_H
#define KPEEK_CLI_REPORT_H

#include <stdbool.h>
#include <kpeek/kpeek.h>

struct out;

struct report {
	struct kp_kernel *k;
	struct out *o;
	bool live;
	struct kp_panic panic;
	unsigned log_lines;	// --lines
	unsigned problems;	// sections that could not be read (a note each)
	unsigned found;		// checks that found something
};

// A section that could not be read: one line in text, "error" in its JSON
// object (the caller's), counted in r->problems.
void report_problem(struct report *r, const char *section, struct kp_error *err);

void report_stack(struct report *r);	// the panicking CPU's backtrace
void report_cpus(struct report *r);	// what every other CPU was running
void report_log(struct report *r);	// the log before the panic, earlier warnings
void report_memory(struct report *r);	// meminfo's main lines, largest, load, run queues
void report_largest(struct report *r);	// the processes with the most resident memory
void report_blocked(struct report *r);	// tasks in D state
void report_modules(struct report *r);	// modules that taint the kernel
void report_checks(struct report *r);	// the rootkit checks in one line

#endif
