// SPDX-License-Identifier: MIT
// kp_hog: takes memory until the kernel has none left (issue 37: the
// suite's OOM panic, with vm.panic_on_oom set, in a kdump guest). A MiB
// at a time, every page of it written, so that all it takes is resident:
// its RSS is the largest in the OOM report's task list and in kpeek
// report's largest processes.
#include <stdlib.h>
#include <sys/prctl.h>

#define CHUNK (1u << 20)
#define PAGE 4096u

int main(void)
{
	prctl(PR_SET_NAME, "kp_hog", 0, 0, 0);
	for (;;) {
		volatile char *p = malloc(CHUNK);
		for (unsigned i = 0; p && i < CHUNK; i += PAGE)
			p[i] = 1;
	}
}
