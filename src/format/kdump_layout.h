// SPDX-License-Identifier: MIT
// The kdump-compressed headers' layout (makedumpfile diskdump_mod.h), for
// 64-bit targets: read by kdump.c, written by kpeek snapshot
// (core/snapshot_kdump.c). Fields are the target's byte order (little-endian
// on x86-64 and arm64).
#ifndef KP_FORMAT_KDUMP_LAYOUT_H
#define KP_FORMAT_KDUMP_LAYOUT_H

#define KDUMP_SIGNATURE "KDUMP   "
#define DISKDUMP_SIGNATURE "DISKDUMP"

// disk_dump_header offsets for 64-bit targets (utsname is 6 x 65 bytes; the
// timeval after it is 8-aligned).
#define DH_VERSION 8
#define DH_UTSNAME 12		// struct new_utsname: sysname first
#define DH_MACHINE (DH_UTSNAME + 4 * 65)	// utsname.machine
#define DH_STATUS 424
#define DH_BLOCK_SIZE 428
#define DH_SUB_HDR_SIZE 432
#define DH_BITMAP_BLOCKS 436
#define DH_MAX_MAPNR 440
#define DH_NR_CPUS 460
#define DH_SIZE 464

// kdump_sub_header offsets (64-bit); the header version says which exist.
#define SH_PHYS_BASE 0
#define SH_DUMP_LEVEL 8		// version >= 1
#define SH_SPLIT 12		// version >= 2
#define SH_START_PFN 16
#define SH_END_PFN 24
#define SH_OFFSET_VMCOREINFO 32	// version >= 3
#define SH_SIZE_VMCOREINFO 40
#define SH_OFFSET_NOTE 48	// version >= 4
#define SH_SIZE_NOTE 56
#define SH_START_PFN_64 80	// version >= 6
#define SH_END_PFN_64 88
#define SH_MAX_MAPNR_64 96
#define SH_SIZE 104

#define DH_HEADER_VERSION 6	// the sub-header with 64-bit pfns
#define DH_TIMESTAMP 408	// struct timeval: tv_sec, tv_usec
#define DH_CURRENT_CPU 456

#endif
