// SPDX-License-Identifier: MIT
// kp_fd_iter: a process's open files as /proc/PID/fd lists them: the
// fd table of its files_struct (task->files->fdt: max_fds entries of fd[],
// open_fds one bit each), each file named by d_path() as the fd's link
// shows it (a path, "pipe:[INO]", "socket:[INO]", "anon_inode:[eventpoll]",
// " (deleted)"), and its flags as /proc/PID/fdinfo shows them: f_flags
// with O_CLOEXEC where the fd's close_on_exec bit is set (fs/proc/fd.c
// seq_show(); the flag lives in the fd table, not in the file).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "linux/fs/fs.h"
#include "linux/lib/walk.h"
#include "util/error.h"
#include "util/le.h"
#include "util/vec.h"

// sysctl fs.nr_open is at most 1 << 30 on 64-bit (fs/file.c sysctl_nr_open_max);
// a table claiming more is corrupt.
#define MAX_FDS (1u << 30)
#define S_IFMT 0170000
#define O_CLOEXEC 02000000	// the same on x86-64 and arm64 (asm-generic/fcntl.h)

static const struct kp_member_spec task_members[] = { { .name = "files" } };
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);
static const struct kp_member_spec files_members[] = { { .name = "fdt" } };
static const struct kp_struct_spec files_spec = KP_STRUCT_SPEC("struct files_struct", files_members);
enum { T_MAX, T_FD, T_OPEN, T_CLOEXEC, T_N };
static const struct kp_member_spec fdt_members[T_N] = {
	[T_MAX] = { .name = "max_fds" }, [T_FD] = { .name = "fd" }, [T_OPEN] = { .name = "open_fds" },
	// Every kernel has it; optional for the synthetic kernel of the unit
	// tests, whose fd table has none (no fd is then close-on-exec).
	[T_CLOEXEC] = { .name = "close_on_exec", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec fdt_spec = KP_STRUCT_SPEC("struct fdtable", fdt_members);
enum { F_MNT, F_DENTRY, F_FLAGS, F_POS, F_INODE, F_N };
static const struct kp_member_spec file_members[F_N] = {
	[F_MNT] = { .name = "f_path.mnt" }, [F_DENTRY] = { .name = "f_path.dentry" },
	[F_FLAGS] = { .name = "f_flags" }, [F_POS] = { .name = "f_pos" },
	[F_INODE] = { .name = "f_inode" },
};
static const struct kp_struct_spec file_spec = KP_STRUCT_SPEC("struct file", file_members);
enum { I_MODE, I_INO, I_N };
static const struct kp_member_spec inode_members[I_N] = {
	[I_MODE] = { .name = "i_mode" }, [I_INO] = { .name = "i_ino" },
};
static const struct kp_struct_spec inode_spec = KP_STRUCT_SPEC("struct inode", inode_members);

struct kp_fd_iter {
	struct kp_kernel *k;
	const struct kp_struct_layout *fl, *il;
	struct kp_lx_root root;
	bool has_root;
	uint64_t fds;			// struct file *fd[]
	uint64_t *open;			// open_fds bitmap
	uint64_t *cloexec;		// close_on_exec bitmap, NULL without one
	uint32_t max, next;
	struct kp_fd file;
	char target[KP_LX_PATH_MAX + 16];
	struct kp_lx_walk walk;
};

// The fd table of task into it.
static struct kp_error *table(struct kp_fd_iter *it, uint64_t task)
{
	static const struct kp_struct_spec *const specs[] = { &task_spec, &files_spec, &fdt_spec };
	const struct kp_struct_layout *l[3];
	uint64_t files, fdt, open, cloexec = 0;
	struct kp_error *err = kp_kernel_layouts(it->k, specs, 3, l);
	if (err || (err = kp_read_u64(it->k, task + kp_layout_off(l[0], 0), &files)))
		return err;
	if (!files)
		return kp_error_create(KP_ERR_INVALID, "task 0x%" PRIx64 " has no files_struct (it exited)", task);
	if ((err = kp_read_u64(it->k, files + kp_layout_off(l[1], 0), &fdt)) ||
	    (err = kp_read_u32(it->k, fdt + kp_layout_off(l[2], T_MAX), &it->max)) ||
	    (err = kp_read_u64(it->k, fdt + kp_layout_off(l[2], T_FD), &it->fds)) ||
	    (err = kp_read_u64(it->k, fdt + kp_layout_off(l[2], T_OPEN), &open)) ||
	    (kp_layout_has(l[2], T_CLOEXEC) &&
	     (err = kp_read_u64(it->k, fdt + kp_layout_off(l[2], T_CLOEXEC), &cloexec))))
		return kp_error_prefix(err, "files_struct at 0x%" PRIx64, files);
	if (it->max > MAX_FDS || it->max % 64)
		return kp_error_create(KP_ERR_FORMAT, "fdtable at 0x%" PRIx64 ": max_fds %u (corrupt?)", fdt, it->max);
	size_t words = it->max / 64;
	if (!(it->open = malloc(words ? words * 8 : 8)))
		return &kp_enomem;
	if ((err = kp_read(it->k, KP_VIRT, open, it->open, words * 8)))
		return kp_error_prefix(err, "the open_fds bitmap of fdtable 0x%" PRIx64, fdt);
	if (!kp_layout_has(l[2], T_CLOEXEC))
		return NULL;
	if (!(it->cloexec = malloc(words ? words * 8 : 8)))
		return &kp_enomem;
	if ((err = kp_read(it->k, KP_VIRT, cloexec, it->cloexec, words * 8)))
		return kp_error_prefix(err, "the close_on_exec bitmap of fdtable 0x%" PRIx64, fdt);
	return NULL;
}

struct kp_error *kp_fd_iter_create(struct kp_kernel *k, uint64_t task, struct kp_fd_iter **ret)
{
	static const struct kp_struct_spec *const specs[] = { &file_spec, &inode_spec };
	const struct kp_struct_layout *l[2];
	struct kp_fd_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	kp_lx_walk_init(&it->walk, k);
	struct kp_error *err = kp_kernel_layouts(k, specs, 2, l);
	if (!err)
		err = table(it, task);
	if (err) {
		kp_fd_iter_destroy(it);
		return err;
	}
	it->fl = l[0];
	it->il = l[1];
	it->has_root = kp_ok(kp_lx_init_root(k, &it->root));
	*ret = it;
	return NULL;
}

static const char *kind(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case 0100000: return "REG";
	case 0040000: return "DIR";
	case 0020000: return "CHR";
	case 0060000: return "BLK";
	case 0010000: return "FIFO";
	case 0140000: return "SOCK";
	case 0120000: return "LNK";
	default: return "?";
	}
}

static struct kp_error *decode(struct kp_fd_iter *it, uint32_t fd, uint64_t file)
{
	uint8_t buf[512];
	const struct kp_struct_layout *l = it->fl;
	if (kp_layout_span(l) > sizeof(buf))
		return kp_error_create(KP_ERR_UNSUPPORTED, "struct file span of %" PRIu64 " bytes", kp_layout_span(l));
	struct kp_error *err = kp_read(it->k, KP_VIRT, file + l->lo, buf, kp_layout_span(l));
	if (err)
		return kp_error_prefix(err, "fd %u: struct file at 0x%" PRIx64, fd, file);
	struct kp_fd *f = &it->file;
	*f = (struct kp_fd){ .fd = (int32_t)fd, .file = file, .kind = "?", .target = "" };
	f->flags = (uint32_t)kp_layout_u64(l, buf, F_FLAGS);
	if (it->cloexec && it->cloexec[fd / 64] >> (fd % 64) & 1)
		f->flags |= O_CLOEXEC;
	f->pos = kp_layout_u64(l, buf, F_POS);
	uint64_t inode = kp_layout_u64(l, buf, F_INODE);
	uint16_t mode = 0;
	// An inode that cannot be read makes the fd unreadable (left out and
	// counted in a dump), not a file of kind "?" and inode 0.
	if (inode && ((err = kp_read(it->k, KP_VIRT, inode + kp_layout_off(it->il, I_MODE), &mode, 2)) ||
		      (err = kp_read_u64(it->k, inode + kp_layout_off(it->il, I_INO), &f->inode))))
		return kp_error_prefix(err, "fd %u: its inode at 0x%" PRIx64, fd, inode);
	if (inode)
		f->kind = kind(mode);
	if (!it->has_root)
		return kp_error_create(KP_ERR_NOT_FOUND, "fd %u: no root to make paths from", fd);
	if ((err = kp_lx_d_path(it->k, &it->root, kp_layout_u64(l, buf, F_MNT),
				kp_layout_u64(l, buf, F_DENTRY), it->target, sizeof(it->target))))
		return kp_error_prefix(err, "fd %u: its path", fd);
	f->target = it->target;
	return NULL;
}

struct kp_error *kp_fd_iter_next(struct kp_fd_iter *it, const struct kp_fd **ret)
{
	*ret = NULL;
	while (it->next < it->max) {
		uint32_t fd = it->next++;
		if (!(it->open[fd / 64] >> (fd % 64) & 1))
			continue;
		uint64_t file;
		struct kp_error *err = kp_read_u64(it->k, it->fds + 8ULL * fd, &file);
		if (!err && !file)
			continue;	// reserved between get_unused_fd() and fd_install()
		if (!err)
			err = decode(it, fd, file);
		if (!err) {
			*ret = &it->file;
			return NULL;
		}
		if ((err = kp_lx_walk_unreadable(&it->walk, err)))
			return err;
	}
	return kp_lx_walk_finish(&it->walk);
}

void kp_fd_iter_status(const struct kp_fd_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_fd_iter_destroy(struct kp_fd_iter *it)
{
	if (!it)
		return;
	free(it->open);
	free(it->cloexec);
	kp_lx_walk_deinit(&it->walk);
	free(it);
}
