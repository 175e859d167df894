// SPDX-License-Identifier: MIT
// printk ring-buffer decoding (src/linux/printk.c) over synthetic images
// written the way kernel/printk/printk_ringbuffer.c (6.1) writes them.
#include "test.h"
#include "collect.h"
#include "linux/printk/printk.h"

// 6.1 x86-64 layout (BTF of Debian's 6.1.0-57-amd64).
static const struct kp_lx_prb_layout L = {
	.desc_ring = 0, .text_data_ring = 48,
	.count_bits = 0, .descs = 8, .infos = 16, .head_id = 24, .tail_id = 32,
	.size_bits = 0, .data = 8,
	.desc_size = 24, .state_var = 0, .text_begin = 8, .text_next = 16,
	.info_size = 88, .seq = 0, .ts_nsec = 8, .text_len = 16, .caller_id = 20,
	.facility = 18, .flags_byte = 19, .flags_shift = 0, .level_shift = 5,
};

#define CBITS 3	// 8 descriptors
#define SBITS 7	// 128 bytes of text
#define COUNT (1u << CBITS)
#define DSIZE (1u << SBITS)

struct ring {
	uint8_t descs[COUNT * 24];
	uint8_t infos[COUNT * 88];
	uint8_t data[DSIZE];
	uint64_t next_id, head_lpos, seq;
	struct kp_lx_prb_image img;
};

static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static struct kp_lx_prb_stats st;	// of the last decode

static void ring_init(struct ring *r)
{
	memset(r, 0, sizeof(*r));
	// Like the kernel: ids start so that the first wrap of the id space
	// is exercised early (DESC0_ID); here simply near a nonzero value.
	r->next_id = 100;
	r->head_lpos = 5 * DSIZE;	// some later wrap
	r->img.count_bits = CBITS;
	r->img.size_bits = SBITS;
	r->img.descs = r->descs;
	r->img.infos = r->infos;
	r->img.data = r->data;
	r->img.tail_id = r->next_id;
}

// Appends a record; state 2 = finalized. Returns its id.
static uint64_t ring_add(struct ring *r, const char *text, int level, uint64_t ts,
			 unsigned flags, unsigned state)
{
	uint64_t id = r->next_id++;
	size_t len = strlen(text);
	uint8_t *desc = r->descs + (id % COUNT) * 24;
	uint8_t *info = r->infos + (id % COUNT) * 88;
	uint64_t begin = 3, next = 3;	// NO_LPOS: no data block
	if (len) {
		uint64_t size = (8 + len + 7) & ~7ULL;
		begin = r->head_lpos;
		next = begin + size;
		if (begin / DSIZE != next / DSIZE) {
			// Wraps: id at begin, block at index 0 of the next wrap.
			put64(r->data + begin % DSIZE, id);
			next = (next / DSIZE) * DSIZE + size;
			put64(r->data, id);
			memcpy(r->data + 8, text, len);
		} else {
			put64(r->data + begin % DSIZE, id);
			memcpy(r->data + begin % DSIZE + 8, text, len);
		}
		r->head_lpos = next;
	}
	put64(desc, ((uint64_t)state << 62) | id);
	put64(desc + 8, begin);
	put64(desc + 16, next);
	memset(info, 0, 88);
	put64(info, r->seq++);
	put64(info + 8, ts);
	uint16_t tl = (uint16_t)len;
	memcpy(info + 16, &tl, 2);
	info[18] = 0;
	info[19] = (uint8_t)(flags | level << 5);
	r->img.head_id = id;
	return id;
}

struct seen {
	int n;
	char text[16][64];
	int level[16];
	uint64_t ts[16], seq[16];
	bool cont[16];
	int stop_after;
};

