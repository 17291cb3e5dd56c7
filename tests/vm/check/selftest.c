// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-vmcheck selftest (host only, no lrb.ko needed): build packet streams
 * as lrb and the test client would (lrb_abi.h, vm_record.h), corrupt them
 * one way at a time, and require the verifier to find each corruption in
 * the right category and nothing in a clean stream. Also the framer over
 * arbitrary chunking, the end-of-stream accounting, and the parsers of the
 * client's, stats and metadata files.
 */
#include "vmcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ST_SUBBUF 16384UL
#define ST_DATA_LEN 44
#define ST_CPU 2
#define ST_PACKETS 3

/**
 * struct st_gen - writes a synthetic stream of packets
 * @buf: the stream, packets back to back
 * @len: bytes of it
 * @pkt: start of the packet being written
 * @pos: write offset in that packet
 * @ts: timestamp of the last record
 * @seq: next seq per ctx
 * @pkt_seq: next packet_seq_num
 * @lost: records "lost" so far (skipped seqs)
 * @off: offsets of each packet in @buf
 * @npkt: packets written
 * @rec_off: stream offset of each record, in order
 * @nrec: records written
 */
struct st_gen {
	u8 buf[ST_PACKETS * 2 * ST_SUBBUF];
	u64 len;
	u64 pkt;
	u64 pos;
	u64 ts;
	u64 seq[LRB_VM_NR_CTX];
	u64 pkt_seq;
	u64 lost;
	u64 off[ST_PACKETS * 2];
	unsigned int npkt;
	u64 rec_off[4096];
	unsigned int nrec;
};

static void st_open(struct st_gen *g)
{
	struct lrb_packet_header h = {
		.magic = LRB_PACKET_MAGIC,
		.stream_id = 7,
		.timestamp_begin = g->ts + 10,
		.packet_seq_num = g->pkt_seq++,
		.cpu_id = ST_CPU,
		.header_size = VC_HEADER_SIZE,
	};

	g->pkt = g->len;
	g->off[g->npkt++] = g->pkt;
	memset(g->buf + g->pkt, 0, ST_SUBBUF);
	memcpy(g->buf + g->pkt, &h, sizeof(h));
	g->pos = VC_HEADER_SIZE;
	g->ts = h.timestamp_begin;
}

/* One record; @delta is its distance in time from the previous one. */
static void st_record(struct st_gen *g, int ctx, u64 delta, bool extended)
{
	u8 *p = g->buf + g->pkt + g->pos;
	struct lrb_vm_record r = {
		.seq = g->seq[ctx]++, .cpu = ST_CPU, .data_len = ST_DATA_LEN,
		.ctx = ctx,
	};
	u32 w, i, hl = LRB_COMPACT_HEADER_SIZE;
	u8 data[ST_DATA_LEN];

	g->ts += delta;
	if (extended || delta >= (1ULL << 27)) {
		struct lrb_extended_header e = {
			.id = LRB_VM_EVENT_ID, .timestamp = g->ts,
		};

		w = 31;
		memcpy(p, &w, 4);
		memcpy(p + 4, &e, sizeof(e));
		hl = LRB_EXTENDED_HEADER_SIZE;
	} else {
		w = LRB_VM_EVENT_ID | (u32)(g->ts << 5);
		memcpy(p, &w, 4);
	}
	for (i = 0; i < ST_DATA_LEN; i++)
		data[i] = lrb_vm_data_byte(r.seq, r.cpu, r.ctx, i);
	r.csum = lrb_vm_csum(data, ST_DATA_LEN, r.seq);
	memcpy(p + hl, &r, sizeof(r));
	memcpy(p + hl + sizeof(r), data, ST_DATA_LEN);
	g->rec_off[g->nrec++] = g->pkt + g->pos;
	g->pos += (hl + sizeof(r) + ST_DATA_LEN + 3) & ~3U;
}

