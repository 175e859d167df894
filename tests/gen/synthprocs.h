// SPDX-License-Identifier: MIT
// The processes of the synthetic kernel (sk_opts.procs of synthkernel.h):
// what the process walkers read (user memory through a process's own page
// tables, its argument and environment areas, its VMAs in a maple tree, its
// fd table, the mounts of its namespace on a list or in an rbtree, its
// credentials), laid out in RAM after the synthetic kernel's first 128 KiB,
// with BTF for every struct. The offsets below are this generator's own
// (kpeek takes every one from the BTF); tests write through them to make
// the cases they want (sk_opts.edit) and compare with what they wrote.
//
//   task 1 "init"  pid 1, uid 0: mm 0 (user page tables, arguments and
//                  environment, five VMAs in one maple leaf), files, fs
//   task 2 "task2" pid 2, uid 1000: mm 1 (no user pages, no arguments,
//                  four VMAs in a two-level maple tree), the same files/fs;
//                  pid 1 in a child PID namespace, traced by task 1, no new
//                  privileges, SIGHUP pending, SIGCHLD blocked
//   task 3.. "taskN" kernel threads (PF_KTHREAD, no mm, init_cred)
//   init_task: a kernel thread on init_cred (as in synthkernel.h)
//
// Mounts (ids 21..24): / (ext4 on /dev/vda1), /proc, /tmp (tmpfs, shared:1),
// /mnt (the same tmpfs bound as its slave, master:1). Open files of both
// processes: fd 0 pipe:[4242], fd 1 and 2 /tmp/log.txt, fd 3 reserved
// (open bit, no file), fd 5 "/tmp/old (deleted)", fd 70 /bin/sh; fd 127 has
// a file but no open bit. Physical layout of their RAM (all read through
// the direct map, SKP_VA):
//   0x20000 mm_structs, VMAs, creds, files, fdtable, fs, nsproxy, mnt ns
//   0x21000 maple nodes (256-byte aligned)
//   0x22000 mounts, dentries, inodes, super blocks, fs types, files, names
//   0x23000 task 1's user page tables (8 pages)
//   0x2c000 user page B, 0x2d000 user page A (B follows A in user memory
//           only), 0x2e000 user text page
//   0x2f000 task 2's page tables (an empty PGD), 0x30000 the fd array
//   0x31000 a marker read through the 2 MiB user page (which maps phys 0)
//   0x32000-0x3e000 free for tests
//   0x3e000 nsproxy, namespaces, struct pids, signal_structs, groups,
//           cgroups; 0x3f000 the signal handlers (sighand_struct)
#ifndef KPT_SYNTHPROCS_H
#define KPT_SYNTHPROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkkallsyms.h"
#include "synthkernel.h"

struct btf;

#define SKP_RAM_END UINT64_C(0x40000)
#define SKP_MAX_TASKS 16
#define SKP_VA(pa) (SK_DIRECT + (pa))	// the direct map

// task_struct grows to 0x100 bytes: its members besides synthkernel.h's,
// some in the gaps between those.
#define SKP_T_SIZE 0x100
#define SKP_T_PTRACE 0x0c	// unsigned int
#define SKP_T_THREAD_PID 0x68
#define SKP_T_NVCSW 0x70
#define SKP_T_NIVCSW 0x78
#define SKP_T_MM 0x80
#define SKP_T_FILES 0x88
#define SKP_T_FS 0x90
#define SKP_T_NSPROXY 0x98
#define SKP_T_CRED 0xa0
#define SKP_T_REAL_CRED 0xa8
#define SKP_T_ATOMIC_FLAGS 0xb0
#define SKP_T_PENDING 0xb8	// struct sigpending: its signal at + 0x10
#define SKP_T_BLOCKED 0xd0	// sigset_t
#define SKP_T_SIGHAND 0xd8
#define SKP_T_CGROUPS 0xe0	// struct css_set *
#define SKP_KTHREAD_FLAGS 0x00200040u	// PF_KTHREAD | PF_FORKNOEXEC

