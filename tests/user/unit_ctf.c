// SPDX-License-Identifier: GPL-2.0
/*
 * The CTF metadata of lib/metadata.c against babeltrace2: write traces in
 * both header layouts and both modes, with compact and extended record
 * headers and with losses, store the packets and the metadata as a trace
 * directory, and check that babeltrace2 prints every record that was read
 * with its fields and its exact timestamp, and reports the discarded
 * events and lost packets that lrb counted.
 *
 *   unit_ctf [--lrb-dump COMMAND]
 *
 * --lrb-dump checks each trace with lrb-dump too, the same way. Run under
 * qemu-s390x, this writes big-endian traces for the host's readers; run
 * natively with COMMAND "qemu-s390x-static .../lrb-dump", little-endian
 * traces for a big-endian reader (tests/run.sh does both).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <lrb/event.h>
#include "test.h"

#define EV_SMALL 3
#define EV_BIG 40	/* beyond the compact id bits: extended header */

static u64 now;

static u64 test_clock(void)
{
	return now;
}

static const struct lrb_config cfg_compact_discard =
	TEST_CONFIG(LRB_MODE_DISCARD, LRB_ALLOC_GLOBAL, LRB_WAKEUP_BY_WRITER,
		    LRB_HEADER_COMPACT, 27, .clock_read = test_clock);
static const struct lrb_config cfg_large_overwrite =
	TEST_CONFIG(LRB_MODE_OVERWRITE, LRB_ALLOC_GLOBAL, LRB_WAKEUP_BY_WRITER,
		    LRB_HEADER_LARGE, 27, .clock_read = test_clock);

LRB_EVENT(small, EV_SMALL,
	  LRB_INTEGER(u32, seq),
	  LRB_INTEGER(u64, ts));

LRB_EVENT(big, EV_BIG,
	  LRB_INTEGER(u32, seq),
	  LRB_INTEGER(u64, ts),
	  LRB_INTEGER(u8, n),
	  LRB_SEQUENCE(u8, data, n));

static const struct lrb_event_desc *const events[] = {
	&lrb_event_small, &lrb_event_big,
};

/*
 * "small" is the 12-byte head alone; "big" adds n = seq % 4 bytes and more,
 * so that records (and packets) end off the 4-byte alignment.
 */
struct payload {
	u32 seq;
	u64 ts;
	u8 n;
	u8 data[3];
} __attribute__((packed));

#define SMALL_LEN 12U

/* What a trace should show: each record read, in order. */
struct expect {
	unsigned long n;
	u32 seq[4096];
	u64 ts[4096];
	unsigned long lost;
	unsigned long skipped;
	unsigned long packets;
	u64 first_seq;
	u64 last_seq;
	u64 first_discarded;
	u64 last_discarded;
};

static char dir[] = "/tmp/lrb-unit-ctf-XXXXXX";
static const char *lrb_dump;

/* Write record @seq at the current time; a jump makes it extended. */
static int write_one(const struct lrb_config *cfg, struct lrb_chan *chan,
		     u32 seq)
{
	struct payload p = { .seq = seq, .n = seq % 4 };

	now += seq % 97 == 50 ? (1ULL << 28) + seq : 7;
	p.ts = now;
	memset(p.data, seq & 0xff, sizeof(p.data));
	if (seq % 5)
		return lrb_write_small(cfg, chan, p.seq, p.ts);
	return lrb_write_big(cfg, chan, p.seq, p.ts, p.n, p.data);
}

static long payload_size(const struct lrb_decoder *dec, u32 id,
			 const u8 *payload, unsigned long avail)
{
	if (id == EV_SMALL)
		return SMALL_LEN;
	if (id != EV_BIG || avail < SMALL_LEN + 1)
		return -EINVAL;
	return SMALL_LEN + 1 + payload[SMALL_LEN];
}

/* Drain every complete packet into the stream file, noting the records. */
static void drain(struct lrb_chan *chan, struct lrb_buf *buf, FILE *f,
		  struct expect *e)
{
	struct lrb_decoder dec = {
		.header = chan->cfg->header,
		.tsc_bits = chan->cfg->tsc_bits,
		.payload_size = payload_size,
	};
	struct lrb_packet_iter it;
	struct lrb_record rec;
	struct lrb_subbuf sb;
	u8 data[4096];

