// SPDX-License-Identifier: MIT
// Text into a fixed buffer: a cut is marked where it is.
#include <string.h>

#include "test.h"
#include "util/strbuf.h"

TEST(str_fit_whole)
{
	char buf[16];
	kp_str_fit(buf, sizeof(buf), "%s: %d", "pages", 31);
	CHECK_STR(buf, "pages: 31");
	kp_str_fit(buf, sizeof(buf), "%s", "fifteen chars..");	// exactly fits
	CHECK_STR(buf, "fifteen chars..");
}

TEST(str_fit_cut)
{
	char buf[16];
	kp_str_fit(buf, sizeof(buf), "%s", "excluded from the dump (makedumpfile -d 31)");
	CHECK_STR(buf, "excluded fro...");
	CHECK(strlen(buf) == sizeof(buf) - 1);
	kp_str_fit(buf, sizeof(buf), "%s", "sixteen chars...");	// one too many
	CHECK_STR(buf, "sixteen char...");
}

int main(void)
{
	RUN(str_fit_whole);
	RUN(str_fit_cut);
	return TEST_SUMMARY();
}
