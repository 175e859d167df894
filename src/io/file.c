// Read-only input files. Regular files are mmap'ed; /proc files (kcore reports
// a fake st_size and cannot be mmap'ed), pipes and devices go through pread.
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "io/file.h"
#include "util/error.h"

#define KCORE_PATH "/proc/kcore"
#define LOCKDOWN_PATH "/sys/kernel/security/lockdown"
// Bound for kp_read_whole_file: kallsyms and BTF are a few MiB.
#define WHOLE_FILE_MAX (1ULL << 30)

static bool is_kcore(const char *path)
{
	return strcmp(path, KCORE_PATH) == 0;
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
	struct kp_error *err;
	file->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (file->fd < 0) {
		err = os_error(errno, path, NULL);
		goto fail;
	}
	struct stat st;
	if (fstat(file->fd, &st) < 0) {
		err = os_error(errno, path, "fstat");
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		err = kp_error_create(KP_ERR_INVALID, "%s: is a directory", path);
		goto fail;
	}
	struct statfs sfs;
	bool procfs = fstatfs(file->fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
	if (S_ISREG(st.st_mode) && !procfs && !is_kcore(path) && st.st_size > 0) {
		file->size = (uint64_t)st.st_size;
		if ((uint64_t)st.st_size <= SIZE_MAX) {
			void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
					 file->fd, 0);
			// Falling back to pread is fine (e.g. a file system without mmap).
			if (map != MAP_FAILED)
				file->map = map;
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
	if (file->map)
		munmap((void *)file->map, (size_t)file->size);
	if (file->fd >= 0)
		close(file->fd);
	free(file->path);
	free(file);
}

// Reads of at least this many bytes use pread (see kp_file_read).
#define KP_FILE_BULK_READ (64u << 10)

static struct kp_error *truncated(const struct kp_file *file, uint64_t offset,
				  size_t len, uint64_t have)
{
	return kp_error_create(KP_ERR_FORMAT,
			       "%s: truncated: need %zu bytes at offset 0x%" PRIx64
			       ", file has 0x%" PRIx64, file->path, len, offset, have);
}

struct kp_error *kp_file_read(struct kp_file *file, uint64_t offset, void *buf,
			      size_t len)
{
	if (len == 0)
		return NULL;
	if (file->size && (offset > file->size || len > file->size - offset))
		return truncated(file, offset, len, file->size);
	// Bulk reads go through pread even when mapped: copying from the map
	// faults its pages in one by one and leaves them in the RSS (a 1 GiB
	// dump read whole: ~2x slower than cat and 1 GiB RSS); pread copies from
	// the page cache without mapping anything.
	if (file->map && len < KP_FILE_BULK_READ) {
		memcpy(buf, file->map + offset, len);
		return NULL;
	}
	if (offset > INT64_MAX || len > (uint64_t)INT64_MAX - offset)
		return kp_error_create(KP_ERR_INVALID,
				       "%s: read of %zu bytes at offset 0x%" PRIx64
				       " is past the largest file offset", file->path,
				       len, offset);
	uint8_t *p = buf;
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

struct kp_error *kp_file_read_fn(void *buf, uint64_t address, size_t count,
				 uint64_t offset, void *arg)
{
	return kp_file_read(arg, offset, buf, count);
}

struct kp_error *kp_read_whole_file(const char *path, char **buf_ret, size_t *len_ret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return os_error(errno, path, NULL);
	struct stat st;
	size_t cap = 4096;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
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
