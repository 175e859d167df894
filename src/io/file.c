// SPDX-License-Identifier: MIT
// Read-only input files, read with pread. Regular files keep a small
// direct-mapped cache of 4 KiB blocks for the many small reads of page-table
// walks, list walks and symbol tables; /proc files (kcore reports a fake
// st_size, and its contents change), pipes and devices are read directly.
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "io/file.h"
#include "util/error.h"

#define KCORE_PATH "/proc/kcore"
#define LOCKDOWN_PATH "/sys/kernel/security/lockdown"
// Bound for kp_read_whole_file: kallsyms and BTF are a few MiB.
#define WHOLE_FILE_MAX (1ULL << 30)

// Reads of at least this many bytes bypass the cache.
#define BULK_READ (64u << 10)
#define BLOCK_SHIFT 12
#define BLOCK_SIZE (1u << BLOCK_SHIFT)
#define CACHE_BLOCKS 256	// 1 MiB per file

struct kp_file_cache {
	uint64_t tag[CACHE_BLOCKS];	// block number + 1; 0: empty
	uint8_t data[CACHE_BLOCKS][BLOCK_SIZE];
};

static bool is_kcore(const char *path)
{
	return strcmp(path, KCORE_PATH) == 0;
}

// /proc/kcore reads through a bounce buffer of its open file (the struct
// file's private_data, allocated by open_kcore(); read_kcore() in 5.10 and
// 6.1, read_kcore_iter() since 6.5): two processes reading one open file
// at once, a fork's parent and child or two forked workers, overwrite each
// other's pages (seen as a search of 6.12 missing a pointer that is there,
// and page-table walks failing). A /proc file is opened again, by its path,
// in the first read after a fork: the generation below counts forks.
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static unsigned fork_generation;

static void forked_child(void)
{
	__atomic_add_fetch(&fork_generation, 1, __ATOMIC_RELAXED);
}

static void watch_forks(void)
{
	// glibc unregisters a library's handlers when it is unloaded.
	pthread_atfork(NULL, NULL, forked_child);
}

// Kernel lockdown in "confidentiality" mode refuses /proc/kcore even to root
// (LOCKDOWN_KCORE, security/lockdown since 5.4).
static bool locked_down_confidentiality(void)
{
	int fd = open(LOCKDOWN_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char buf[256];
	ssize_t n;
	do {
		n = read(fd, buf, sizeof(buf) - 1);
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "[confidentiality]") != NULL;
}

// An error for a failed open/read of path, with kcore-specific explanations.
static struct kp_error *os_error(int errnum, const char *path, const char *what)
{
	if (is_kcore(path)) {
		if (errnum == ENOENT)
			return kp_error_create(KP_ERR_NOT_FOUND,
					       "%s: this kernel has no /proc/kcore "
					       "(CONFIG_PROC_KCORE=n, or a container without it)",
					       path);
		if (errnum == EPERM || errnum == EACCES) {
			// open_kcore() checks CAP_SYS_RAWIO first, then lockdown: as root,
			// EPERM means lockdown.
			bool lockdown = locked_down_confidentiality();
			struct kp_error *err;
			if (geteuid() == 0 && lockdown)
				err = kp_error_create(KP_ERR_PERMISSION,
						      "%s: kernel lockdown is in confidentiality "
						      "mode (%s), which forbids reading /proc/kcore "
						      "even as root", path, LOCKDOWN_PATH);
			else
				err = kp_error_create(KP_ERR_PERMISSION,
						      "%s: reading /proc/kcore needs root "
						      "(CAP_SYS_RAWIO)%s", path,
						      lockdown ? "; kernel lockdown (confidentiality) "
						      "would refuse it even then" : "");
			if (err != &kp_enomem)
				err->errnum = errnum;
			return err;
		}
	}
	if (what)
		return kp_error_os(errnum, "%s: %s", path, what);
	return kp_error_os(errnum, "%s", path);
}

// What a file that is not one kpeek reads is, for the error naming it.
static const char *file_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO (named pipe)";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISREG(mode) || S_ISBLK(mode))
		return NULL;
	return "not a regular file";
}

