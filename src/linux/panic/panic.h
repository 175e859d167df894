// SPDX-License-Identifier: MIT
// Why the kernel stopped (panic.c), the registers a crash saved per CPU
// (crash_notes.c), and the kernel's taint letters (taint.c).
#ifndef KP_LINUX_PANIC_H
#define KP_LINUX_PANIC_H

#include <kpeek/kpeek.h>

// The NT_PRSTATUS descriptor (registers) of per_cpu(crash_notes, cpu), copied
// to buf (cap bytes); false where the crash did not save one (QEMU dumps,
// live kernels, a CPU that was not stopped).
#define KP_LX_CRASH_NOTE_MAX 1024	// NT_PRSTATUS: 336 bytes on x86-64, 392 on arm64
bool kp_lx_crash_note(struct kp_kernel *kernel, uint64_t cpu, uint8_t *buf, size_t cap,
		      size_t *len_ret);

#define KP_LX_MAX_TAINTS 64	// bits of the kernel's unsigned long taint mask

struct kp_lx_taint_table {
	unsigned count;			// TAINT_FLAGS_COUNT
	char c_true[KP_LX_MAX_TAINTS];	// letter when the bit is set
	char c_false[KP_LX_MAX_TAINTS];	// when it is not (usually ' ')
	bool module[KP_LX_MAX_TAINTS];	// shown for modules (module_flags_taint())
};
// taint_flags[] (taint.c). KP_ERR_NOT_FOUND without the table's symbol or
// types; the read's error, prefixed "taint_flags unreadable", otherwise.
struct kp_error *kp_lx_taint_table(struct kp_kernel *kernel, struct kp_lx_taint_table *ret);

// Whether a record (len bytes) starts a crash: "BUG: ", "Oops", "kernel BUG
// at ", "Unable to handle kernel ", ... (panic.c).
bool kp_lx_is_oops_start(const char *s, size_t n);

// The kind of a crash from its panic message and the record that led to it
// ("" where there is none) (signature.c).
enum kp_panic_kind kp_lx_panic_kind(const char *message, const char *oops, bool panicked);

// The signature's title rules applied to s (doc/signature.md), and its
// hash of kind, title and frames into sig->hash (signature.c).
void kp_lx_signature_title(const char *s, char *out, size_t size);
void kp_lx_signature_hash(struct kp_signature *sig);
// A frame as the signature sees it: its function (no suffix, "?" if
// unnamed), entered by an interrupt or exception, the user-mode end.
struct kp_lx_sig_frame {
	char name[128];
	bool entered, user;
};
// The signature's frames (doc/signature.md) of stack frames f[0, n),
// innermost first, into sig->frames (sig->kind set); blocked: a blocked
// task's stack (hung task).
void kp_lx_signature_frames(const struct kp_lx_sig_frame *f, size_t n, bool blocked, struct kp_signature *sig);

#endif
