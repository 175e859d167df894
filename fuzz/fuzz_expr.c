// SPDX-License-Identifier: MIT
// The expression language: kp_eval and the value formatter on the synthetic
// kernel of synthkernel.h (BTF with task_struct, bitfields, unions, enums,
// typedefs, functions). The input is the expression; bytes after a NUL
// replace the kernel's data page (init_task, jiffies, pointers), so values
// and pointers are hostile too.
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mkcore.h"
#include "mkkallsyms.h"
#include "mkkdump.h"
#include "mkpgtable.h"
#include "synthkernel.h"
#include "core/kernel.h"
#include "lang/lex.h"
#include "lang/typename.h"

static uint8_t *image;
static size_t image_len, data_off;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sk_opts o = { .format = SK_ELF, .ntasks = 3 };
	sk_build(&o, &image, &image_len);
	static const char banner[] = "Linux version 6.1.0-synth";
	uint8_t *p = memmem(image, image_len, banner, sizeof(banner) - 1);
	if (!p || (size_t)(p - image) + 4096 > image_len)
		sk_die("no data page in the synthetic kernel");
	data_off = (size_t)(p - image);
	return 0;
}

static void use(struct kp_value *v)
{
	char *s;
	static const unsigned flags[] = { 0, KP_FORMAT_HEX, KP_FORMAT_JSON,
					  KP_FORMAT_JSON | KP_FORMAT_ONE_LINE | KP_FORMAT_NO_SYMBOLS };
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (fuzz_ok(kp_value_format(v, flags[i], &s)))
			free(s);
	if (fuzz_ok(kp_value_type_name(v, &s)))
		free(s);
	uint64_t u;
	fuzz_drop(kp_value_to_u64(v, &u));
	fuzz_drop(kp_value_address(v, &u));
	kp_value_size(v);
	uint8_t buf[64];
	size_t len;
	fuzz_drop(kp_value_reread(v, buf, sizeof(buf), &len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > KP_EXPR_MAX_LEN + 4096)
		return 0;
	const uint8_t *nul = memchr(data, '\0', size);
	size_t elen = nul ? (size_t)(nul - data) : size;
	char *expr = strndup((const char *)data, elen);
	uint8_t *img = malloc(image_len);
	if (!expr || !img) {
		free(expr);
		free(img);
		return 0;
	}
	memcpy(img, image, image_len);
	if (nul) {
		size_t n = size - elen - 1;
		memcpy(img + data_off, nul + 1, n < 4096 ? n : 4096);
	}
	char path[64];
	int fd = fuzz_memfd(img, image_len, path);
	free(img);
	if (fd < 0) {
		free(expr);
		return 0;
	}
	KP_OPTS(kp_open_options, opts, .core = path);
	struct kp_kernel *k;
	struct kp_error *err = kp_kernel_open(&opts, &k);
	if (!err) {
		struct kp_value *v;
		err = kp_eval(k, expr, &v);
		if (!err) {
			use(v);
			kp_value_destroy(v);
		}
		uint32_t id;
		struct kp_types *t;
		if (fuzz_ok(kp_kernel_types(k, &t)))
			fuzz_drop(kp_parse_type(t, expr, &id));
		uint64_t off, msize;
		fuzz_drop(kp_member_offset(k, "struct task_struct", expr, &off, &msize));
		fuzz_drop(kp_type_size(k, expr, &msize));
		// The navigation API with the input as a member path and type.
		struct kp_value *task, *r;
		if (fuzz_ok(kp_eval(k, "init_task", &task))) {
			if (fuzz_ok(kp_value_member(task, expr, &r))) {
				use(r);
				kp_value_destroy(r);
			}
			if (fuzz_ok(kp_value_cast(task, expr, &r))) {
				use(r);
				kp_value_destroy(r);
			}
			if (fuzz_ok(kp_value_container_of(task, "struct task_struct", expr, &r))) {
				use(r);
				kp_value_destroy(r);
			}
			kp_value_destroy(task);
		}
		kp_kernel_destroy(k);
	}
	kp_error_destroy(err);
	close(fd);
	free(expr);
	return 0;
}
