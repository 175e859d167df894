// SPDX-License-Identifier: MIT
// Files and paths: d_path() as the kernel builds a path from a mount and a
// dentry (d_path.c).
#ifndef KP_LINUX_FS_H
#define KP_LINUX_FS_H

#include <kpeek/kpeek.h>

// Where paths are made relative to: a task's root (fs->root), as the
// reader of /proc sees them.
struct kp_lx_root {
	uint64_t mnt;		// struct vfsmount *
	uint64_t dentry;
};

// The root of the task at task (task->fs->root).
struct kp_error *kp_lx_task_root(struct kp_kernel *kernel, uint64_t task, struct kp_lx_root *ret);
// The root /proc's paths are shown from: that of PID 1 (its fs->root,
// after it pivoted to the real root), else init_task's.
struct kp_error *kp_lx_init_root(struct kp_kernel *kernel, struct kp_lx_root *ret);

// The path of (mnt, dentry) as d_path() gives it from root: the mount tree
// followed up, " (deleted)" after an unlinked file; pipes, sockets and
// anonymous inodes named as their file systems name them ("pipe:[1234]",
// "socket:[1234]", "anon_inode:[eventpoll]"). At most size - 1 bytes (a
// path longer than PATH_MAX is an error, as in the kernel).
struct kp_error *kp_lx_d_path(struct kp_kernel *kernel, const struct kp_lx_root *root,
			      uint64_t mnt, uint64_t dentry, char *buf, size_t size);

// The same as seq_path_root() gives it: *reachable_ret false when the path
// is not under root (/proc/PID/mountinfo leaves such a mount out).
struct kp_error *kp_lx_path_root(struct kp_kernel *kernel, const struct kp_lx_root *root,
				 uint64_t mnt, uint64_t dentry, char *buf, size_t size,
				 bool *reachable_ret);
// The path of a dentry inside its file system (dentry_path_raw(): up to the
// superblock's root, no mounts crossed), as mountinfo's root field.
struct kp_error *kp_lx_dentry_path(struct kp_kernel *kernel, uint64_t dentry, char *buf, size_t size);
// The device (s_dev) and inode number of the inode of a dentry, as /proc's
// maps and stat show them.
struct kp_error *kp_lx_dentry_inode(struct kp_kernel *kernel, uint64_t dentry, uint32_t *dev_ret,
				    uint64_t *ino_ret);

#define KP_LX_PATH_MAX 4096	// include/uapi/linux/limits.h PATH_MAX

#endif