	while (!lrb_get_next_subbuf(buf, &sb)) {
		REQUIRE(sb.packet_size <= sizeof(data));
		lrb_subbuf_copy(chan, &sb, 0, data, sb.packet_size);
		CHECK_EQ(fwrite(data, 1, sb.packet_size, f), sb.packet_size);
		CHECK_EQ(lrb_packet_open(&it, &dec, data, sb.packet_size), 0);
		if (!e->packets++) {
			e->first_seq = sb.seq;
			e->first_discarded = it.header.events_discarded;
		}
		e->last_seq = sb.seq;
		e->last_discarded = it.header.events_discarded;
		while (lrb_packet_next(&it, &rec) > 0 &&
		       e->n < ARRAY_SIZE(e->seq)) {
			struct payload p;

			memcpy(&p, rec.payload, SMALL_LEN);
			e->seq[e->n] = p.seq;
			e->ts[e->n++] = p.ts;
		}
		CHECK(!it.error);
		e->skipped += it.skipped;
		CHECK_EQ(lrb_put_subbuf(buf, &sb), 0);
	}
}

static void write_metadata(struct lrb_chan *chan, const char *path)
{
	struct lrb_metadata_attr attr = {
		.clock_freq = 1000000000,
		.clock_offset_s = 1700000000,
		.events = events,
		.nr_events = ARRAY_SIZE(events),
	};
	char text[8192];
	FILE *f = fopen(path, "w");
	int len = lrb_metadata_format(chan, &attr, text, sizeof(text));

	REQUIRE(f);
	REQUIRE(len > 0 && len < (int)sizeof(text));
	CHECK_EQ(lrb_metadata_format(chan, &attr, NULL, 0), len);
	fputs(text, f);
	fclose(f);
}

/* Event @n as a reader printed it, against @e; counts a mismatch in @bad. */
static void check_event(const char *trace, const struct expect *e,
			unsigned long n, unsigned long long cycles,
			const char *name, unsigned int seq,
			unsigned long long ts, const char *line,
			unsigned long *bad)
{
	if (n < e->n && (seq != e->seq[n] || ts != e->ts[n] || cycles != ts ||
			 strcmp(name, seq % 5 ? "small" : "big"))) {
		if ((*bad)++ < 5)
			fprintf(stderr, "%s: event %lu: %s", trace, n, line);
	}
}

/* Run lrb-dump on the trace and compare what it prints with @e. */
static void check_lrb_dump(const char *trace, const struct expect *e)
{
	unsigned long n = 0, discarded = 0, packets = 0, bad = 0, k;
	char cmd[1024], line[512];
	int status;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s --clock-cycles %s 2>%s/dump.err",
		 lrb_dump, trace, dir);
	p = popen(cmd, "r");
	REQUIRE(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long cycles, ts;
		unsigned int seq;
		char name[32];

		if (sscanf(line, "[%llu] cpu %*u %31[a-z]: seq=%u ts=%llu",
			   &cycles, name, &seq, &ts) == 4) {
			check_event(trace, e, n++, cycles, name, seq, ts, line,
				    &bad);
		} else if (sscanf(line, "[%*u] cpu %*u discarded: %lu events",
				  &k) == 1 ||
			   sscanf(line,
				  "[%*u] cpu %*u discarded: up to %lu events",
				  &k) == 1) {
			/* The first packet's count is since the creation. */
			discarded += k;
		} else if (sscanf(line, "[%*u] cpu %*u lost: %lu packets",
				  &k) == 1) {
			packets += k;
		} else if (bad++ < 5) {
			fprintf(stderr, "%s: unexpected lrb-dump line: %s",
				trace, line);
		}
	}
	status = pclose(p);
	CHECK_EQ(status, 0);
	if (status) {
		snprintf(cmd, sizeof(cmd), "cat %s/dump.err >&2", dir);
		if (system(cmd))
			fprintf(stderr, "unit_ctf: cannot show %s/dump.err\n",
				dir);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(n, e->n);
	CHECK_EQ(discarded, e->lost);
	CHECK_EQ(packets, e->last_seq - e->first_seq + 1 - e->packets);
}

