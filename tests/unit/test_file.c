// SPDX-License-Identifier: MIT
// Input files across fork(): a /proc file gets an open file of its own in
// the child (/proc/kcore's reads go through a buffer of the open file, which
// a parent and its child, or two workers, would otherwise share), a regular
// file keeps the one it shares (pread needs nothing else).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "io/file.h"

// In a child: read 4 bytes at 0, then report whether the file's descriptor
// still shares the parent's open file (the offset the parent set, 3).
// Exit 0: own open file; 1: shared; 2: the read failed.
static int child_reads(struct kp_file *f)
{
	pid_t pid = fork();
	if (pid == 0) {
		char buf[4];
		struct kp_error *err = kp_file_read(f, 0, buf, sizeof(buf));
		if (err)
			_exit(2);
		_exit(lseek(f->fd, 0, SEEK_CUR) == 3 ? 1 : 0);
	}
	int status = -1;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(proc_file_reopened_after_fork)
{
	struct kp_file *f = NULL;
	CHECK_OK(kp_file_open("/proc/version", &f));
	if (!f)
		return;
	CHECK(f->reopen);
	CHECK(f->cache == NULL);
	int fd = f->fd;
	CHECK(lseek(f->fd, 3, SEEK_SET) == 3);
	CHECK_U64(child_reads(f), 0);
	// Twice: a second fork is seen too.
	CHECK_U64(child_reads(f), 0);
	// The parent keeps its own.
	char buf[7];
	CHECK_OK(kp_file_read(f, 0, buf, 5));
	buf[5] = '\0';
	CHECK_STR(buf, "Linux");
	CHECK_U64(f->fd, fd);
	CHECK_U64(lseek(f->fd, 0, SEEK_CUR), 3);
	kp_file_destroy(f);
}

TEST(regular_file_shared_after_fork)
{
	char path[] = "/tmp/kp-file-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, "0123456789", 10) == 10);
	close(fd);
	struct kp_file *f = NULL;
	CHECK_OK(kp_file_open(path, &f));
	if (f) {
		CHECK(!f->reopen);
		CHECK(lseek(f->fd, 3, SEEK_SET) == 3);
		CHECK_U64(child_reads(f), 1);
		kp_file_destroy(f);
	}
	unlink(path);
}

int main(void)
{
	RUN(proc_file_reopened_after_fork);
	RUN(regular_file_shared_after_fork);
	return TEST_SUMMARY();
}