static void st_close(struct st_gen *g)
{
	struct lrb_packet_header *h = (void *)(g->buf + g->pkt);
	u64 size = (g->pos + VC_PAGE - 1) & ~(VC_PAGE - 1);

	h->timestamp_end = g->ts + 5;
	h->content_size = g->pos * 8;
	h->packet_size = size * 8;
	h->events_discarded = g->lost;
	g->len += size;
	g->ts += 5;
}

/*
 * The reference stream: 3 packets, the second over two pages, with task
 * and irq records interleaved, one extended header (a long pause) and one
 * lost irq record (its seq skipped, counted in events_discarded).
 */
static void st_build(struct st_gen *g)
{
	unsigned int k, i;

	memset(g, 0, sizeof(*g));
	for (k = 0; k < ST_PACKETS; k++) {
		st_open(g);
		for (i = 0; i < (k == 1 ? 70U : 10U); i++)
			st_record(g, i % 3 == 2, 100 + i, false);
		if (k == 0) {
			st_record(g, 0, 1ULL << 28, false);
			g->seq[1]++;
			g->lost++;
		}
		st_close(g);
	}
}

static struct lrb_packet_header *st_hdr(struct st_gen *g, unsigned int k)
{
	return (void *)(g->buf + g->off[k]);
}

static u8 *st_rec(struct st_gen *g, unsigned int r)
{
	return g->buf + g->rec_off[r];
}

/* Payload of record @r (compact headers only). */
static struct lrb_vm_record *st_payload(struct st_gen *g, unsigned int r)
{
	return (void *)(st_rec(g, r) + LRB_COMPACT_HEADER_SIZE);
}

static void st_geom(struct vc_geom *g)
{
	*g = (struct vc_geom){ .subbuf_size = ST_SUBBUF, .stream_id = 7,
			       .data_len = ST_DATA_LEN, .exact_seq = true };
}

/* Verify @g's packets one by one (as the mmap consumer does). */
static void st_verify(struct st_gen *g, struct vc_stream *s)
{
	struct vc_geom geom;
	unsigned int k;

	st_geom(&geom);
	vc_stream_init(s, ST_CPU, &geom);
	vc_quiet = true;
	for (k = 0; k < g->npkt; k++) {
		u64 end = k + 1 < g->npkt ? g->off[k + 1] : g->len;

		vc_verify_packet(s, g->buf + g->off[k], end - g->off[k],
				 g->off[k]);
	}
	vc_quiet = false;
}

static void st_expect(const char *what, struct vc_stream *s, int cat)
{
	char found[256] = "";
	int i;

	for (i = 0; i < VC_NR_CAT; i++)
		if (s->errors[i])
			snprintf(found + strlen(found),
				 sizeof(found) - strlen(found), "%s%s",
				 *found ? ", " : "", vc_cat_name[i]);
	if (cat < 0)
		vc_check(!vc_stream_errors(s),
			 "selftest %s: clean stream reported errors: %s", what,
			 found);
	else
		vc_check(s->errors[cat],
			 "selftest %s: not detected as %s (found: %s)", what,
			 vc_cat_name[cat], *found ? found : "nothing");
}

typedef void (*st_mutate)(struct st_gen *g);

#define MUT(name, body) \
	static void st_##name(struct st_gen *g) { body; }

MUT(magic, st_hdr(g, 1)->magic ^= 1)
MUT(cpu_id, st_hdr(g, 2)->cpu_id = ST_CPU + 1)
MUT(header_size, st_hdr(g, 1)->header_size = 48)
MUT(stream_id, st_hdr(g, 0)->stream_id = 8)
MUT(content_gt_packet, st_hdr(g, 0)->content_size = 4097 * 8)
MUT(content_bits, st_hdr(g, 0)->content_size += 1)
MUT(packet_size, st_hdr(g, 0)->packet_size = 8192 * 8)
MUT(content_small, st_hdr(g, 2)->content_size = 32 * 8)
MUT(seq_skip, st_hdr(g, 2)->packet_seq_num += 1)
MUT(seq_first, st_hdr(g, 0)->packet_seq_num = 1; st_hdr(g, 1)->packet_seq_num = 2;
	  st_hdr(g, 2)->packet_seq_num = 3)
