// SPDX-License-Identifier: MIT
// The decompressors only some dumps need (codecs.c): zstd and lzo for
// kdump-compressed pages, snappy for those and for LiME's compressed
// blocks (and zstd's compressor for snapshots that ask for it), libdeflate
// for zlib pages (2.5x zlib's speed on a 4 KiB page), loaded with
// dlopen() the first time a dump needs one, so that a command on
// /proc/kcore, an ELF dump or a zlib kdump does not load them (with snappy
// comes libstdc++): about 3 ms of kpeek's 7 ms start (issue 31).
// zlib stays linked: libelf needs it anyway, and it inflates a zlib page
// where libdeflate cannot be loaded.
#ifndef KP_FORMAT_CODECS_H
#define KP_FORMAT_CODECS_H

#include <libdeflate.h>
#include <lzo/lzo1x.h>
#include <snappy-c.h>
#include <zstd.h>
#include <zstd_errors.h>

struct kp_zstd {
	__typeof__(&ZSTD_createDCtx) create;
	__typeof__(&ZSTD_freeDCtx) free;
	__typeof__(&ZSTD_decompressDCtx) decompress;
	__typeof__(&ZSTD_isError) is_error;
	__typeof__(&ZSTD_getErrorCode) error_code;
	__typeof__(&ZSTD_getErrorName) error_name;
	// kpeek snapshot --kdump --compress zstd (core/snapshot_kdump.c)
	__typeof__(&ZSTD_createCCtx) create_c;
	__typeof__(&ZSTD_freeCCtx) free_c;
	__typeof__(&ZSTD_compressBound) compress_bound;
	__typeof__(&ZSTD_compressCCtx) compress;
};

struct kp_deflate {
	__typeof__(&libdeflate_alloc_decompressor) alloc;
	__typeof__(&libdeflate_free_decompressor) free;
	__typeof__(&libdeflate_zlib_decompress) zlib_decompress;
};

struct kp_lzo {
	__typeof__(&lzo1x_decompress_safe) decompress_safe;
};

struct kp_snappy {
	__typeof__(&snappy_uncompressed_length) uncompressed_length;
	__typeof__(&snappy_uncompress) uncompress;
};

// The library's functions, loaded once (thread-safe); an error naming the
// library and the Debian package that has it when it cannot be loaded.
struct kp_error *kp_codec_zstd(const struct kp_zstd **ret);
struct kp_error *kp_codec_lzo(const struct kp_lzo **ret);
struct kp_error *kp_codec_snappy(const struct kp_snappy **ret);
struct kp_error *kp_codec_deflate(const struct kp_deflate **ret);

#endif
