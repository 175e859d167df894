// SPDX-License-Identifier: MIT
// VMCOREINFO: the "KEY=VALUE\n" text a kernel leaves in its crash notes.
//
// Formats (include/linux/crash_core.h and kernel/crash_core.c, stable since
// 4.x; arch/x86/kernel/machine_kexec_64.c for the x86 extras):
//   OSRELEASE=%s  PAGESIZE=%ld  BUILD-ID=%20phN (hex)  CRASHTIME=%lld
//   SYMBOL(name)=%lx          runtime (KASLR-relocated) address, hex, no 0x
//   SIZE(name)=%lu            OFFSET(type.member)=%lu    LENGTH(name)=%lu
//   NUMBER(name)=%ld          signed decimal (e.g. PAGE_BUDDY_MAPCOUNT_VALUE is
//                             negative); a few arches print 0x%llx instead
//   KERNELOFFSET=%lx          hex, no 0x (x86 since 3.15)
//   CONFIG_FOO=y
// The note's descriptor is padded with NULs to a 4-byte boundary, and QEMU's
// vmcoreinfo device or kdump headers may hand us the whole reserved page, so
// the text ends at the first NUL; the last line may lack its newline.
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/vmcoreinfo.h"
#include "util/error.h"

// The kernel reserves one page (VMCOREINFO_BYTES = PAGE_SIZE); allow plenty
// more, but not unbounded, since the size comes from a hostile dump.
#define MAX_VMCOREINFO_SIZE (1u << 20)
#define MAX_ENTRIES 65536

struct entry {
	const char *key;
	const char *value;
};

struct kp_vmcoreinfo {
	char *text;		// owned copy, '=' and '\n' replaced by NULs
	struct entry *entries;
	size_t count;
};

static bool is_key_char(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '=';
}

static bool is_value_char(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\t';
}

// Line lineno, [line, eol), is KEY=VALUE: printable key, printable value
// (tabs allowed); *eq_ret is its '='. text is where the copy starts, for
// offsets.
static struct kp_error *check_line(const char *text, char *line, char *eol, size_t lineno,
				   char **eq_ret)
{
	char *eq = line;
	while (eq < eol && is_key_char(*eq))
		eq++;
	if (eq == eol || *eq != '=' || eq == line) {
		unsigned char bad = eq < eol ? *eq : 0;
		return kp_error_create(KP_ERR_FORMAT,
				       "VMCOREINFO line %zu (offset %zu): not KEY=VALUE text%s (byte 0x%02x)",
				       lineno, (size_t)(line - text),
				       eq == line ? ", empty key" : "", bad);
	}
	for (char *v = eq + 1; v < eol; v++) {
		if (!is_value_char(*v))
			return kp_error_create(KP_ERR_FORMAT,
					       "VMCOREINFO line %zu (offset %zu): binary byte 0x%02x in the value of %.*s",
					       lineno, (size_t)(v - text),
					       (unsigned char)*v, (int)(eq - line), line);
	}
	*eq_ret = eq;
	return NULL;
}

// Splits vi->text (len bytes) into entries, in place.
static struct kp_error *split_entries(struct kp_vmcoreinfo *vi, size_t len)
{
	char *p = vi->text, *end = vi->text + len;
	size_t lineno = 0;
	while (p < end) {
		lineno++;
		char *eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		char *line = p;
		p = eol < end ? eol + 1 : end;
		*eol = '\0';
		if (eol > line && eol[-1] == '\r')
			*--eol = '\0';
		if (eol == line)
			continue;	// blank lines are harmless
		char *eq = NULL;	// gcc -O2 cannot see check_line() sets it
		struct kp_error *err = check_line(vi->text, line, eol, lineno, &eq);
		if (err)
			return err;
		if (vi->count >= MAX_ENTRIES)
			return kp_error_create(KP_ERR_FORMAT,
					       "VMCOREINFO line %zu: more than %u entries",
					       lineno, MAX_ENTRIES);
		*eq = '\0';
		vi->entries[vi->count].key = line;
		vi->entries[vi->count].value = eq + 1;
		vi->count++;
	}
	return NULL;
}

struct kp_error *kp_vmcoreinfo_parse(const char *text, size_t len,
				     struct kp_vmcoreinfo **ret)
{
	if (len > MAX_VMCOREINFO_SIZE)
		return kp_error_create(KP_ERR_FORMAT,
				       "VMCOREINFO is %zu bytes (more than %u)", len,
				       MAX_VMCOREINFO_SIZE);
	const char *nul = memchr(text, '\0', len);
	if (nul)
		len = nul - text;

	struct kp_vmcoreinfo *vi = calloc(1, sizeof(*vi));
	if (!vi)
		return &kp_enomem;
	vi->text = malloc(len + 1);
	size_t lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	vi->entries = calloc(lines, sizeof(*vi->entries));
	if (!vi->text || !vi->entries) {
		kp_vmcoreinfo_destroy(vi);
		return &kp_enomem;
	}
	memcpy(vi->text, text, len);
	vi->text[len] = '\0';
	struct kp_error *err = split_entries(vi, len);
	if (err) {
		kp_vmcoreinfo_destroy(vi);
		return err;
	}
	*ret = vi;
	return NULL;
}