MUT(seq_repeat, st_hdr(g, 2)->packet_seq_num = 1)
MUT(ts_end_before_begin, st_hdr(g, 1)->timestamp_end =
	  st_hdr(g, 1)->timestamp_begin - 1)
MUT(ts_begin_before_prev_end, st_hdr(g, 2)->timestamp_begin =
	  st_hdr(g, 1)->timestamp_end - 1)
MUT(ts_record_after_end, st_hdr(g, 1)->timestamp_end =
	  st_hdr(g, 1)->timestamp_begin + 1)
MUT(disc_backwards, st_hdr(g, 2)->events_discarded = 0)
MUT(disc_below_gaps, st_hdr(g, 1)->events_discarded = 0;
	  st_hdr(g, 2)->events_discarded = 0; st_hdr(g, 0)->events_discarded = 0)
MUT(event_id, *st_rec(g, 5) = (*st_rec(g, 5) & ~31) | 2)
MUT(record_cpu, st_payload(g, 3)->cpu = 0)
MUT(record_ctx, st_payload(g, 4)->ctx = 2)
MUT(record_zero, st_payload(g, 4)->zero = 1)
MUT(record_data_len, st_payload(g, 30)->data_len -= 4)
MUT(record_data_len_huge, st_payload(g, 30)->data_len = 60000)
MUT(data_byte, ((u8 *)(st_payload(g, 40) + 1))[7] ^= 0x10)
MUT(data_last_byte, ((u8 *)(st_payload(g, 40) + 1))[ST_DATA_LEN - 1]++)
MUT(csum, st_payload(g, 41)->csum ^= 0x100)
MUT(seq_order, st_payload(g, 50)->seq = st_payload(g, 47)->seq)
MUT(padding, g->buf[g->off[0] + st_hdr(g, 0)->content_size / 8 + 3] = 1)
MUT(padding_last, g->buf[g->off[1] - 1] = 0xff)
MUT(truncated, st_hdr(g, 2)->content_size -= 8 * 8)
MUT(ext_ts_bits, *(u32 *)st_rec(g, 10) |= 1U << 5)
MUT(ext_ts_backwards, memcpy(st_rec(g, 10) + 8, &(u64){ 1 }, 8))

static const struct {
	const char *name;
	st_mutate fn;
	int cat;
} st_cases[] = {
#define C(n, c) { #n, st_##n, c }
	C(magic, VC_HEADER),
	C(cpu_id, VC_HEADER),
	C(header_size, VC_HEADER),
	C(stream_id, VC_HEADER),
	C(content_gt_packet, VC_HEADER),
	C(content_bits, VC_HEADER),
	C(packet_size, VC_HEADER),
	C(content_small, VC_HEADER),
	C(seq_skip, VC_PKTSEQ),
	C(seq_first, VC_PKTSEQ),
	C(seq_repeat, VC_PKTSEQ),
	C(ts_end_before_begin, VC_TIME),
	C(ts_begin_before_prev_end, VC_TIME),
	C(ts_record_after_end, VC_TIME),
	C(disc_backwards, VC_DISC),
	C(disc_below_gaps, VC_DISC),
	C(event_id, VC_RECORD),
	C(record_cpu, VC_RECORD),
	C(record_ctx, VC_RECORD),
	C(record_zero, VC_RECORD),
	C(record_data_len, VC_RECORD),
	C(record_data_len_huge, VC_RECORD),
	C(data_byte, VC_DATA),
	C(data_last_byte, VC_DATA),
	C(csum, VC_DATA),
	C(seq_order, VC_ORDER),
	C(padding, VC_PAD),
	C(padding_last, VC_PAD),
	C(truncated, VC_RECORD),
	C(ext_ts_bits, VC_RECORD),
	C(ext_ts_backwards, VC_TIME),
#undef C
};