static struct kp_error *collect(const struct kp_printk_record *rec, void *arg)
{
	struct seen *s = arg;
	if (s->n < 16) {
		snprintf(s->text[s->n], 64, "%.*s", (int)rec->len, rec->text);
		s->level[s->n] = rec->level;
		s->ts[s->n] = rec->ts_nsec;
		s->seq[s->n] = rec->seq;
		s->cont[s->n] = rec->cont;
	}
	s->n++;
	if (s->stop_after && s->n == s->stop_after)
		return kp_error_create(KP_ERR_INTERRUPTED, "stop");
	return NULL;
}

TEST(records_in_order_with_levels_and_times)
{
	struct ring r;
	ring_init(&r);
	ring_add(&r, "Linux version 6.1.0", 5, 0, 2, 2);
	ring_add(&r, "Command line: x", 6, 1500, 2, 2);
	ring_add(&r, "cont", 4, 2000, 8, 1);	// committed, LOG_CONT
	struct seen s = {0};
	CHECK_OK(kp_lx_prb_decode(&L, &r.img, collect, &s, &st));
	CHECK_U64(s.n, 3);
	CHECK_STR(s.text[0], "Linux version 6.1.0");
	CHECK_STR(s.text[1], "Command line: x");
	CHECK_STR(s.text[2], "cont");
	CHECK_U64(s.level[0], 5);
	CHECK_U64(s.level[1], 6);
	CHECK_U64(s.ts[1], 1500);
	CHECK_U64(s.seq[2], 2);
	CHECK(!s.cont[0] && s.cont[2]);
}

TEST(wrapping_block_is_read_from_start_of_data)
{
	struct ring r;
	ring_init(&r);
	// 3 x 40-byte blocks fill 120 of 128 bytes; the 4th wraps.
	ring_add(&r, "0123456789abcdefghijklmnopqrstu", 6, 1, 2, 2);
	ring_add(&r, "second record text 12345678901", 6, 2, 2, 2);
	ring_add(&r, "third record text 123456789012", 6, 3, 2, 2);
	// The first block is overwritten by the wrapping one: make it
	// reusable as the kernel would before reusing its space.
	uint8_t *d0 = r.descs + (100 % COUNT) * 24;
	put64(d0, (3ULL << 62) | 100);
	r.img.tail_id = 101;
	ring_add(&r, "wrapped!", 3, 4, 2, 2);
	struct seen s = {0};
	CHECK_OK(kp_lx_prb_decode(&L, &r.img, collect, &s, &st));
	CHECK_U64(s.n, 3);
	CHECK_STR(s.text[0], "second record text 12345678901");
	CHECK_STR(s.text[2], "wrapped!");
	CHECK_U64(s.level[2], 3);
}

TEST(empty_lost_recycled_and_reserved_records)
{
	struct ring r;
	ring_init(&r);
	ring_add(&r, "a", 6, 1, 2, 2);
	ring_add(&r, "", 6, 2, 2, 2);		// empty line: NO_LPOS, shown
	uint64_t lost = ring_add(&r, "b", 6, 3, 2, 2);
	put64(r.descs + (lost % COUNT) * 24 + 8, 1);	// FAILED_LPOS
	put64(r.descs + (lost % COUNT) * 24 + 16, 1);
	uint64_t recycled = ring_add(&r, "c", 6, 4, 2, 2);
	put64(r.descs + (recycled % COUNT) * 24, (2ULL << 62) | (recycled + COUNT));
	ring_add(&r, "d", 6, 5, 2, 0);		// reserved: being written
	uint64_t badblk = ring_add(&r, "e", 6, 6, 2, 2);
	// Block id no longer matches: overwritten text.
	uint64_t b = 0;
	memcpy(&b, r.descs + (badblk % COUNT) * 24 + 8, 8);
	put64(r.data + b % DSIZE, 12345);
	ring_add(&r, "f", 6, 7, 2, 2);
	struct seen s = {0};
	CHECK_OK(kp_lx_prb_decode(&L, &r.img, collect, &s, &st));
	CHECK_U64(s.n, 3);
	CHECK_STR(s.text[0], "a");
	CHECK_STR(s.text[1], "");
	CHECK_STR(s.text[2], "f");
	// Only the recycled descriptor does not hold its own id.
	CHECK_U64(st.descs, 7);
	CHECK_U64(st.records, 3);
	CHECK_U64(st.bad_ids, 1);
	CHECK_U64(st.first_bad, recycled);
}

