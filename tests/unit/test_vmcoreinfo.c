// SPDX-License-Identifier: MIT
// VMCOREINFO parsing: every key kind the 6.1 x86-64 kernel writes, NUL
// padding, a missing final newline, and garbage.
#include "test.h"
#include "format/vmcoreinfo.h"

// As the Debian 6.1 kernel writes it (abridged), KASLR on.
static const char sample[] =
	"OSRELEASE=6.1.0-57-amd64\n"
	"BUILD-ID=0c5b1ba2d8ac2a4d7b9e0e2c4f3a1b2c3d4e5f60\n"
	"PAGESIZE=4096\n"
	"SYMBOL(init_uts_ns)=ffffffff9a2147e0\n"
	"OFFSET(uts_namespace.name)=0\n"
	"SYMBOL(node_online_map)=ffffffff9a1a2b28\n"
	"SYMBOL(swapper_pg_dir)=ffffffff99a0a000\n"
	"SYMBOL(_stext)=ffffffff98a00000\n"
	"SYMBOL(kallsyms_names)=ffffffff99a6a1d8\n"
	"SYMBOL(kallsyms_num_syms)=ffffffff99a6a1d0\n"
	"SIZE(page)=64\n"
	"SIZE(printk_ringbuffer)=80\n"
	"OFFSET(page.flags)=0\n"
	"OFFSET(printk_ringbuffer.desc_ring)=0\n"
	"OFFSET(prb_desc_ring.count_bits)=0\n"
	"OFFSET(printk_info.caller_id)=44\n"
	"LENGTH(free_area)=11\n"
	"LENGTH(zone.free_area)=11\n"
	"NUMBER(NR_FREE_PAGES)=0\n"
	"NUMBER(PG_lru)=4\n"
	"NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)=-129\n"
	"NUMBER(phys_base)=-1090519040\n"
	"NUMBER(KERNELPACMASK)=0xff80000000000000\n"
	"NUMBER(pgtable_l5_enabled)=1\n"
	"KERNELOFFSET=17a00000\n"
	"NUMBER(KERNEL_IMAGE_SIZE)=1073741824\n"
	"CONFIG_KALLSYMS=y\n"
	"CRASHTIME=1733216400\n";

// CRASHTIME that is not a time is said to be so, never saturated or wrapped.
TEST(crash_time_out_of_range)
{
	static const char *const bad[] = {
		"CRASHTIME=99999999999999999999999\n", "CRASHTIME=-5\n", "CRASHTIME=12x\n",
		"CRASHTIME=\n", "CRASHTIME=253402300800\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kp_vmcoreinfo *vi = NULL;
		CHECK_OK(kp_vmcoreinfo_parse(bad[i], strlen(bad[i]), &vi));
		int64_t t = 42;
		CHECK(kp_vmcoreinfo_crash_time(vi, &t) == 1);
		CHECK_U64(t, 42);
		kp_vmcoreinfo_destroy(vi);
	}
	struct kp_vmcoreinfo *vi = NULL;
	CHECK_OK(kp_vmcoreinfo_parse("CRASHTIME=253402300799\n", 23, &vi));
	int64_t t = 0;
	CHECK(kp_vmcoreinfo_crash_time(vi, &t) == 0);
	CHECK_U64(t, 253402300799);
	kp_vmcoreinfo_destroy(vi);
	CHECK_OK(kp_vmcoreinfo_parse("OSRELEASE=6.1\n", 14, &vi));
	CHECK(kp_vmcoreinfo_crash_time(vi, &t) == -1);
	kp_vmcoreinfo_destroy(vi);
}