void kp_vmcoreinfo_destroy(struct kp_vmcoreinfo *vi)
{
	if (!vi)
		return;
	free(vi->entries);
	free(vi->text);
	free(vi);
}

// Finds the first entry whose key is prefix + a [+ sep + b] + ")" (or just
// prefix when a is NULL), without building the key string.
static const char *find(const struct kp_vmcoreinfo *vi, const char *prefix,
			const char *a, char sep, const char *b)
{
	if (!vi)
		return NULL;
	size_t plen = strlen(prefix);
	size_t alen = a ? strlen(a) : 0, blen = b ? strlen(b) : 0;
	for (size_t i = 0; i < vi->count; i++) {
		const char *k = vi->entries[i].key;
		if (strncmp(k, prefix, plen) != 0)
			continue;
		k += plen;
		if (a) {
			if (strncmp(k, a, alen) != 0)
				continue;
			k += alen;
			if (b) {
				if (*k != sep || strncmp(k + 1, b, blen) != 0)
					continue;
				k += 1 + blen;
			}
			if (*k != ')')
				continue;
			k++;
		}
		if (*k == '\0')
			return vi->entries[i].value;
	}
	return NULL;
}

const char *kp_vmcoreinfo_get(const struct kp_vmcoreinfo *vi, const char *key)
{
	return find(vi, key, NULL, 0, NULL);
}

// Whole-string unsigned parse; base 16 or 10 (0x accepted in both).
static bool parse_u64(const char *s, int base, uint64_t *ret)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		base = 16;
	}
	if (!*s)
		return false;
	uint64_t v = 0;
	for (; *s; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*ret = v;
	return true;
}

static bool get_u64(const char *value, int base, uint64_t *ret)
{
	return value && parse_u64(value, base, ret);
}

bool kp_vmcoreinfo_symbol(const struct kp_vmcoreinfo *vi, const char *name, uint64_t *ret)
{
	return get_u64(find(vi, "SYMBOL(", name, 0, NULL), 16, ret);
}

bool kp_vmcoreinfo_number(const struct kp_vmcoreinfo *vi, const char *name, int64_t *ret)
{
	const char *v = find(vi, "NUMBER(", name, 0, NULL);
	if (!v)
		return false;
	bool neg = *v == '-';
	uint64_t u;
	if (!parse_u64(v + neg, 10, &u))
		return false;
	if (neg) {
		if (u > (uint64_t)INT64_MAX + 1)
			return false;
		*ret = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
	} else {
		// "0x%llx" numbers (arm64 KERNELPACMASK, ...) use all 64 bits:
		// keep the bit pattern rather than refusing them.
		*ret = (int64_t)u;
	}
	return true;
}

bool kp_vmcoreinfo_offset(const struct kp_vmcoreinfo *vi, const char *type,
			  const char *member, uint64_t *ret)
{
	return get_u64(find(vi, "OFFSET(", type, '.', member), 10, ret);
}

bool kp_vmcoreinfo_size(const struct kp_vmcoreinfo *vi, const char *type, uint64_t *ret)
{
	return get_u64(find(vi, "SIZE(", type, 0, NULL), 10, ret);
}

bool kp_vmcoreinfo_length(const struct kp_vmcoreinfo *vi, const char *name, uint64_t *ret)
{
	return get_u64(find(vi, "LENGTH(", name, 0, NULL), 10, ret);
}

bool kp_vmcoreinfo_kerneloffset(const struct kp_vmcoreinfo *vi, uint64_t *ret)
{
	return get_u64(find(vi, "KERNELOFFSET", NULL, 0, NULL), 16, ret);
}

bool kp_vmcoreinfo_entry(const struct kp_vmcoreinfo *vi, size_t i, const char **key_ret,
			 const char **value_ret)
{
	if (!vi || i >= vi->count)
		return false;
	*key_ret = vi->entries[i].key;
	*value_ret = vi->entries[i].value;
	return true;
}

// 9999-12-31 23:59:59 UTC: the last second a "%Y" of four digits shows.
#define MAX_CRASH_TIME 253402300799LL

int kp_vmcoreinfo_crash_time(const struct kp_vmcoreinfo *vi, int64_t *ret)
{
	// crash_save_vmcoreinfo() writes ktime_get_real_seconds() with "%lld":
	// an overflowing or far-future number is not a time, and saying so beats
	// a saturated or wrapped date.
	const char *ct = kp_vmcoreinfo_get(vi, "CRASHTIME");
	if (!ct)
		return -1;
	char *end;
	errno = 0;
	long long t = strtoll(ct, &end, 10);
	if (end == ct || *end || errno == ERANGE || t < 0 || t > MAX_CRASH_TIME)
		return 1;
	*ret = t;
	return 0;
}