// The descriptor array read one descriptor off (a damaged prb->desc_ring.descs):
// no descriptor holds its id, which the stats say (the iterator makes that an
// error, never an empty log).
TEST(descriptors_read_at_the_wrong_place_are_counted)
{
	struct ring r;
	ring_init(&r);
	for (int i = 0; i < 5; i++)
		ring_add(&r, "line", 6, (uint64_t)i, 2, 2);
	r.img.descs = r.descs + 24;
	struct seen s = {0};
	CHECK_OK(kp_lx_prb_decode(&L, &r.img, collect, &s, &st));
	CHECK_U64(s.n, 0);
	CHECK_U64(st.records, 0);
	CHECK_U64(st.descs, 5);
	CHECK_U64(st.bad_ids, 5);
}

// A dump without some pages of the ring's arrays: the records with any
// byte of their descriptor, info or text on such a page are counted as
// unread, never decoded from the zeros read in their place; the others
// are given as usual.
TEST(records_on_lost_pages_are_counted_not_decoded)
{
	struct ring r;
	ring_init(&r);
	for (int i = 0; i < 6; i++) {
		char t[16];
		snprintf(t, sizeof(t), "rec%d", i);
		ring_add(&r, t, 6, (uint64_t)i, 0, 2);
	}
	// Ids 100..105 at indexes 4..7, 0, 1. The descriptor array "starts"
	// 100 bytes before a page boundary: indexes 4 and up (byte 96 on) lie
	// on the second page, lost; index 4 straddles the boundary.
	static const uint8_t two[2] = { 0, 1 };
	r.img.descs_lost = (struct kp_lx_prb_lost){ .pages = two, .skew = KP_LX_PRB_PAGE - 100 };
	struct seen s = {0};
	CHECK_OK(kp_lx_prb_decode(&L, &r.img, collect, &s, &st));
	CHECK_U64(s.n, 2);
	CHECK_STR(s.text[0], "rec4");
	CHECK_STR(s.text[1], "rec5");
	CHECK_U64(st.unread, 4);
	CHECK_U64(st.first_unread, 100);
	CHECK_U64(st.bad_ids, 0);
	// The same for an info and for a text block on a lost page.
	r.img.descs_lost = (struct kp_lx_prb_lost){ 0 };
	static const uint8_t first[1] = { 1 };
	r.img.infos_lost = (struct kp_lx_prb_lost){ .pages = first, .skew = 0 };
	memset(&s, 0, sizeof(s));
	CHECK_OK(kp_lx_prb_decode(&L, &r.img, collect, &s, &st));
	CHECK_U64(s.n, 0);
	CHECK_U64(st.unread, 6);
	r.img.infos_lost = (struct kp_lx_prb_lost){ 0 };
	r.img.data_lost = (struct kp_lx_prb_lost){ .pages = first, .skew = 0 };
	memset(&s, 0, sizeof(s));
	CHECK_OK(kp_lx_prb_decode(&L, &r.img, collect, &s, &st));
	CHECK_U64(s.n, 0);
	CHECK_U64(st.unread, 6);
}

TEST(callback_error_stops_the_walk)
{
	struct ring r;
	ring_init(&r);
	for (int i = 0; i < 5; i++)
		ring_add(&r, "x", 6, i, 2, 2);
	struct seen s = {.stop_after = 2};
	CHECK_ERR(kp_lx_prb_decode(&L, &r.img, collect, &s, &st), KP_ERR_INTERRUPTED, "stop");
	CHECK_U64(s.n, 2);
}

