// SPDX-License-Identifier: MIT
// The CLI's output printer: aligned text tables and key/value runs, JSON
// escaping (control bytes, non-UTF-8), lists, raw JSON values and misuse that
// must still leave one valid JSON document.
#include <time.h>

#include "test.h"
#include "../../cli/escape.c"
#include "../../cli/output.c"

// Runs fn against an out whose stream is a memory buffer; returns the text.
static char *capture(bool json, void (*fn)(struct out *o))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct out *o = out_create(false);
	o->json = json;
	o->f = f;
	if (json)
		putc('{', f);
	fn(o);
	out_destroy(o);
	fclose(f);
	return buf;
}

#define CHECK_TEXT(got, want)                                                  \
	do {                                                                   \
		const char *g_ = (got), *w_ = (want);                          \
		if (strcmp(g_, w_) != 0)                                       \
			FAILF("%s:\nexpected:\n%s\ngot:\n%s", #got, w_, g_);   \
	} while (0)

static const struct column ps_cols[] = {
	{ "PID", COL_INT, false },
	{ "TASK", COL_HEX, false },
	{ "COMM", COL_STR, false },
	{ "ST", COL_STR, false },
};

static void ps_table(struct out *o)
{
	out_table_begin(o, "tasks", ps_cols, 4);
	out_cell_int(o, 1);
	out_cell_hex(o, 0xffff888001234000ULL);
	out_cell_str(o, "systemd");
	out_cell_str(o, "S");
	out_cell_int(o, 12345);
	out_cell_hex(o, 0xabc);
	out_cell_str(o, "kworker/0:1");
	out_cell_str(o, "I");
	out_table_end(o);
}

TEST(text_table_aligned)
{
	char *s = capture(false, ps_table);
	CHECK_TEXT(s, "  PID              TASK  COMM         ST\n"
		     "    1  ffff888001234000  systemd      S\n"
		     "12345               abc  kworker/0:1  I\n");
	free(s);
}

TEST(json_table_rows)
{
	char *s = capture(true, ps_table);
	CHECK_TEXT(s, "{\n  \"tasks\": [\n"
		     "    {\"pid\": 1, \"task\": \"0xffff888001234000\", \"comm\": \"systemd\", \"st\": \"S\"},\n"
		     "    {\"pid\": 12345, \"task\": \"0xabc\", \"comm\": \"kworker/0:1\", \"st\": \"I\"}\n"
		     "  ]\n}\n");
	CHECK(esc_json_valid(s));
	free(s);
}

static void kv_doc(struct out *o)
{
	out_kv_str(o, "release", "6.1.0");
	out_kv_hex(o, "kaslr offset", 0x1e000000);
	out_kv_bool(o, "live", false);
	out_begin_object(o, "memory");
	out_kv_uint(o, "ranges", 3);
	out_kv_int(o, "delta", -5);
	out_end_object(o);
	out_kv_str(o, "btf", NULL);
}

TEST(text_kv_aligned_and_nested)
{
	char *s = capture(false, kv_doc);
	CHECK_TEXT(s, "release:      6.1.0\n"
		     "kaslr offset: 0x1e000000\n"
		     "live:         no\n"
		     "memory:\n"
		     "  ranges: 3\n"
		     "  delta:  -5\n"
		     "btf: -\n");
	free(s);
}

TEST(json_kv_nested)
{
	char *s = capture(true, kv_doc);
	CHECK_TEXT(s, "{\n  \"release\": \"6.1.0\",\n  \"kaslr offset\": \"0x1e000000\",\n"
		     "  \"live\": false,\n  \"memory\": {\n    \"ranges\": 3,\n    \"delta\": -5\n"
		     "  },\n  \"btf\": null\n}\n");
	CHECK(esc_json_valid(s));
	free(s);
}

// A number kpeek could not read: null, "unknown"; one it could, even 0.
static void known_doc(struct out *o)
{
	out_kv_int_known(o, "running", true, 0);
	out_kv_int_known(o, "threads", false, 0);
	out_kv_hex_known(o, "mask", true, 0);
	out_kv_hex_known(o, "kaslr", false, 0x1000);
}

TEST(unknown_numbers_are_null_not_zero)
{
	char *s = capture(true, known_doc);
	CHECK_TEXT(s, "{\n  \"running\": 0,\n  \"threads\": null,\n  \"mask\": \"0x0\",\n"
		     "  \"kaslr\": null\n}\n");
	CHECK(esc_json_valid(s));
	free(s);
	s = capture(false, known_doc);
	CHECK_TEXT(s, "running: 0\nthreads: unknown\nmask:    0x0\nkaslr:   unknown\n");
	free(s);
}

static void hostile_strings(struct out *o)
{
	out_kv_str(o, "c1", "x\xc2\x9by\xc2\xa0z");
	out_kv_str(o, "ctl", "a\"b\\c\nd\te\x01\x1f\x7f");
	out_kv_str(o, "bytes", "\xff\xfe\xc3\x28\xe2\x82\xac\xed\xa0\x80\xf4\x90\x80\x80\xc0\xaf");
	out_kv_str(o, "utf8", "h\xc3\xa9llo \xf0\x9f\x90\xa7");
	// C1 controls: U+009B (CSI) and U+009D (OSC) drive terminals like ESC [.
	out_kv_str(o, "c1", "a\xc2\x9b" "31mb\xc2\x9d" "0;x\xc2\xa0");
}

TEST(json_escapes_control_and_non_utf8)
{
	char *s = capture(true, hostile_strings);
	CHECK(esc_json_valid(s));
	CHECK(strstr(s, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f\\u007f\"") != NULL);
	// Only the euro sign is valid UTF-8; overlong, surrogate, >U+10FFFF are bytes.
	CHECK(strstr(s, "\"\\u00ff\\u00fe\\u00c3(\xe2\x82\xac\\u00ed\\u00a0\\u0080"
			"\\u00f4\\u0090\\u0080\\u0080\\u00c0\\u00af\"") != NULL);
	CHECK(strstr(s, "\"h\xc3\xa9llo \xf0\x9f\x90\xa7\"") != NULL);
	// C1 escaped, U+00A0 (not a control) kept.
	CHECK(strstr(s, "\"a\\u009b31mb\\u009d0;x\xc2\xa0\"") != NULL);
	free(s);
}

TEST(text_strips_control_bytes)
{
	char *s = capture(false, hostile_strings);
	CHECK(strstr(s, "c1:    x\\xc2\\x9by\xc2\xa0z\n") != NULL);
	CHECK(strstr(s, "ctl:   a\"b\\c\\x0ad\\x09e\\x01\\x1f\\x7f\n") != NULL);
	CHECK(strchr(s, '\x01') == NULL && strchr(s, '\x1b') == NULL);
	CHECK(strstr(s, "bytes: \\xff\\xfe\\xc3(\xe2\x82\xac\\xed\\xa0\\x80") != NULL);
	CHECK(strstr(s, "utf8:  h\xc3\xa9llo \xf0\x9f\x90\xa7\n") != NULL);
	free(s);
}

static void list_doc(struct out *o)
{
	out_begin_list(o, "values");
	out_kv_hex(o, NULL, 1);
	out_kv_hex(o, "ignored", 2);
	out_end_list(o);
	out_begin_list(o, "results");
	out_begin_object(o, NULL);
	out_kv_str(o, "name", "x");
	out_end_object(o);
	out_begin_object(o, NULL);
	out_kv_json(o, "value", "{\"a\": [1, 2.5e3, true, null, \"\\u00e9\"]}", "(struct s){...}");
	out_kv_json(o, "bad", "{\"a\": [1,]}", NULL);
	out_end_object(o);
	out_end_list(o);
	out_begin_list(o, "empty");
	out_end_list(o);
}

TEST(json_lists_and_raw_values)
{
	char *s = capture(true, list_doc);
	CHECK(esc_json_valid(s));
	CHECK(strstr(s, "\"values\": [\n    \"0x1\",\n    \"0x2\"\n  ]") != NULL);
	CHECK(strstr(s, "\"value\": {\"a\": [1, 2.5e3, true, null, \"\\u00e9\"]}") != NULL);
	CHECK(strstr(s, "\"bad\": \"{\\\"a\\\": [1,]}\"") != NULL);
	CHECK(strstr(s, "\"empty\": []") != NULL);
	free(s);
}

TEST(text_lists)
{
	char *s = capture(false, list_doc);
	CHECK_TEXT(s, "values:\n  0x1\n  0x2\nresults:\n  name: x\n\n"
		     "  value: (struct s){...}\n  bad:   {\"a\": [1,]}\nempty:\n");
	free(s);
}

static void misuse(struct out *o)
{
	out_table_begin(o, "t", ps_cols, 4);
	out_cell_int(o, 1);
	out_kv_str(o, "inside", "table");	// ignored
	out_begin_object(o, "nested");		// ignored, but balanced
	out_end_object(o);
	out_cell_hex(o, 2);
	// partial row, table and a deep nest left open: out_destroy closes them
	for (int i = 0; i < 100; i++)
		out_begin_object(o, "deep");
}

TEST(json_misuse_stays_valid)
{
	char *s = capture(true, misuse);
	CHECK(esc_json_valid(s));
	free(s);
	s = capture(false, misuse);
	CHECK(strstr(s, "PID  TASK  COMM  ST\n  1     2\n") != NULL);
	free(s);
}

static void nothing(struct out *o)
{
	out_text(o, "only text %d\n", 1);
}

TEST(empty_documents)
{
	char *s = capture(true, nothing);
	CHECK_TEXT(s, "{}\n");
	free(s);
	s = capture(false, nothing);
	CHECK_TEXT(s, "only text 1\n");
	free(s);
}

TEST(json_validator)
{
	static const char *good[] = { "0", "-0.5e-3", "\"\"", "[]", "{}", " [ 1 , {\"a\" : null} ] ",
				      "\"\\ud83d\\udc27\"", "true" };
	static const char *bad[] = { "", "01", "1.", "-", "[1,]", "{\"a\"}", "{\"a\":1,}", "\"\x01\"",
				     "\"\\x\"", "\"\xff\"", "tru", "[1] 2", "{1:2}", "\"\\u12g4\"",
				     "[[[[" };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!esc_json_valid(good[i]))
			FAILF("rejected valid JSON %s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (esc_json_valid(bad[i]))
			FAILF("accepted invalid JSON %s", bad[i]);
	// Linear in the document: 8 MiB of one string checks in well under a
	// second (it took minutes when each character measured the rest).
	size_t n = 8u << 20;
	char *big = malloc(n + 3);
	CHECK(big != NULL);
	big[0] = '"';
	memset(big + 1, 'x', n);
	strcpy(big + 1 + n, "\"");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(esc_json_valid(big));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 < 1.0);
	free(big);
	char deep[1000];
	memset(deep, '[', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = '\0';
	CHECK(!esc_json_valid(deep));
}

int main(void)
{
	RUN(text_table_aligned);
	RUN(json_table_rows);
	RUN(text_kv_aligned_and_nested);
	RUN(json_kv_nested);
	RUN(unknown_numbers_are_null_not_zero);
	RUN(json_escapes_control_and_non_utf8);
	RUN(text_strips_control_bytes);
	RUN(json_lists_and_raw_values);
	RUN(text_lists);
	RUN(json_misuse_stays_valid);
	RUN(empty_documents);
	RUN(json_validator);
	return TEST_SUMMARY();
}