/* Run babeltrace2 on the trace and compare what it prints with @e. */
static void check_babeltrace(const char *trace, const struct expect *e)
{
	char cmd[1024], line[512], err[300];
	unsigned long n = 0, discarded = 0, packets = 0, bad = 0, other = 0;
	FILE *p;

	snprintf(err, sizeof(err), "%s/bt2.err", dir);
	snprintf(cmd, sizeof(cmd), "babeltrace2 --clock-cycles %s 2>%s",
		 trace, err);
	p = popen(cmd, "r");
	REQUIRE(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long cycles, ts;
		unsigned int seq;
		char name[32];

		if (sscanf(line,
			   "[%llu] %*s %31[a-z]: { cpu_id = %*u, header_size = %*u }, { seq = %u, ts = %llu }",
			   &cycles, name, &seq, &ts) != 4) {
			if (bad++ < 5)
				fprintf(stderr, "%s: unexpected line: %s", trace,
					line);
			continue;
		}
		check_event(trace, e, n++, cycles, name, seq, ts, line, &bad);
	}
	CHECK_EQ(pclose(p), 0);
	CHECK_EQ(bad, 0);
	CHECK_EQ(n, e->n);

	p = fopen(err, "r");
	REQUIRE(p);
	while (fgets(line, sizeof(line), p)) {
		char what[16];
		unsigned long k;

		/* the text sink's reports of losses; nothing else */
		if (strncmp(line, "WARNING: Tracer ", 16)) {
			if (other++ < 5)
				fprintf(stderr, "%s: babeltrace2 says: %s", trace,
					line);
			continue;
		}
		if (sscanf(line, "WARNING: Tracer discarded %lu %15s", &k,
			   what) != 2)
			continue;
		/* "1 event", "2 events" */
		if (!strncmp(what, "event", 5))
			discarded += k;
		else if (!strncmp(what, "packet", 6))
			packets += k;
	}
	fclose(p);
	/* no warning about lrb's metadata (design.rst, skip records) */
	CHECK_EQ(other, 0);
	/* babeltrace2 reports what was lost after the first packet read */
	CHECK_EQ(discarded, e->last_discarded - e->first_discarded);
	/* packets lost between the first and the last packet read */
	CHECK_EQ(packets, e->last_seq - e->first_seq + 1 - e->packets);
}

/* Reserve record @seq of event "small" at the current time. */
static void reserve_small(const struct lrb_config *cfg, struct lrb_chan *chan,
			  struct lrb_ctx *ctx, u32 seq)
{
	struct payload p = { .seq = seq };

	now += 7;
	p.ts = now;
	/* nothing can fail: the test drains after every pattern */
	if (lrb_reserve(cfg, chan, ctx, EV_SMALL, SMALL_LEN)) {
		fprintf(stderr, "unit_ctf: %s: record %u refused\n", test_current,
			seq);
		exit(1);
	}
	lrb_write(ctx, &p, SMALL_LEN);
}

/* A one-buffer channel being recorded into the trace directory @trace. */
struct trace_run {
	char trace[128];
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	FILE *f;
};

/* Start test @name: its channel, reader and stream file; e zeroed. */
static void trace_open(struct trace_run *r, const char *name,
		       const struct lrb_config *cfg, struct expect *e)
{
	const struct lrb_chan_attr attr = {
		.subbuf_size = 4096, .num_subbuf = 4, .nr_cpus = 1,
		.stream_id = 5,
	};
	char path[160];

	test_current = name;
	memset(e, 0, sizeof(*e));
	now = 1000;
	snprintf(r->trace, sizeof(r->trace), "%s/%s", dir, name);
	REQUIRE(!mkdir(r->trace, 0755));
	REQUIRE(!lrb_channel_create(cfg, &attr, &r->chan));
	r->buf = lrb_channel_nth_buf(r->chan, 0);
	REQUIRE(!lrb_reader_open(r->buf));
	snprintf(path, sizeof(path), "%s/stream_0", r->trace);
	r->f = fopen(path, "w");
	REQUIRE(r->f);
}

/* Flush and drain the rest, write the metadata; e->lost and *st set. */
static void trace_finish(struct trace_run *r, struct expect *e,
			 struct lrb_buf_counters *st)
{
	char path[160];

	lrb_buf_flush(r->buf);
	drain(r->chan, r->buf, r->f, e);
	fclose(r->f);
	snprintf(path, sizeof(path), "%s/metadata", r->trace);
	write_metadata(r->chan, path);
	lrb_buf_stats(r->buf, st);
	e->lost = lrb_buf_lost(r->buf);
}

/* The trace read by babeltrace2 (and lrb-dump) as @e expects; teardown. */
static void trace_check(struct trace_run *r, const struct expect *e)
{
	check_babeltrace(r->trace, e);
	if (lrb_dump)
		check_lrb_dump(r->trace, e);
	lrb_reader_close(r->buf);
	lrb_channel_destroy(r->chan);
}

/*
 * Records discarded after a later record was reserved become skip records:
 * alone or several in a row, first in a packet (right after a flush),
 * between records, and ending a packet (the flush closes the packet while
 * they are reserved). Neither babeltrace2 nor lrb-dump may show them, nor
 * count them as discarded; the records committed read back exactly.
 */