// Opens a file named by the user for reading without ever blocking: a FIFO
// opened O_RDONLY waits for a writer, and a read of a pipe, a terminal or a
// socket waits for data, so the open is non-blocking and anything but a
// regular file or a block device (dumps on a disk partition, kdump's raw
// target) is refused before the first read. /proc and /sys files (kcore,
// kallsyms, BTF) are regular files.
static struct kp_error *open_input(const char *path, int *fd_ret, struct stat *st_ret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		int errnum = errno;
		struct stat st;
		// open() of a UNIX socket fails with ENXIO: say what it is.
		if (errnum == ENXIO && stat(path, &st) == 0 && file_kind(st.st_mode))
			return kp_error_create(KP_ERR_INVALID,
					       "%s: is %s, not a file kpeek can read "
					       "(a dump or a side file must be a regular file "
					       "or a block device)", path, file_kind(st.st_mode));
		return os_error(errnum, path, NULL);
	}
	struct kp_error *err = NULL;
	if (fstat(fd, st_ret) < 0)
		err = os_error(errno, path, "fstat");
	else if (file_kind(st_ret->st_mode))
		err = kp_error_create(KP_ERR_INVALID,
				      "%s: is %s, not a file kpeek can read (a dump or a "
				      "side file must be a regular file or a block device)",
				      path, file_kind(st_ret->st_mode));
	else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		err = os_error(errno, path, "fcntl");
	if (err) {
		close(fd);
		return err;
	}
	*fd_ret = fd;
	return NULL;
}

struct kp_error *kp_file_open(const char *path, struct kp_file **ret)
{
	struct kp_file *file = calloc(1, sizeof(*file));
	if (!file)
		return &kp_enomem;
	file->fd = -1;
	file->path = strdup(path);
	if (!file->path) {
		free(file);
		return &kp_enomem;
	}
	struct stat st;
	struct kp_error *err = open_input(path, &file->fd, &st);
	if (err)
		goto fail;
	struct statfs sfs;
	bool procfs = fstatfs(file->fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
	if (procfs || is_kcore(path)) {
		pthread_once(&fork_once, watch_forks);
		file->reopen = true;
		file->generation = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
		file->dev = st.st_dev;
		file->ino = st.st_ino;
	} else if (S_ISREG(st.st_mode) && st.st_size > 0) {
		file->size = (uint64_t)st.st_size;
		file->cache = calloc(1, sizeof(*file->cache));
		if (!file->cache) {
			err = &kp_enomem;
			goto fail;
		}
	}
	*ret = file;
	return NULL;

fail:
	kp_file_destroy(file);
	return err;
}

void kp_file_destroy(struct kp_file *file)
{
	if (!file)
		return;
	free(file->cache);
	if (file->fd >= 0)
		close(file->fd);
	free(file->path);
	free(file);
}

static struct kp_error *truncated(const struct kp_file *file, uint64_t offset,
				  size_t len, uint64_t have)
{
	return kp_error_create(KP_ERR_FORMAT,
			       "%s: truncated: need %zu bytes at offset 0x%" PRIx64
			       ", file has 0x%" PRIx64, file->path, len, offset, have);
}

// The file opened again in a forked process, the same file (device and
// inode) on a new open file of its own.
static struct kp_error *reopen_forked(struct kp_file *file)
{
	unsigned now = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
	if (file->generation == now)
		return NULL;
	int fd;
	struct stat st;
	struct kp_error *err = open_input(file->path, &fd, &st);
	if (err)
		return err;
	if (st.st_dev != file->dev || st.st_ino != file->ino) {
		close(fd);
		return kp_error_create(KP_ERR_INVALID, "%s: opened again after a fork, it is another file",
				       file->path);
	}
	close(file->fd);
	file->fd = fd;
	file->generation = now;
	return NULL;
}

// Exactly len bytes at offset by pread, or an error naming where.
static struct kp_error *pread_exact(struct kp_file *file, uint64_t offset, uint8_t *p,
				    size_t len)
{
	struct kp_error *err = file->reopen ? reopen_forked(file) : NULL;
	if (err)
		return err;
	if (offset > INT64_MAX || len > (uint64_t)INT64_MAX - offset)
		return kp_error_create(KP_ERR_INVALID,
				       "%s: read of %zu bytes at offset 0x%" PRIx64
				       " is past the largest file offset", file->path,
				       len, offset);
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(file->fd, p + done, len - done, (off_t)(offset + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			char what[80];
			snprintf(what, sizeof(what), "read of %zu bytes at offset 0x%" PRIx64,
				 len, offset);
			return os_error(errno, file->path, what);
		}
		if (n == 0)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: truncated: need %zu bytes at offset 0x%"
					       PRIx64 ", file ends at 0x%" PRIx64, file->path,
					       len, offset, offset + done);
		done += (size_t)n;
	}
	return NULL;
}