// Objects (physical addresses).
#define SKP_MM(i) (UINT64_C(0x20000) + 0x100 * (i))	// 0: task 1's, 1: task 2's
#define SKP_VMA(i) (UINT64_C(0x20200) + 0x40 * (i))	// 0-4 task 1's, 5-8 task 2's
#define SKP_CRED(task) (UINT64_C(0x20800) + 0x80 * ((task) - 1))	// tasks 1 and 2
#define SKP_FILES UINT64_C(0x20c80)
#define SKP_FDT UINT64_C(0x20ca0)
#define SKP_FS UINT64_C(0x20cc0)
#define SKP_MNT_NS UINT64_C(0x20d20)
#define SKP_OPEN_FDS UINT64_C(0x20d80)
#define SKP_NODE(i) (UINT64_C(0x21000) + 0x100 * (i))	// maple nodes
#define SKP_MOUNT(i) (UINT64_C(0x22000) + 0x80 * (i))
#define SKP_DENTRY(i) (UINT64_C(0x22200) + 0x40 * (i))
#define SKP_INODE(i) (UINT64_C(0x22500) + 0x20 * (i))	// dentry i's inode
#define SKP_SB(i) (UINT64_C(0x22700) + 0x40 * (i))
#define SKP_FSTYPE(i) (UINT64_C(0x22800) + 0x10 * (i))
#define SKP_FILE(i) (UINT64_C(0x22900) + 0x40 * (i))
#define SKP_NAMES UINT64_C(0x22c00)
#define SKP_UPT UINT64_C(0x23000)
#define SKP_UPT_PAGES 8
#define SKP_UPAGE_A UINT64_C(0x2d000)	// A above B: the reader must translate each page
#define SKP_UPAGE_B UINT64_C(0x2c000)
#define SKP_UTEXT UINT64_C(0x2e000)
#define SKP_PGD2 UINT64_C(0x2f000)
#define SKP_FD_ARRAY UINT64_C(0x30000)
#define SKP_HUGE_MARK UINT64_C(0x31000)
#define SKP_FREE UINT64_C(0x32000)	// to 0x3e000
// What /proc/PID/status also reads: namespaces, struct pids, signals,
// groups, cgroups; the signal handlers on a page of their own.
#define SKP_NSPROXY UINT64_C(0x3e000)
#define SKP_NS(i) (UINT64_C(0x3e040) + 0x20 * (i))	// see skp_ns below
#define SKP_PID(task) (UINT64_C(0x3e100) + 0x40 * ((task) - 1))
#define SKP_SIGNAL(task) (UINT64_C(0x3e200) + 0x80 * ((task) - 1))
#define SKP_GROUPS UINT64_C(0x3e300)
#define SKP_CSS_SET(task) (UINT64_C(0x3e340) + 0x10 * ((task) - 1))
#define SKP_CGROUP(i) (UINT64_C(0x3e380) + 0x10 * (i))
#define SKP_KERNFS(i) (UINT64_C(0x3e400) + 0x20 * (i))
#define SKP_SIGHAND UINT64_C(0x3f000)
// In the data page (image addresses) and kernel text.
#define SKP_INIT_CRED (SK_DATA + 0x400)
#define SKP_VMOPS (SK_DATA + 0x480)		// special_mapping_vmops
#define SKP_VDSO_MAPPING (SK_DATA + 0x4a0)	// a struct vm_special_mapping
#define SKP_VDSO_NAME (SK_DATA + 0x4c0)		// "[vdso]"
#define SKP_SPECIAL_NAME (SK_TEXT + 0x300)	// special_mapping_name()

// Which dentry (and inode), file, mount and super block is which.
enum { SKP_D_ROOT, SKP_D_BIN, SKP_D_SH, SKP_D_PROC, SKP_D_TMP, SKP_D_PROCROOT, SKP_D_TMPROOT,
       SKP_D_LOG, SKP_D_OLD, SKP_D_PIPE, SKP_D_MNT, SKP_ND };
enum { SKP_F_PIPE, SKP_F_LOG, SKP_F_OLD, SKP_F_SH, SKP_NF };
enum { SKP_M_ROOT, SKP_M_PROC, SKP_M_TMP, SKP_M_MNT, SKP_NM };
enum { SKP_SB_EXT4, SKP_SB_PROC, SKP_SB_TMPFS, SKP_SB_PIPEFS, SKP_NSB };