TEST(corrupt_positions_are_skipped_not_read_out_of_bounds)
{
	struct ring r;
	ring_init(&r);
	uint64_t ids[6];
	for (int i = 0; i < 6; i++)
		ids[i] = ring_add(&r, "hello", 6, i, 2, 2);
	uint8_t *d;
	d = r.descs + (ids[0] % COUNT) * 24;	// misaligned
	put64(d + 8, 5 * DSIZE + 4);
	d = r.descs + (ids[1] % COUNT) * 24;	// next before begin
	put64(d + 16, 1000);
	d = r.descs + (ids[2] % COUNT) * 24;	// block larger than the ring
	put64(d + 16, 5 * DSIZE + 40 + 8 * DSIZE);
	d = r.infos + (ids[3] % COUNT) * 88;	// text_len beyond the block
	uint16_t tl = 60000;
	memcpy(d + 16, &tl, 2);
	d = r.descs + (ids[4] % COUNT) * 24;	// several wraps apart
	put64(d + 8, 0);
	put64(d + 16, 3 * DSIZE + 16);
	struct seen s = {0};
	CHECK_OK(kp_lx_prb_decode(&L, &r.img, collect, &s, &st));
	CHECK_U64(s.n, 1);
	CHECK_STR(s.text[0], "hello");
}

TEST(head_far_from_tail_is_capped_to_ring_size)
{
	struct ring r;
	ring_init(&r);
	for (int i = 0; i < 20; i++)
		ring_add(&r, "r", 6, i, 2, 2);
	r.img.tail_id = 0;	// far behind head
	struct seen s = {0};
	CHECK_OK(kp_lx_prb_decode(&L, &r.img, collect, &s, &st));
	// Only the last COUNT records can exist.
	CHECK(s.n <= (int)COUNT && s.n > 0);
	r.img.tail_id = r.img.head_id + 1;	// tail after head: wraps to "all"
	s.n = 0;
	CHECK_OK(kp_lx_prb_decode(&L, &r.img, collect, &s, &st));
	CHECK(s.n <= (int)COUNT);
}

TEST(implausible_sizes_and_layouts_are_errors)
{
	struct ring r;
	ring_init(&r);
	struct seen s = {0};
	r.img.count_bits = 40;
	CHECK_ERR(kp_lx_prb_decode(&L, &r.img, collect, &s, &st), KP_ERR_FORMAT, "count_bits 40");
	r.img.count_bits = CBITS;
	struct kp_lx_prb_layout bad = L;
	bad.caller_id = 200;
	CHECK_ERR(kp_lx_prb_decode(&bad, &r.img, collect, &s, &st), KP_ERR_FORMAT, "layout");
}

TEST(random_bytes_never_crash)
{
	struct ring r;
	ring_init(&r);
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int round = 0; round < 200; round++) {
		uint8_t *all[] = {r.descs, r.infos, r.data};
		size_t sizes[] = {sizeof(r.descs), sizeof(r.infos), sizeof(r.data)};
		for (int a = 0; a < 3; a++)
			for (size_t i = 0; i < sizes[a]; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				// Mostly small values so that some records decode.
				all[a][i] = (round & 1) ? (uint8_t)x : (uint8_t)(x & 0x83);
			}
		r.img.head_id = x & 0xff;
		r.img.tail_id = (x >> 8) & 0xff;
		struct seen s = {0};
		struct kp_error *err = kp_lx_prb_decode(&L, &r.img, collect, &s, &st);
		CHECK(err == NULL);
		kp_error_destroy(err);
	}
}

int main(void)
{
	RUN(records_in_order_with_levels_and_times);
	RUN(wrapping_block_is_read_from_start_of_data);
	RUN(empty_lost_recycled_and_reserved_records);
	RUN(descriptors_read_at_the_wrong_place_are_counted);
	RUN(records_on_lost_pages_are_counted_not_decoded);
	RUN(callback_error_stops_the_walk);
	RUN(corrupt_positions_are_skipped_not_read_out_of_bounds);
	RUN(head_far_from_tail_is_capped_to_ring_size);
	RUN(implausible_sizes_and_layouts_are_errors);
	RUN(random_bytes_never_crash);
	return TEST_SUMMARY();
}
