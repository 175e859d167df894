// SPDX-License-Identifier: MIT
// VMCOREINFO: the "KEY=VALUE\n" note a kernel leaves for dump tools.
#ifndef KP_VMCOREINFO_H
#define KP_VMCOREINFO_H

#include <kpeek/kpeek.h>

struct kp_vmcoreinfo;

struct kp_error *kp_vmcoreinfo_parse(const char *text, size_t len,
				     struct kp_vmcoreinfo **ret);
void kp_vmcoreinfo_destroy(struct kp_vmcoreinfo *vi);
// Raw value of KEY ("OSRELEASE", "SYMBOL(init_task)", ...), NULL if absent.
const char *kp_vmcoreinfo_get(const struct kp_vmcoreinfo *vi, const char *key);
// SYMBOL(name)=hex
bool kp_vmcoreinfo_symbol(const struct kp_vmcoreinfo *vi, const char *name, uint64_t *ret);
// NUMBER(name)=decimal (or 0x hex)
bool kp_vmcoreinfo_number(const struct kp_vmcoreinfo *vi, const char *name, int64_t *ret);
// OFFSET(type.member)=decimal
bool kp_vmcoreinfo_offset(const struct kp_vmcoreinfo *vi, const char *type,
			  const char *member, uint64_t *ret);
// SIZE(type)=decimal
bool kp_vmcoreinfo_size(const struct kp_vmcoreinfo *vi, const char *type, uint64_t *ret);
// LENGTH(name)=decimal
bool kp_vmcoreinfo_length(const struct kp_vmcoreinfo *vi, const char *name, uint64_t *ret);
// KERNELOFFSET=hex
bool kp_vmcoreinfo_kerneloffset(const struct kp_vmcoreinfo *vi, uint64_t *ret);
// CRASHTIME (seconds since the epoch, written by the crash kernel): 0 and
// *ret set; -1 when absent; 1 when present but not a time (not a decimal
// number, or outside 1970..9999).
int kp_vmcoreinfo_crash_time(const struct kp_vmcoreinfo *vi, int64_t *ret);
// Entry i (0-based) as key/value; false past the end.
bool kp_vmcoreinfo_entry(const struct kp_vmcoreinfo *vi, size_t i, const char **key_ret,
			 const char **value_ret);

#endif