// Struct offsets of the BTF.
#define SKP_MM_MT 0x00		// struct maple_tree: ma_root at + 8
#define SKP_MT_ROOT 0x08
#define SKP_MM_PGD 0x10
#define SKP_MM_MAP_COUNT 0x18	// int
#define SKP_MM_START_BRK 0x20
#define SKP_MM_BRK 0x28
#define SKP_MM_START_STACK 0x30
#define SKP_MM_ARG_START 0x38
#define SKP_MM_ARG_END 0x40
#define SKP_MM_ENV_START 0x48
#define SKP_MM_ENV_END 0x50
#define SKP_MM_EXE_FILE 0x58
// The memory sizes of /proc/PID/status (kp_task_mem): unsigned longs of
// pages, then rss_stat as up to 6.1 (struct mm_rss_stat, count[4]).
#define SKP_MM_TOTAL_VM 0x60
#define SKP_MM_LOCKED_VM 0x68
#define SKP_MM_PINNED_VM 0x70
#define SKP_MM_DATA_VM 0x78
#define SKP_MM_EXEC_VM 0x80
#define SKP_MM_STACK_VM 0x88
#define SKP_MM_HIWATER_RSS 0x90
#define SKP_MM_HIWATER_VM 0x98
#define SKP_MM_START_CODE 0xa0
#define SKP_MM_END_CODE 0xa8
#define SKP_MM_RSS_STAT 0xb0	// long count[MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES]
#define SKP_MM_PGTABLES 0xd0	// bytes
#define SKP_MM_SIZE 0x100
#define SKP_VMA_START 0x00
#define SKP_VMA_END 0x08
#define SKP_VMA_FLAGS 0x10	// __vm_flags
#define SKP_VMA_PGOFF 0x18
#define SKP_VMA_FILE 0x20
#define SKP_VMA_OPS 0x28
#define SKP_VMA_PRIVATE 0x30
// struct maple_range_64 (also the leaves) and maple_arange_64, 256 bytes.
#define SKP_R64_PIVOT 0x08	// [15]
#define SKP_R64_SLOT 0x80	// [16]
#define SKP_A64_PIVOT 0x08	// [9]
#define SKP_A64_SLOT 0x50	// [10]
#define SKP_A64_GAP 0xa0	// [10]
#define SKP_A64_META 0xf0
// An encoded node (enum maple_type in bits 3..6, MAPLE_ENODE_NULL bit 2);
// the tree's ma_root also has MAPLE_ROOT_NODE (bit 1).
#define SKP_MAPLE_LEAF_64 1u
#define SKP_MAPLE_RANGE_64 2u
#define SKP_MAPLE_ARANGE_64 3u
#define SKP_ENODE(va, type) ((va) | (uint64_t)(type) << 3 | 4)
#define SKP_MAPLE_ROOT(enode) ((enode) | 2)
#define SKP_CRED_USAGE 0x00	// atomic_t
#define SKP_CRED_UID 0x04
#define SKP_CRED_GID 0x08
#define SKP_CRED_EUID 0x14
#define SKP_CRED_FSUID 0x1c
#define SKP_CRED_CAPS 0x28	// inheritable, permitted, effective, bset, ambient
#define SKP_CRED_GROUPS 0x50
#define SKP_CRED_USER_NS 0x58
#define SKP_SIGNAL_SHARED 0x20	// shared_pending.signal
#define SKP_SIGNAL_PIDS 0x28	// struct pid *pids[PIDTYPE_MAX]
#define SKP_PID_LEVEL 0x04
#define SKP_PID_NUMBERS 0x10	// struct upid { int nr; struct pid_namespace *ns; }[]
#define SKP_NS_INUM 0x10	// ns_common.inum in each namespace struct
#define SKP_MNT_NS_NS 0x20	// mnt_namespace.ns
#define SKP_FDT_MAX 0x00
#define SKP_FDT_FD 0x08
#define SKP_FDT_OPEN 0x10
#define SKP_INODE_MODE 0x00	// umode_t
#define SKP_INODE_UID 0x04
#define SKP_INODE_INO 0x08
#define SKP_MOUNT_MNT 0x10	// struct vfsmount
#define SKP_MOUNT_LIST 0x48	// mnt_list
#define SKP_MOUNT_NODE 0x58	// mnt_node (rbtree form)
#define SKP_RB_RIGHT 0x08
#define SKP_RB_LEFT 0x10
#define SKP_NS_COUNT_LIST 0x10	// list form: list at 0, count 'mounts' at 0x10
#define SKP_NS_COUNT_RB 0x08	// rbtree form: 'mounts' (rb_root) at 0, nr_mounts

