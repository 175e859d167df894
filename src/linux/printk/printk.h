// SPDX-License-Identifier: MIT
// The lockless printk ring buffer (printk.c, 5.10+): its layout, a pure
// decoder of its arrays, and the iterator over a kernel's.
#ifndef KP_LINUX_PRINTK_H
#define KP_LINUX_PRINTK_H

#include <kpeek/kpeek.h>

// Layout of the lockless ring buffer (kernel/printk/printk_ringbuffer.h).
struct kp_lx_prb_layout {
	// struct printk_ringbuffer
	uint64_t desc_ring;		// struct prb_desc_ring
	uint64_t text_data_ring;	// struct prb_data_ring
	// struct prb_desc_ring
	uint64_t count_bits, descs, infos, head_id, tail_id;
	// struct prb_data_ring
	uint64_t size_bits, data;
	// struct prb_desc
	uint64_t desc_size, state_var, text_begin, text_next;
	// struct printk_info
	uint64_t info_size, seq, ts_nsec, text_len, caller_id;
	uint64_t facility;		// u8
	uint64_t flags_byte;		// byte holding flags:5 and level:3
	unsigned flags_shift, level_shift;
};

// The ring buffer's arrays copied out of memory.
// Which pages of an array copied from memory could not be read (a dump
// without them): byte o of the array is lost if
// pages[(skew + o) / KP_LX_PRB_PAGE] is nonzero; pages NULL: all read.
#define KP_LX_PRB_PAGE 4096
struct kp_lx_prb_lost {
	const uint8_t *pages;
	uint64_t skew;			// the array's address % KP_LX_PRB_PAGE
};

struct kp_lx_prb_image {
	unsigned count_bits;		// descs: 1 << count_bits
	const uint8_t *descs;		// (1 << count_bits) * desc_size bytes
	const uint8_t *infos;		// (1 << count_bits) * info_size bytes
	uint64_t head_id, tail_id;
	unsigned size_bits;		// text data: 1 << size_bits
	const uint8_t *data;
	// Pages of the arrays the source lacks (kp_lx_prb_lost; zero: all read).
	struct kp_lx_prb_lost descs_lost, infos_lost, data_lost;
};

// What a decode saw.
struct kp_lx_prb_stats {
	uint64_t descs;			// descriptors from tail to head
	uint64_t records;		// records given to fn
	uint64_t bad_ids;		// descriptors that do not hold their own id
	uint64_t first_bad;		// the id expected at the first of them
	uint64_t unread;		// records on pages the source lacks
	uint64_t first_unread;		// the id of the first of them
};

// Whether a layout's sizes and offsets fit together (printk_layout.c).
bool kp_lx_prb_layout_ok(const struct kp_lx_prb_layout *l);
struct kp_error *kp_lx_prb_layout(struct kp_kernel *kernel, struct kp_lx_prb_layout *ret);
typedef struct kp_error *kp_lx_prb_fn(const struct kp_printk_record *rec, void *arg);
// Decodes the records of an image, oldest first; pure (no memory reads).
struct kp_error *kp_lx_prb_decode(const struct kp_lx_prb_layout *l,
				  const struct kp_lx_prb_image *img, kp_lx_prb_fn *fn,
				  void *arg, struct kp_lx_prb_stats *stats);
// kp_printk_iter_create() over the ring buffer at prb (struct
// printk_ringbuffer) with an explicit layout.
struct kp_error *kp_lx_printk_iter_create(struct kp_kernel *kernel,
					  const struct kp_lx_prb_layout *l, uint64_t prb,
					  struct kp_printk_iter **ret);

#endif
