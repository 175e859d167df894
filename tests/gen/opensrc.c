// SPDX-License-Identifier: MIT
#include <string.h>

#include "opensrc.h"

struct kp_error *kp_test_open_source(const struct kp_source_ops *ops, const char *path,
				     struct kp_opened_source *o)
{
	memset(o, 0, sizeof(*o));
	struct kp_error *err = kp_file_open(path, &o->file);
	if (err)
		return err;
	err = kp_memory_create(&o->mem);
	if (!err)
		err = ops->open(o->file, o->mem, &o->src);
	if (err) {
		kp_memory_destroy(o->mem);
		kp_file_destroy(o->file);
		o->mem = NULL;
		o->file = NULL;
	}
	return err;
}

void kp_test_close_source(struct kp_opened_source *o)
{
	kp_source_deinit(&o->src);
	kp_memory_destroy(o->mem);
	kp_file_destroy(o->file);
}