// The cached copy of block b (read on a miss; the last block may be short).
static struct kp_error *cached_block(struct kp_file *file, uint64_t b, const uint8_t **ret)
{
	struct kp_file_cache *c = file->cache;
	size_t slot = (size_t)(b % CACHE_BLOCKS);
	if (c->tag[slot] != b + 1) {
		uint64_t at = b << BLOCK_SHIFT;
		size_t len = file->size - at < BLOCK_SIZE ? (size_t)(file->size - at) : BLOCK_SIZE;
		c->tag[slot] = 0;
		struct kp_error *err = pread_exact(file, at, c->data[slot], len);
		if (err)
			return err;
		c->tag[slot] = b + 1;
	}
	*ret = c->data[slot];
	return NULL;
}

struct kp_error *kp_file_read(struct kp_file *file, uint64_t offset, void *buf,
			      size_t len)
{
	if (len == 0)
		return NULL;
	if (file->size && (offset > file->size || len > file->size - offset))
		return truncated(file, offset, len, file->size);
	if (!file->cache || len >= BULK_READ)
		return pread_exact(file, offset, buf, len);
	uint8_t *out = buf;
	while (len > 0) {
		const uint8_t *block;
		struct kp_error *err = cached_block(file, offset >> BLOCK_SHIFT, &block);
		if (err)
			return err;
		size_t in = (size_t)(offset & (BLOCK_SIZE - 1));
		size_t n = BLOCK_SIZE - in < len ? BLOCK_SIZE - in : len;
		memcpy(out, block + in, n);
		out += n;
		offset += n;
		len -= n;
	}
	return NULL;
}

struct kp_error *kp_file_read_fn(void *buf, uint64_t address, size_t count,
				 uint64_t offset, void *arg)
{
	return kp_file_read(arg, offset, buf, count);
}

struct kp_error *kp_read_whole_file(const char *path, char **buf_ret, size_t *len_ret)
{
	int fd;
	struct stat st;
	struct kp_error *oerr = open_input(path, &fd, &st);
	if (oerr)
		return oerr;
	size_t cap = 4096;
	if (S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < WHOLE_FILE_MAX)
		cap = (size_t)st.st_size + 1;	// +1 to see EOF without growing
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return &kp_enomem;
	}
	size_t len = 0;
	struct kp_error *err = NULL;
	for (;;) {
		if (len + 1 >= cap) {
			if (cap >= WHOLE_FILE_MAX) {
				err = kp_error_create(KP_ERR_FORMAT,
						      "%s: larger than %llu MiB", path,
						      WHOLE_FILE_MAX >> 20);
				break;
			}
			char *nbuf = realloc(buf, cap * 2);
			if (!nbuf) {
				err = &kp_enomem;
				break;
			}
			buf = nbuf;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = os_error(errno, path, "read");
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*buf_ret = buf;
	*len_ret = len;
	return NULL;
}