static void run_skips(const char *name, const struct lrb_config *cfg)
{
	static struct expect e;
	static u32 committed[4096];
	unsigned long nc = 0;
	struct lrb_buf_counters st;
	struct lrb_ctx c[3];
	struct trace_run r;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	unsigned int i, k;
	u32 seq = 1;

	trace_open(&r, name, cfg, &e);
	chan = r.chan;
	buf = r.buf;
	for (i = 0; i < 600; i++) {
		unsigned int pattern = i % 6;

		/* a record first in its packet */
		if (!pattern)
			lrb_buf_flush(buf);
		for (k = 0; k < 3; k++)
			reserve_small(cfg, chan, &c[k], seq + k);
		/* patterns 0-2 start a packet, 3-5 end one */
		if (pattern == 3 || pattern == 4 || pattern == 5)
			lrb_buf_flush(buf);
		switch (pattern) {
		case 0: case 3:	/* first (or last) alone */
			CHECK_EQ(lrb_discard(cfg, &c[0]), 0);
			lrb_commit(cfg, &c[1]);
			lrb_commit(cfg, &c[2]);
			committed[nc++] = seq + 1;
			committed[nc++] = seq + 2;
			break;
		case 1: case 4:	/* two in a row, then a record (or the end) */
			lrb_commit(cfg, &c[0]);
			CHECK_EQ(lrb_discard(cfg, &c[2]), 0);
			CHECK_EQ(lrb_discard(cfg, &c[1]), 0);
			committed[nc++] = seq;
			break;
		default:	/* all three, in the middle (or to the end) */
			CHECK_EQ(lrb_discard(cfg, &c[1]), 0);
			CHECK_EQ(lrb_discard(cfg, &c[0]), 0);
			CHECK_EQ(lrb_discard(cfg, &c[2]), 0);
			reserve_small(cfg, chan, &c[0], seq + 3);
			lrb_commit(cfg, &c[0]);
			committed[nc++] = seq + 3;
			break;
		}
		/* no multiple of 5: those are "big" events in check_event() */
		seq += 5;
		/* a flush closes a packet: make room for the next ones */
		drain(chan, buf, r.f, &e);
	}
	trace_finish(&r, &e, &st);
	CHECK_EQ(e.lost, 0);
	CHECK_EQ(st.records_written, nc);
	CHECK_EQ(e.n, nc);
	for (i = 0; i < nc && i < e.n; i++)
		if (e.seq[i] != committed[i]) {
			CHECK_EQ(e.seq[i], committed[i]);
			break;
		}
	CHECK(e.skipped > 0);
	trace_check(&r, &e);
}

/*
 * Write @nr records with a reader that drains only every @drain_every,
 * so that a small buffer loses some, then check the trace.
 */
static void run_trace(const char *name, const struct lrb_config *cfg,
		      unsigned int nr, unsigned int drain_every)
{
	static struct expect e;
	struct lrb_buf_counters st;
	struct trace_run r;
	unsigned int i;

	trace_open(&r, name, cfg, &e);
	for (i = 0; i < nr; i++) {
		write_one(cfg, r.chan, i);
		if (i % drain_every == drain_every - 1)
			drain(r.chan, r.buf, r.f, &e);
	}
	trace_finish(&r, &e, &st);
	/* the runs must exercise what they claim to, and lose nothing else */
	CHECK(e.lost > 0);
	CHECK_EQ(e.n + e.lost, nr);
	CHECK_EQ(e.last_discarded, e.lost);
	if (cfg->mode == LRB_MODE_OVERWRITE) {
		CHECK(e.last_seq - e.first_seq + 1 > e.packets);
		CHECK(e.first_discarded > 0);
		CHECK_EQ(e.lost, st.lost_overwrite);
		CHECK_EQ(e.seq[e.n - 1], nr - 1);
	}
	trace_check(&r, &e);
}

int main(int argc, char **argv)
{
	char cmd[300];
	int ret;

	if (argc == 3 && !strcmp(argv[1], "--lrb-dump")) {
		lrb_dump = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: unit_ctf [--lrb-dump COMMAND]\n");
		return 2;
	}
	test_main_begin(120);
	if (system("babeltrace2 --version >/dev/null 2>&1")) {
		fprintf(stderr,
			"unit_ctf: babeltrace2 not found: run scripts/setup.sh (or apt-get install babeltrace2)\n");
		return 1;
	}
	if (!mkdtemp(dir)) {
		perror("unit_ctf: mkdtemp");
		return 1;
	}
	run_trace("compact-discard", &cfg_compact_discard, 3000, 1500);
	run_trace("large-overwrite", &cfg_large_overwrite, 3000, 1500);
	run_skips("compact-skips", &cfg_compact_discard);
	run_skips("large-skips", &cfg_large_overwrite);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ret = system(cmd);
	(void)ret;
	return test_main_end("unit_ctf");
}