static void st_packets(void)
{
	static struct st_gen g;
	struct vc_stream s;
	unsigned int i;

	st_build(&g);
	/* the mutations assume these record positions */
	vc_check(g.nrec == 91 && g.npkt == 3 &&
		 (*(u32 *)st_rec(&g, 10) & 31) == 31 &&
		 g.off[2] - g.off[1] == 2 * VC_PAGE,
		 "selftest: reference stream has %u records in %u packets, extended record at 10: %d",
		 g.nrec, g.npkt, (*(u32 *)st_rec(&g, 10) & 31) == 31);
	st_verify(&g, &s);
	st_expect("clean stream", &s, -1);
	vc_check(s.records == 91 && s.gaps[1] == 1 && s.gaps[0] == 0 &&
		 s.received[0] + s.received[1] == 91,
		 "selftest: clean stream: %llu records, gaps %llu/%llu",
		 (ull)s.records, (ull)s.gaps[0], (ull)s.gaps[1]);
	for (i = 0; i < ARRAY_SIZE(st_cases); i++) {
		st_build(&g);
		st_cases[i].fn(&g);
		st_verify(&g, &s);
		st_expect(st_cases[i].name, &s, st_cases[i].cat);
	}
}

/* Feed the stream to the framer in chunks of varying sizes. */
static void st_framer(void)
{
	static struct st_gen g;
	struct vc_framer f;
	struct vc_stream s;
	struct vc_geom geom;
	u64 done = 0, n, chunk = 1;
	char path[] = "/tmp/lrb-vmcheck-selftest.XXXXXX";
	int fd;

	st_build(&g);
	st_geom(&geom);
	vc_stream_init(&s, ST_CPU, &geom);
	vc_framer_init(&f, ST_SUBBUF);
	vc_quiet = true;
	while (done < g.len) {
		u8 *p = vc_framer_space(&f, &n);

		if (n > chunk)
			n = chunk;
		if (n > g.len - done)
			n = g.len - done;
		memcpy(p, g.buf + done, n);
		vc_framer_commit(&f, &s, n);
		done += n;
		chunk = chunk * 7 % 5003 + 1;
	}
	vc_framer_end(&f, &s);
	vc_quiet = false;
	st_expect("framer, chunks of 1 to 5003 bytes", &s, -1);
	vc_check(s.packets == 3 && s.bytes == g.len,
		 "selftest framer: %llu packets %llu bytes, want 3 and %llu",
		 (ull)s.packets, (ull)s.bytes, (ull)g.len);

	/* cut short */
	vc_stream_init(&s, ST_CPU, &geom);
	vc_framer_free(&f);
	vc_framer_init(&f, ST_SUBBUF);
	vc_quiet = true;
	for (done = 0; done < g.len - 100;) {
		u8 *p = vc_framer_space(&f, &n);

		if (n > g.len - 100 - done)
			n = g.len - 100 - done;
		memcpy(p, g.buf + done, n);
		vc_framer_commit(&f, &s, n);
		done += n;
	}
	vc_framer_end(&f, &s);
	vc_quiet = false;
	st_expect("stream cut 100 bytes short", &s, VC_FRAMING);

	/* a packet_size the framer cannot follow */
	st_hdr(&g, 1)->packet_size = 100 * 8;
	fd = mkstemp(path);
	if (!vc_check(fd >= 0 && write(fd, g.buf, g.len) == (ssize_t)g.len,
		      "selftest: temporary file %s: %s", path,
		      strerror(errno)))
		goto out;
	close(fd);
	vc_stream_init(&s, ST_CPU, &geom);
	vc_quiet = true;
	vc_verify_file(&s, path);
	vc_quiet = false;
	st_expect("file with an unframeable packet_size", &s, VC_FRAMING);
	vc_check(s.packets == 1, "selftest: %llu packets verified before the bad one, want 1",
		 (ull)s.packets);
	unlink(path);
out:
	vc_framer_free(&f);
}

