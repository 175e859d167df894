// SPDX-License-Identifier: MIT
// Minimal unit-test harness: each test_*.c defines tests with TEST(name) and
// lists them in main() via RUN(name). A failed check prints file:line, what
// was expected and what was got, and the binary exits non-zero. A test that
// cannot run here calls SKIP("why"): it is counted as skipped, never passed.
#ifndef KP_TEST_H
#define KP_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <kpeek/kpeek.h>
#include "util/error.h"	// tests read struct kp_error directly

extern int kp_test_failed_checks;
int kp_test_failed_checks;
static int kp_test_passed, kp_test_failed, kp_test_skipped;
static const char *kp_test_skip_reason;

#define TEST(name) static void test_##name(void)

#define RUN(name)                                                              \
	do {                                                                   \
		int before_ = kp_test_failed_checks;                           \
		kp_test_skip_reason = NULL;                                    \
		test_##name();                                                 \
		if (kp_test_failed_checks == before_ && kp_test_skip_reason) { \
			kp_test_skipped++;                                     \
			printf("SKIP %s: %s\n", #name, kp_test_skip_reason);   \
		} else if (kp_test_failed_checks == before_) {                 \
			kp_test_passed++;                                      \
			printf("ok   %s\n", #name);                            \
		} else {                                                       \
			kp_test_failed++;                                      \
			printf("FAIL %s\n", #name);                            \
		}                                                              \
	} while (0)

// Ends the current test as skipped (it could not run here), with why.
#define SKIP(why)                                                              \
	do {                                                                   \
		kp_test_skip_reason = (why);                                   \
		return;                                                        \
	} while (0)

// Last line of every test binary: "N passed, N failed, N skipped"; exit
// status follows.
#define TEST_SUMMARY()                                                         \
	(printf("%s: %d passed, %d failed, %d skipped\n", __FILE__,            \
		kp_test_passed, kp_test_failed, kp_test_skipped),              \
	 kp_test_failed ? 1 : 0)

#define FAILF(...)                                                             \
	do {                                                                   \
		kp_test_failed_checks++;                                       \
		fprintf(stdout, "  %s:%d: ", __FILE__, __LINE__);              \
		fprintf(stdout, __VA_ARGS__);                                  \
		fputc('\n', stdout);                                           \
	} while (0)

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			FAILF("check failed: %s", #cond);                      \
	} while (0)

#define CHECK_U64(got, want)                                                   \
	do {                                                                   \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);          \
		if (g_ != w_)                                                  \
			FAILF("%s: expected 0x%" PRIx64 " (%" PRIu64           \
			      "), got 0x%" PRIx64 " (%" PRIu64 ")",            \
			      #got, w_, w_, g_, g_);                           \
	} while (0)

#define CHECK_STR(got, want)                                                   \
	do {                                                                   \
		const char *g_ = (got), *w_ = (want);                          \
		if (!g_ || strcmp(g_, w_) != 0)                                \
			FAILF("%s: expected \"%s\", got \"%s\"", #got, w_,     \
			      g_ ? g_ : "(null)");                             \
	} while (0)

// The call must succeed; on error prints its message and fails the test.
#define CHECK_OK(call)                                                         \
	do {                                                                   \
		struct kp_error *e_ = (call);                                  \
		if (e_) {                                                      \
			FAILF("%s failed: %s", #call, e_->message);            \
			kp_error_destroy(e_);                                  \
		}                                                              \
	} while (0)

// The call must fail with the given code; the message must contain substr.
#define CHECK_ERR(call, want_code, substr)                                     \
	do {                                                                   \
		struct kp_error *e_ = (call);                                  \
		if (!e_) {                                                     \
			FAILF("%s succeeded, expected error %s", #call,        \
			      kp_error_code_name(want_code));                  \
		} else {                                                       \
			if (e_->code != (want_code))                           \
				FAILF("%s: expected %s, got %s (%s)", #call,   \
				      kp_error_code_name(want_code),           \
				      kp_error_code_name(e_->code),            \
				      e_->message);                            \
			if (!strstr(e_->message, (substr)))                    \
				FAILF("%s: message \"%s\" lacks \"%s\"",       \
				      #call, e_->message, (substr));           \
			kp_error_destroy(e_);                                  \
		}                                                              \
	} while (0)

#endif
