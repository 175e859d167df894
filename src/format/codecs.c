// SPDX-License-Identifier: MIT
// Loading the decompressors on first use (codecs.h). Each library is
// opened once per process by its soname (the ABI kpeek was built against)
// and never closed: its functions stay valid for the life of the process.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "format/codecs.h"
#include "util/error.h"

struct codec {
	const char *soname, *package;
	const char *const *names;	// the functions, in the order of the struct ...
	unsigned char *fns;		// ... of function pointers here
	size_t nfns;
	void *handle;
	char why[192];			// why it could not be loaded, "" once loaded
};

static void load(struct codec *c)
{
	if (!(c->handle = dlopen(c->soname, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(c->why, sizeof(c->why), "%s", dlerror());
		return;
	}
	for (size_t i = 0; i < c->nfns; i++) {
		void *fn = dlsym(c->handle, c->names[i]);
		if (!fn) {
			snprintf(c->why, sizeof(c->why), "%s has no %s", c->soname, c->names[i]);
			return;
		}
		// POSIX: a function's address from dlsym() converts to a
		// function pointer; copied as bytes, not through a cast lvalue.
		memcpy(c->fns + i * sizeof(fn), &fn, sizeof(fn));
	}
	c->why[0] = '\0';
}

static struct kp_error *loaded(const struct codec *c)
{
	if (c->why[0])
		return kp_error_create(KP_ERR_UNSUPPORTED, "cannot load %s (Debian package %s) to "
				       "decompress the dump: %s", c->soname, c->package, c->why);
	return NULL;
}

// One codec: the struct of its functions, their names in the struct's
// order, its state and the pthread_once() that loads it.
#define CODEC(NAME, SONAME, PACKAGE, ...)                                            \
	static struct kp_##NAME NAME##_fns;                                          \
	static const char *const NAME##_names[] = { __VA_ARGS__ };                   \
	_Static_assert(sizeof(NAME##_fns) == sizeof(NAME##_names) / sizeof(char *) * \
		       sizeof(void *), "one name per function of struct kp_" #NAME); \
	static struct codec NAME##_codec = {                                         \
		.soname = SONAME, .package = PACKAGE, .names = NAME##_names,         \
		.fns = (unsigned char *)&NAME##_fns,                                 \
		.nfns = sizeof(NAME##_names) / sizeof(NAME##_names[0]),              \
		.why = "not loaded",                                                 \
	};                                                                           \
	static pthread_once_t NAME##_once = PTHREAD_ONCE_INIT

CODEC(zstd, "libzstd.so.1", "libzstd1", "ZSTD_createDCtx", "ZSTD_freeDCtx", "ZSTD_decompressDCtx",
      "ZSTD_isError", "ZSTD_getErrorCode", "ZSTD_getErrorName", "ZSTD_createCCtx", "ZSTD_freeCCtx",
      "ZSTD_compressBound", "ZSTD_compressCCtx");
CODEC(lzo, "liblzo2.so.2", "liblzo2-2", "lzo1x_decompress_safe");
CODEC(snappy, "libsnappy.so.1", "libsnappy1v5", "snappy_uncompressed_length", "snappy_uncompress");
CODEC(deflate, "libdeflate.so.0", "libdeflate0", "libdeflate_alloc_decompressor",
      "libdeflate_free_decompressor", "libdeflate_zlib_decompress");

static void load_zstd(void)
{
	load(&zstd_codec);
}

static void load_snappy(void)
{
	load(&snappy_codec);
}

static void load_deflate(void)
{
	load(&deflate_codec);
}

// lzo asks for lzo_init() before any other call: its check that the
// library has this program's ABI. The macro passes the caller's type sizes
// to __lzo_init_v2, here the library's loaded function.
static void load_lzo(void)
{
	load(&lzo_codec);
	if (lzo_codec.why[0])
		return;
	__typeof__(&__lzo_init_v2) init;
	void *fn = dlsym(lzo_codec.handle, "__lzo_init_v2");
	memcpy(&init, &fn, sizeof(fn));
#define __lzo_init_v2 init
	if (!fn || lzo_init() != LZO_E_OK)
		snprintf(lzo_codec.why, sizeof(lzo_codec.why), "lzo_init() failed");
#undef __lzo_init_v2
}

struct kp_error *kp_codec_zstd(const struct kp_zstd **ret)
{
	pthread_once(&zstd_once, load_zstd);
	struct kp_error *err = loaded(&zstd_codec);
	if (!err)
		*ret = &zstd_fns;
	return err;
}

struct kp_error *kp_codec_lzo(const struct kp_lzo **ret)
{
	pthread_once(&lzo_once, load_lzo);
	struct kp_error *err = loaded(&lzo_codec);
	if (!err)
		*ret = &lzo_fns;
	return err;
}

struct kp_error *kp_codec_snappy(const struct kp_snappy **ret)
{
	pthread_once(&snappy_once, load_snappy);
	struct kp_error *err = loaded(&snappy_codec);
	if (!err)
		*ret = &snappy_fns;
	return err;
}

struct kp_error *kp_codec_deflate(const struct kp_deflate **ret)
{
	pthread_once(&deflate_once, load_deflate);
	struct kp_error *err = loaded(&deflate_codec);
	if (!err)
		*ret = &deflate_fns;
	return err;
}