TEST(all_key_kinds)
{
	struct kp_vmcoreinfo *vi = NULL;
	CHECK_OK(kp_vmcoreinfo_parse(sample, strlen(sample), &vi));
	if (!vi)
		return;
	CHECK_STR(kp_vmcoreinfo_get(vi, "OSRELEASE"), "6.1.0-57-amd64");
	CHECK_STR(kp_vmcoreinfo_get(vi, "BUILD-ID"), "0c5b1ba2d8ac2a4d7b9e0e2c4f3a1b2c3d4e5f60");
	CHECK_STR(kp_vmcoreinfo_get(vi, "PAGESIZE"), "4096");
	CHECK_STR(kp_vmcoreinfo_get(vi, "CRASHTIME"), "1733216400");
	int64_t t = 0;
	CHECK(kp_vmcoreinfo_crash_time(vi, &t) == 0);
	CHECK_U64(t, 1733216400);
	CHECK_STR(kp_vmcoreinfo_get(vi, "CONFIG_KALLSYMS"), "y");
	CHECK_STR(kp_vmcoreinfo_get(vi, "SYMBOL(_stext)"), "ffffffff98a00000");
	CHECK(kp_vmcoreinfo_get(vi, "SYMBOL") == NULL);
	CHECK(kp_vmcoreinfo_get(vi, "OSRELEAS") == NULL);

	uint64_t u = 0;
	CHECK(kp_vmcoreinfo_symbol(vi, "swapper_pg_dir", &u));
	CHECK_U64(u, 0xffffffff99a0a000);
	CHECK(kp_vmcoreinfo_symbol(vi, "kallsyms_num_syms", &u));
	CHECK_U64(u, 0xffffffff99a6a1d0);
	CHECK(!kp_vmcoreinfo_symbol(vi, "kallsyms", &u));
	CHECK(!kp_vmcoreinfo_symbol(vi, "kallsyms_names_", &u));
	CHECK(kp_vmcoreinfo_size(vi, "page", &u));
	CHECK_U64(u, 64);
	CHECK(kp_vmcoreinfo_offset(vi, "printk_info", "caller_id", &u));
	CHECK_U64(u, 44);
	CHECK(kp_vmcoreinfo_offset(vi, "uts_namespace", "name", &u));
	CHECK_U64(u, 0);
	CHECK(!kp_vmcoreinfo_offset(vi, "printk_info", "caller", &u));
	CHECK(!kp_vmcoreinfo_offset(vi, "printk", "info.caller_id", &u));
	CHECK(!kp_vmcoreinfo_offset(vi, "printk_info.caller_id", "", &u));
	CHECK(kp_vmcoreinfo_length(vi, "zone.free_area", &u));
	CHECK_U64(u, 11);
	CHECK(kp_vmcoreinfo_kerneloffset(vi, &u));
	CHECK_U64(u, 0x17a00000);

	int64_t s = 0;
	CHECK(kp_vmcoreinfo_number(vi, "PAGE_BUDDY_MAPCOUNT_VALUE", &s));
	CHECK_U64(s, (uint64_t)-129);
	CHECK(kp_vmcoreinfo_number(vi, "phys_base", &s));
	CHECK(s == -1090519040);
	CHECK(kp_vmcoreinfo_number(vi, "KERNELPACMASK", &s));
	CHECK_U64(s, 0xff80000000000000);
	CHECK(kp_vmcoreinfo_number(vi, "pgtable_l5_enabled", &s));
	CHECK(s == 1);
	CHECK(!kp_vmcoreinfo_number(vi, "PG_lr", &s));

	const char *k, *v;
	size_t count = 0;
	while (kp_vmcoreinfo_entry(vi, count, &k, &v))
		count++;
	CHECK_U64(count, 28);
	CHECK(kp_vmcoreinfo_entry(vi, 0, &k, &v));
	CHECK_STR(k, "OSRELEASE");
	CHECK(!kp_vmcoreinfo_entry(vi, 28, &k, &v));
	kp_vmcoreinfo_destroy(vi);
}

TEST(missing_newline_nul_padding_blank_lines)
{
	// The note descriptor is NUL-padded; the last line lacks its newline.
	char buf[64] = "PAGESIZE=4096\n\nKERNELOFFSET=0\r\nOSRELEASE=6.1.0";
	struct kp_vmcoreinfo *vi = NULL;
	CHECK_OK(kp_vmcoreinfo_parse(buf, sizeof(buf), &vi));
	if (!vi)
		return;
	CHECK_STR(kp_vmcoreinfo_get(vi, "OSRELEASE"), "6.1.0");
	uint64_t u = 1;
	CHECK(kp_vmcoreinfo_kerneloffset(vi, &u));
	CHECK_U64(u, 0);
	kp_vmcoreinfo_destroy(vi);

	// Not NUL-terminated at all, and empty.
	CHECK_OK(kp_vmcoreinfo_parse("A=1", 3, &vi));
	CHECK_STR(kp_vmcoreinfo_get(vi, "A"), "1");
	kp_vmcoreinfo_destroy(vi);
	vi = NULL;
	CHECK_OK(kp_vmcoreinfo_parse("", 0, &vi));
	CHECK(vi && !kp_vmcoreinfo_get(vi, "A"));
	kp_vmcoreinfo_destroy(vi);
}