/* End-of-stream accounting on the reference stream (one irq record lost). */
static void st_accounting(void)
{
	static struct st_gen g;
	static const struct {
		const char *name;
		int field;
		int cat;
	} cases[] = {
		{ "client lost", 1, VC_ACC_GAPS },
		{ "lrb lost_full", 2, VC_ACC_LOST },
		{ "events_discarded of the last packet", 3, VC_ACC_DISC },
		{ "irq attempts", 4, VC_ACC_TOTAL },
		{ "records_written", 5, VC_ACC_WRITTEN },
		{ "bytes_read", 6, VC_ACC_READ },
		{ "packets_read", 7, VC_ACC_READ },
		{ "produced", 8, VC_ACC_POS },
		{ "lost_packets", 9, VC_ACC_POS },
		{ "pages_spliced", 10, VC_ACC_SPLICE },
		{ "bytes spliced not whole pages", 11, VC_ACC_SPLICE },
		{ "read without splice but pages_spliced", 12, VC_ACC_SPLICE },
	};
	struct vc_stream s;
	struct vc_acct a, ok;
	unsigned int i;
	u64 end;

	st_build(&g);
	st_verify(&g, &s);
	end = ST_PACKETS * ST_SUBBUF;
	ok = (struct vc_acct){
		.cnt = { .records_written = 91, .lost_full = 1,
			 .produced = end, .consumed = end,
			 .packets_read = 3, .bytes_read = g.len,
			 .pages_spliced = g.len / VC_PAGE },
		.pos = { .consumed = end, .produced = end },
		.cl = { .task = g.seq[0], .irq = g.seq[1], .lost = 1,
			.valid = true },
		.spliced = g.len,
	};
	vc_quiet = true;
	vc_account(&s, &ok);
	vc_quiet = false;
	st_expect("accounting of the reference stream", &s, -1);

	/* the last irq attempts lost after the last packet: tail, not gap */
	a = ok;
	a.cl.irq += 2;
	a.cl.lost += 2;
	a.cnt.lost_wrap = 2;
	st_verify(&g, &s);
	vc_quiet = true;
	vc_account(&s, &a);
	vc_quiet = false;
	st_expect("accounting with 2 records lost after the last packet", &s,
		  -1);

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		a = ok;
		switch (cases[i].field) {
		case 1:
			a.cl.lost++;
			break;
		case 2:
			a.cnt.lost_full++;
			break;
		case 3:
			/* all lost after the last packet, which says 1 */
			a.cl.irq += 3;
			a.cl.lost += 3;
			a.cnt.lost_full += 3;
			st_hdr(&g, 2)->events_discarded = 0;
			st_hdr(&g, 1)->events_discarded = 0;
			break;
		case 4:
			a.cl.irq++;
			break;
		case 5:
			a.cnt.records_written++;
			break;
		case 6:
			a.cnt.bytes_read -= VC_PAGE;
			break;
		case 7:
			a.cnt.packets_read++;
			break;
		case 8:
			a.cnt.produced += 100;
			break;
		case 9:
			a.cnt.lost_packets = 1;
			break;
		case 10:
			a.cnt.pages_spliced--;
			break;
		case 11:
			a.spliced -= 100;
			break;
		case 12:
			a.spliced = -1;
			break;
		}
		st_verify(&g, &s);
		vc_quiet = true;
		vc_account(&s, &a);
		vc_quiet = false;
		st_expect(cases[i].name, &s, cases[i].cat);
		st_build(&g);
	}
}