// What task 1's memory holds. The argument and environment areas follow
// each other on its stack, the arguments crossing from page A into page B.
#define SKP_U_TEXT UINT64_C(0x400000)
#define SKP_U_PAGE_A UINT64_C(0x7ffffffde000)
#define SKP_U_PAGE_B UINT64_C(0x7ffffffdf000)
#define SKP_U_NEVER UINT64_C(0x7ffffffe0000)	// PTE 0: never touched
#define SKP_U_SWAPPED UINT64_C(0x7ffffffe1000)	// PTE SKP_SWAP_PTE
#define SKP_SWAP_PTE UINT64_C(0x3a4b5c00)	// not present, not 0: a swap entry
#define SKP_U_HUGE UINT64_C(0x7fffffa00000)	// 2 MiB -> physical 0
#define SKP_U_TEXT_BYTES "\x7f" "ELF synthetic text"
#define SKP_HUGE_BYTES "read through the huge page"
// Byte i of pages A and B, before the areas were written over them.
#define SKP_PAGE_A_BYTE(i) ((uint8_t)('A' + (i) % 26))
#define SKP_PAGE_B_BYTE(i) ((uint8_t)('a' + (i) % 26))
#define SKP_ARG_START (SKP_U_PAGE_A + 0xff0)
#define SKP_ARGS "/bin/sh\0-c\0echo hi"		// sizeof: with the last NUL
#define SKP_ENV "HOME=/\0TERM=linux"
#define SKP_ARG_END (SKP_ARG_START + sizeof(SKP_ARGS))
#define SKP_ENV_END (SKP_ARG_END + sizeof(SKP_ENV))

// The symbols it adds: init_cred, special_mapping_name (NULL-ended).
extern const struct kp_mkkallsyms_sym skp_symbols[];

// The namespaces (SKP_NS(i)) and their inode numbers.
enum { SKP_NS_UTS, SKP_NS_USER, SKP_NS_PID, SKP_NS_PID_CHILD, SKP_NS_CGROUP, SKP_NNS };
extern const uint32_t skp_ns_inum[SKP_NNS];
// Task 1's mm_struct sizes, in pages (rss: MM_FILEPAGES.. order); task 2's
// mm has total_vm 100, 20 file pages and an anonymous count of -3 (a
// per-thread delta not yet folded in), which /proc shows as 0.
struct skp_mm_sizes {
	uint64_t total_vm, locked_vm, pinned_vm, data_vm, exec_vm, stack_vm, hiwater_rss, hiwater_vm;
	uint64_t start_code, end_code;
	int64_t rss[4];
	uint64_t pgtables;
};
extern const struct skp_mm_sizes skp_mm_sizes;
#define SKP_MNT_NS_INUM 4026531841u

// The types of task_struct's and signal_struct's members, made before
// synthkernel's structs (whose fields must follow them).
struct skp_task_ptrs {
	int t_uint, t_ulong;
	int mm, files, fs, nsproxy, cred, pid, sighand, css_set, sigset, sigpending, pids;
};
void skp_btf_task_ptrs(struct btf *b, int t_int, int t_uint, int t_ulong, struct skp_task_ptrs *ret);
void skp_btf_task_fields(struct btf *b, const struct skp_task_ptrs *p);
void skp_btf_signal_fields(struct btf *b, const struct skp_task_ptrs *p);
#define SKP_SIGNAL_SIZE 0x48
// The synthetic BTF's base types.
struct skp_btf_base {
	int t_int, t_uint, t_char, t_ulong, t_long, list_head;
};
// sys: the system's members of inode and super_block too (synthsys.h).
void skp_btf_types(struct btf *b, enum sk_procs procs, bool sys, const struct skp_btf_base *t);
// Writes the processes into the RAM m (after synthkernel's tasks).
void skp_write(uint8_t *m, const struct sk_opts *o);
// n bytes at task 1's user address va, in the RAM m (its 4 KiB pages:
// the text page, A and B; aborts elsewhere).
void skp_uput(uint8_t *m, uint64_t va, const void *bytes, size_t n);

#endif