TEST(first_of_duplicate_keys_and_bad_numbers)
{
	const char t[] = "SYMBOL(x)=10\nSYMBOL(x)=20\nSYMBOL(bad)=12g4\nSIZE(big)=99999999999999999999\n"
			 "NUMBER(neg)=-9223372036854775808\nNUMBER(tooneg)=-9223372036854775809\n"
			 "SIZE(hex)=0x40\nSYMBOL(empty)=\nNUMBER(minus)=-\n";
	struct kp_vmcoreinfo *vi = NULL;
	CHECK_OK(kp_vmcoreinfo_parse(t, sizeof(t) - 1, &vi));
	if (!vi)
		return;
	uint64_t u = 0;
	CHECK(kp_vmcoreinfo_symbol(vi, "x", &u));
	CHECK_U64(u, 0x10);
	u = 7;
	CHECK(!kp_vmcoreinfo_symbol(vi, "bad", &u));
	CHECK(!kp_vmcoreinfo_size(vi, "big", &u));
	CHECK(!kp_vmcoreinfo_symbol(vi, "empty", &u));
	CHECK_U64(u, 7);	// untouched on failure
	CHECK(kp_vmcoreinfo_size(vi, "hex", &u));
	CHECK_U64(u, 0x40);
	int64_t s = 0;
	CHECK(kp_vmcoreinfo_number(vi, "neg", &s));
	CHECK(s == INT64_MIN);
	CHECK(!kp_vmcoreinfo_number(vi, "tooneg", &s));
	CHECK(!kp_vmcoreinfo_number(vi, "minus", &s));
	// A NULL handle (dump without VMCOREINFO) answers "absent".
	CHECK(!kp_vmcoreinfo_symbol(NULL, "x", &u));
	CHECK(kp_vmcoreinfo_get(NULL, "x") == NULL);
	kp_vmcoreinfo_destroy(vi);
}

TEST(garbage_is_rejected_naming_the_line)
{
	struct kp_vmcoreinfo *vi = (struct kp_vmcoreinfo *)0x1;
	CHECK_ERR(kp_vmcoreinfo_parse("OSRELEASE=6.1\nno equals sign\n", 30, &vi),
		  KP_ERR_FORMAT, "line 2");
	const char bin[] = "PAGESIZE=4096\n\x7f" "ELF\x02\x01\x01=\n";
	CHECK_ERR(kp_vmcoreinfo_parse(bin, sizeof(bin) - 1, &vi), KP_ERR_FORMAT, "line 2");
	const char binval[] = "A=1\nB=2\nOSRELEASE=6.1\x01\x80\n";
	CHECK_ERR(kp_vmcoreinfo_parse(binval, sizeof(binval) - 1, &vi), KP_ERR_FORMAT,
		  "line 3");
	CHECK_ERR(kp_vmcoreinfo_parse("=5\n", 3, &vi), KP_ERR_FORMAT, "empty key");
	CHECK_ERR(kp_vmcoreinfo_parse("KEY WITH SPACE=5\n", 17, &vi), KP_ERR_FORMAT, "line 1");
	CHECK(vi == (struct kp_vmcoreinfo *)0x1);	// untouched on failure

	// Random bytes: must fail cleanly (or parse, if by chance text-like).
	unsigned seed = 12345;
	char junk[512];
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(junk); i++) {
			seed = seed * 1103515245 + 12345;
			junk[i] = seed >> 16;
		}
		struct kp_vmcoreinfo *v2 = NULL;
		struct kp_error *err = kp_vmcoreinfo_parse(junk, sizeof(junk), &v2);
		if (err) {
			CHECK(err->code == KP_ERR_FORMAT);
			kp_error_destroy(err);
		}
		kp_vmcoreinfo_destroy(v2);
	}
	char *huge = calloc(1, (2u << 20) + 1);
	CHECK_ERR(kp_vmcoreinfo_parse(huge, 2u << 20, &vi), KP_ERR_FORMAT, "bytes");
	free(huge);
}

int main(void)
{
	RUN(all_key_kinds);
	RUN(crash_time_out_of_range);
	RUN(missing_newline_nul_padding_blank_lines);
	RUN(first_of_duplicate_keys_and_bad_numbers);
	RUN(garbage_is_rejected_naming_the_line);
	return TEST_SUMMARY();
}