static void st_parsers(void)
{
	static const char md[] =
		"/* CTF 1.8 */\n"
		"typealias integer { size = 27; align = 1; signed = false; map = clock.lrb_clock.value; } := lrb_ts_t;\n\n"
		"stream {\n\tid = 0;\n\tevent.header := struct {\n"
		"\t\tenum : integer { size = 5; align = 8; signed = false; } {\n";
	static const char md_large[] =
		"typealias integer { size = 32; align = 8; signed = false; map = clock.lrb_clock.value; } := lrb_ts_t;\n"
		"\tevent.header := struct {\n"
		"\t\tenum : integer { size = 32; align = 8; signed = false; } {\n";
	static const char stats[] =
		"cpu1 records_written=5 lost_full=1 lost_wrap=2 lost_big=3 "
		"lost_nest=4 lost_packets=6 produced=7 consumed=8 "
		"packets_read=9 bytes_read=10 pages_spliced=11 lost_overwrite=12";
	struct lrb_buf_counters c;
	struct vc_client_cpu cl[4];
	struct vc_layout l = {};
	char path[] = "/tmp/lrb-vmcheck-written.XXXXXX";
	static const char written[] =
		"running=0\ndestroyed=1\n"
		"cpu0 task=10 irq=4 lost=1\ncpu1 task=11 irq=5 lost=0\n"
		"total task=21 irq=9 lost=1\n";
	int fd;

	vc_check(!vc_layout_from_metadata(md, &l) && !l.large &&
		 l.tsc_bits == 27,
		 "selftest: compact layout from metadata: large %d tsc_bits %u",
		 l.large, l.tsc_bits);
	vc_check(!vc_layout_from_metadata(md_large, &l) && l.large,
		 "selftest: large layout from metadata not recognised");
	vc_check(vc_layout_from_metadata("/* CTF 1.8 */\n", &l) == -1,
		 "selftest: metadata without a record header accepted");
	vc_check(!vc_parse_stats_line(stats, &c) && c.records_written == 5 &&
		 c.lost_packets == 6 && c.packets_read == 9 &&
		 c.pages_spliced == 11 && c.lost_nest == 4 &&
		 c.lost_overwrite == 12,
		 "selftest: stats line parsed wrong");
	vc_check(vc_parse_stats_line("cpu0 records_written=5 lost_full=1", &c),
		 "selftest: stats line with missing keys accepted");
	fd = mkstemp(path);
	if (!vc_check(fd >= 0 && write(fd, written, sizeof(written) - 1) ==
		      (ssize_t)sizeof(written) - 1,
		      "selftest: temporary file: %s", strerror(errno)))
		return;
	close(fd);
	vc_check(vc_read_written(path, cl, 4) == 2 && cl[0].task == 10 &&
		 cl[0].irq == 4 && cl[0].lost == 1 && cl[1].task == 11 &&
		 cl[1].valid && !cl[2].valid,
		 "selftest: client's written file parsed wrong");
	unlink(path);
}

/*
 * The consumers' plumbing (read; splice to a pipe, then to a file or a TCP
 * socket and its receiver), with a regular file in place of a cpu file.
 */
static void st_consumers(void)
{
	static const char *const vias[] = { "read", "splice-file", "splice-tcp" };
	static struct st_gen g;
	char dir[] = "/tmp/lrb-vmcheck-selftest.XXXXXX", path[128];
	struct vc_stream s;
	struct vc_geom geom;
	long long spliced;
	unsigned int i;
	int fd;

	if (!vc_check(mkdtemp(dir), "selftest: mkdtemp: %s", strerror(errno)))
		return;
	snprintf(path, sizeof(path), "%s/stream", dir);
	st_build(&g);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (!vc_check(fd >= 0 && write(fd, g.buf, g.len) == (ssize_t)g.len,
		      "selftest: %s: %s", path, strerror(errno)))
		goto out;
	st_geom(&geom);
	for (i = 0; i < ARRAY_SIZE(vias); i++) {
		lseek(fd, 0, SEEK_SET);
		vc_stream_init(&s, ST_CPU, &geom);
		vc_quiet = true;
		vc_check(!vc_consume_selftest(vias[i], dir, fd, &s, &spliced),
			 "selftest: consumer %s did not run", vias[i]);
		vc_quiet = false;
		st_expect(vias[i], &s, -1);
		vc_check(s.packets == 3 && s.records == 91 &&
			 (i ? spliced == (long long)g.len : spliced == -1),
			 "selftest: consumer %s: %llu packets, %llu records, spliced %lld of %llu bytes",
			 vias[i], (ull)s.packets, (ull)s.records, spliced,
			 (ull)g.len);
	}
	close(fd);
out:
	unlink(path);
	rmdir(dir);
}

int vc_cmd_selftest(const struct vc_opts *o vc_unused)
{
	vc_layout = (struct vc_layout){ .large = false, .tsc_bits = 27 };
	st_packets();
	st_framer();
	st_accounting();
	st_parsers();
	st_consumers();
	return vc_report();
}
