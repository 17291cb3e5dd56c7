// SPDX-License-Identifier: GPL-2.0
/*
 * LRB_EVENT() (lrb/event.h) against babeltrace2: events with every kind of
 * field are written with their generated write functions into a channel,
 * stored as a trace directory with the metadata lib/metadata.c generates
 * from their descriptions, and babeltrace2 must print every field of every
 * record exactly as expected: integers at their limits, enumerations,
 * floats, arrays, empty and maximum-length sequences, strings with
 * non-ASCII bytes, quotes and backslashes, and the longest string a
 * sub-buffer holds. Ids beyond the compact header's take the extended
 * header. Inconsistent event lists are refused.
 *
 *   unit_event [--lrb-dump COMMAND]
 *
 * --lrb-dump also checks that lrb-dump prints every record, and the floats
 * as babeltrace2 does (tests/run.sh runs it on s390x traces too).
 */
#include <float.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <lrb/event.h>
#include "test.h"

static const struct lrb_enum_label op_labels[] = {
	{ "READ", 0 },
	{ "WRITE", 1 },
	{ "FLUSH", 2 },
};

static const struct lrb_enum_label level_labels[] = {
	{ "low", -1000000 },
	{ "zero", 0 },
	{ "h\xc3\xa9igh", 2147483647 },
};

LRB_EVENT(ints, 1,
	  LRB_INTEGER(uint8_t, a_u8),
	  LRB_INTEGER(uint16_t, a_u16),
	  LRB_INTEGER(uint32_t, a_u32),
	  LRB_INTEGER(uint64_t, a_u64),
	  LRB_INTEGER(int8_t, a_s8),
	  LRB_INTEGER(int16_t, a_s16),
	  LRB_INTEGER(int32_t, a_s32),
	  LRB_INTEGER(int64_t, a_s64));

LRB_EVENT(enums, 2,
	  LRB_ENUM(uint8_t, op, op_labels),
	  LRB_ENUM(int32_t, level, level_labels));

/* id 31: the compact header's extended marker, so always extended */
LRB_EVENT(floats, 31,
	  LRB_FLOAT(float, f),
	  LRB_FLOAT(double, d));

LRB_EVENT(arrays, 3,
	  LRB_ARRAY(int16_t, a, 3),
	  LRB_ARRAY(uint64_t, b, 2),
	  LRB_ARRAY_TEXT(comm, 16));

LRB_EVENT(seqs, 4,
	  LRB_INTEGER(uint8_t, n),
	  LRB_SEQUENCE(uint8_t, bytes, n),
	  LRB_INTEGER(uint16_t, tn),
	  LRB_SEQUENCE_TEXT(text, tn),
	  LRB_SEQUENCE(int32_t, words, n));

LRB_EVENT(strs, 1000,
	  LRB_INTEGER(uint32_t, seq),
	  LRB_STRING(s));

static const struct lrb_event_desc *const all_events[] = {
	&lrb_event_ints, &lrb_event_enums, &lrb_event_floats,
	&lrb_event_arrays, &lrb_event_seqs, &lrb_event_strs,
};

#define SUBBUF_SIZE 8192UL
/* the longest payload of an event with an extended header */
#define MAX_PAYLOAD (SUBBUF_SIZE - LRB_PACKET_HEADER_SIZE - LRB_EXTENDED_HEADER_SIZE)
/* the longest string of strs: its seq and the NUL take 5 bytes */
#define MAX_STRING (MAX_PAYLOAD - 5)

static u64 now = 1000;

static u64 test_clock(void)
{
	return now;
}

static const struct lrb_config cfg =
	TEST_CONFIG(LRB_MODE_DISCARD, LRB_ALLOC_GLOBAL, LRB_WAKEUP_BY_WRITER,
		    LRB_HEADER_COMPACT, 27, .clock_read = test_clock);

static char dir[] = "/tmp/lrb-unit-event-XXXXXX";
static const char *lrb_dump;

/* What babeltrace2 must print for each record, in order. */
static char *expect[64];
static unsigned int nr_expect;
/* lrb-dump's "f=... d=..." of each floats record, in order. */
static char *expect_floats[8];
static unsigned int nr_floats;

static void expect_add(char *text)
{
	REQUIRE(text);
	REQUIRE(nr_expect < ARRAY_SIZE(expect));
	expect[nr_expect++] = text;
}

/* A record written: its time advances, so the order is certain. */
static void written(int ret, char *text)
{
	CHECK_EQ(ret, 0);
	now += 10;
	if (!ret)
		expect_add(text);
	else
		free(text);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static void write_ints(struct lrb_chan *chan)
{
	written(lrb_write_ints(&cfg, chan, 0, 0, 0, 0, 0, 0, 0, 0),
		fmt("{ a_u8 = 0, a_u16 = 0, a_u32 = 0, a_u64 = 0, a_s8 = 0, a_s16 = 0, a_s32 = 0, a_s64 = 0 }"));
	written(lrb_write_ints(&cfg, chan, UINT8_MAX, UINT16_MAX, UINT32_MAX,
			       UINT64_MAX, INT8_MAX, INT16_MAX, INT32_MAX,
			       INT64_MAX),
		fmt("{ a_u8 = 255, a_u16 = 65535, a_u32 = 4294967295, a_u64 = 18446744073709551615, a_s8 = 127, a_s16 = 32767, a_s32 = 2147483647, a_s64 = 9223372036854775807 }"));
	written(lrb_write_ints(&cfg, chan, 1, 2, 3, 4, INT8_MIN, INT16_MIN,
			       INT32_MIN, INT64_MIN),
		fmt("{ a_u8 = 1, a_u16 = 2, a_u32 = 3, a_u64 = 4, a_s8 = -128, a_s16 = -32768, a_s32 = -2147483648, a_s64 = -9223372036854775808 }"));
}

static void write_enums(struct lrb_chan *chan)
{
	written(lrb_write_enums(&cfg, chan, 1, -1000000),
		fmt("{ op = ( \"WRITE\" : container = 1 ), level = ( \"low\" : container = -1000000 ) }"));
	written(lrb_write_enums(&cfg, chan, 2, INT32_MAX),
		fmt("{ op = ( \"FLUSH\" : container = 2 ), level = ( \"h\xc3\xa9igh\" : container = 2147483647 ) }"));
	/* a value without a name */
	written(lrb_write_enums(&cfg, chan, 7, 5),
		fmt("{ op = ( <unknown> : container = 7 ), level = ( <unknown> : container = 5 ) }"));
}

/* babeltrace2 and lrb-dump print floats with %g: values it prints exactly */
static void write_float(struct lrb_chan *chan, float f, double d)
{
	written(lrb_write_floats(&cfg, chan, f, d),
		fmt("{ f = %g, d = %g }", f, d));
	if (nr_floats < ARRAY_SIZE(expect_floats))
		expect_floats[nr_floats++] = fmt("f=%g d=%g", f, d);
}

static void write_floats(struct lrb_chan *chan)
{
	write_float(chan, 1.5f, -0.25);
	write_float(chan, 0.0f, 1e300);
	write_float(chan, -65536.0f, -3.0625e-300);
	write_float(chan, FLT_MAX, DBL_MAX);
	/* what %g prints, spelled out once */
	CHECK(!strcmp(expect[nr_expect - 4], "{ f = 1.5, d = -0.25 }"));
	CHECK(!strcmp(expect[nr_expect - 3], "{ f = 0, d = 1e+300 }"));
}

static void write_arrays(struct lrb_chan *chan)
{
	static const int16_t a[3] = { -1, 0, INT16_MAX };
	static const uint64_t b[2] = { UINT64_MAX, 42 };
	/* text stops at the first NUL */
	static const char comm[16] = "kworker/0:1";
	static const char full[16] = "0123456789abcdef";

	written(lrb_write_arrays(&cfg, chan, a, b, comm),
		fmt("{ a = [ [0] = -1, [1] = 0, [2] = 32767 ], b = [ [0] = 18446744073709551615, [1] = 42 ], comm = \"kworker/0:1\" }"));
	written(lrb_write_arrays(&cfg, chan, a, b, full),
		fmt("{ a = [ [0] = -1, [1] = 0, [2] = 32767 ], b = [ [0] = 18446744073709551615, [1] = 42 ], comm = \"0123456789abcdef\" }"));
}

/* "[ [0] = v0, [1] = v1, ... ]" for @n values from @v(i). */
static char *list(unsigned int n, long long (*v)(unsigned int))
{
	size_t size = 16 + n * 32, len;
	char *s = malloc(size);
	unsigned int i;

	if (!s)
		return NULL;
	len = snprintf(s, size, "[");
	for (i = 0; i < n; i++)
		len += snprintf(s + len, size - len, "%s [%u] = %lld",
				i ? "," : "", i, v(i));
	snprintf(s + len, size - len, " ]");
	return s;
}

static long long byte_v(unsigned int i)
{
	return (uint8_t)(i * 7 + 1);
}

static long long word_v(unsigned int i)
{
	return (int32_t)(i * 2654435761U);
}

static void write_seqs(struct lrb_chan *chan)
{
	uint8_t bytes[255];
	int32_t words[255];
	char *b, *w;
	unsigned int i;

	for (i = 0; i < 255; i++) {
		bytes[i] = byte_v(i);
		words[i] = word_v(i);
	}
	/* empty sequences: nothing is read at their pointers */
	written(lrb_write_seqs(&cfg, chan, 0, bytes, 0, "", words),
		fmt("{ n = 0, bytes = [ ], tn = 0, text = \"\", words = [ ] }"));
	/* the longest a uint8_t length counts */
	b = list(255, byte_v);
	w = list(255, word_v);
	written(lrb_write_seqs(&cfg, chan, 255, bytes, 5, "a\"b\\c", words),
		fmt("{ n = 255, bytes = %s, tn = 5, text = \"a\\\"b\\\\c\", words = %s }",
		    b, w));
	free(b);
	free(w);
	written(lrb_write_seqs(&cfg, chan, 1, bytes, 4, "\xe2\x9c\x93!", words),
		fmt("{ n = 1, bytes = [ [0] = 1 ], tn = 4, text = \"\xe2\x9c\x93!\", words = [ [0] = 0 ] }"));
}

static void write_strs(struct lrb_chan *chan, struct lrb_buf *buf)
{
	char *big = malloc(MAX_STRING + 2);
	struct lrb_buf_counters st;

	REQUIRE(big);
	written(lrb_write_strs(&cfg, chan, 1, ""), fmt("{ seq = 1, s = \"\" }"));
	written(lrb_write_strs(&cfg, chan, 2, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
		fmt("{ seq = 2, s = \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\" }"));
	written(lrb_write_strs(&cfg, chan, 3, "say \"hi\"\\n \\ 'x'\ttab"),
		fmt("{ seq = 3, s = \"say \\\"hi\\\"\\\\n \\\\ \\'x\\'\\ttab\" }"));
	written(lrb_write_strs(&cfg, chan, 4, NULL),
		fmt("{ seq = 4, s = \"(null)\" }"));
	/* the longest string a sub-buffer holds, then one byte more */
	memset(big, 'x', MAX_STRING + 1);
	big[MAX_STRING] = '\0';
	written(lrb_write_strs(&cfg, chan, 5, big),
		fmt("{ seq = 5, s = \"%s\" }", big));
	big[MAX_STRING] = 'y';
	big[MAX_STRING + 1] = '\0';
	CHECK_EQ(lrb_write_strs(&cfg, chan, 6, big), -EMSGSIZE);
	lrb_buf_stats(buf, &st);
	CHECK_EQ(st.lost_big, 1);
	CHECK_EQ(lrb_buf_lost(buf), 1);
	free(big);
}

static void drain(struct lrb_chan *chan, struct lrb_buf *buf, FILE *f)
{
	static u8 data[SUBBUF_SIZE];
	struct lrb_subbuf sb;

	while (!lrb_get_next_subbuf(buf, &sb)) {
		REQUIRE(sb.packet_size <= sizeof(data));
		lrb_subbuf_copy(chan, &sb, 0, data, sb.packet_size);
		CHECK_EQ(fwrite(data, 1, sb.packet_size, f), sb.packet_size);
		CHECK_EQ(lrb_put_subbuf(buf, &sb), 0);
	}
}

static void write_metadata(struct lrb_chan *chan, const char *path)
{
	struct lrb_metadata_attr attr = {
		.clock_freq = 1000000000,
		.events = all_events,
		.nr_events = ARRAY_SIZE(all_events),
	};
	FILE *f = fopen(path, "w");
	char *text;
	int len;

	REQUIRE(f);
	len = lrb_metadata_format(chan, &attr, NULL, 0);
	REQUIRE(len > 0);
	text = malloc(len + 1);
	REQUIRE(text);
	CHECK_EQ(lrb_metadata_format(chan, &attr, text, len + 1), len);
	CHECK_EQ(strlen(text), len);
	fputs(text, f);
	fclose(f);
	free(text);
}

/* Run babeltrace2 and compare each event's fields with expect[]. */
static void check_babeltrace(const char *trace)
{
	static const char ctx_end[] = " }, { ";
	unsigned int n = 0, bad = 0;
	size_t size = 0;
	char *cmd, *line = NULL;
	FILE *p;

	cmd = fmt("babeltrace2 %s 2>%s/bt2.err", trace, dir);
	REQUIRE(cmd);
	p = popen(cmd, "r");
	free(cmd);
	REQUIRE(p);
	while (getline(&line, &size, p) > 0) {
		char *fields = strstr(line, ctx_end);

		line[strcspn(line, "\n")] = '\0';
		if (n < nr_expect && fields &&
		    !strcmp(fields + sizeof(ctx_end) - 3, expect[n])) {
			n++;
			continue;
		}
		if (bad++ < 5)
			fprintf(stderr, "unit_event: record %u: babeltrace2 printed\n  %.300s\nexpected\n  %.300s\n",
				n, line, n < nr_expect ? expect[n] : "nothing");
		n++;
	}
	free(line);
	CHECK_EQ(pclose(p), 0);
	CHECK_EQ(bad, 0);
	CHECK_EQ(n, nr_expect);
}

/* Run lrb-dump: every record, and the floats as babeltrace2 prints them. */
static void check_lrb_dump(const char *trace)
{
	unsigned int n = 0, floats = 0;
	size_t size = 0;
	char *cmd, *line = NULL;
	FILE *p;

	cmd = fmt("%s %s 2>%s/dump.err", lrb_dump, trace, dir);
	REQUIRE(cmd);
	p = popen(cmd, "r");
	free(cmd);
	REQUIRE(p);
	while (getline(&line, &size, p) > 0) {
		char *f = strstr(line, " floats: ");

		line[strcspn(line, "\n")] = '\0';
		n++;
		if (!f)
			continue;
		if (floats >= nr_floats ||
		    strcmp(f + strlen(" floats: "), expect_floats[floats])) {
			fprintf(stderr, "unit_event: lrb-dump printed\n  %s\nexpected\n  %s\n",
				line, floats < nr_floats ? expect_floats[floats] : "nothing");
			CHECK(0);
		}
		floats++;
	}
	free(line);
	CHECK_EQ(pclose(p), 0);
	CHECK_EQ(n, nr_expect);
	CHECK_EQ(floats, nr_floats);
}

static void test_babeltrace(void)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = SUBBUF_SIZE, .num_subbuf = 4, .nr_cpus = 1,
	};
	char *trace, *path;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	FILE *f;

	trace = fmt("%s/trace", dir);
	REQUIRE(trace && !mkdir(trace, 0755));
	REQUIRE(!lrb_channel_create(&cfg, &attr, &chan));
	buf = lrb_channel_nth_buf(chan, 0);
	REQUIRE(!lrb_reader_open(buf));
	path = fmt("%s/stream_0", trace);
	f = fopen(path, "w");
	REQUIRE(f);
	write_ints(chan);
	write_enums(chan);
	write_floats(chan);
	write_arrays(chan);
	write_seqs(chan);
	drain(chan, buf, f);
	write_strs(chan, buf);
	lrb_buf_flush(buf);
	drain(chan, buf, f);
	fclose(f);
	free(path);
	path = fmt("%s/metadata", trace);
	write_metadata(chan, path);
	free(path);
	check_babeltrace(trace);
	if (lrb_dump)
		check_lrb_dump(trace);
	lrb_reader_close(buf);
	lrb_channel_destroy(chan);
	free(trace);
	while (nr_expect)
		free(expect[--nr_expect]);
	while (nr_floats)
		free(expect_floats[--nr_floats]);
}

/* Each inconsistent event list is refused with -EINVAL. */
static const struct lrb_enum_label bad_quote[] = { { "a\"b", 1 } };
static const struct lrb_enum_label bad_range[] = { { "big", 256 } };
LRB_EVENT(dup_id, 1, LRB_INTEGER(uint8_t, x));
LRB_EVENT(ints_again, 2, LRB_INTEGER(uint8_t, x));
LRB_EVENT(label_quote, 6, LRB_ENUM(uint8_t, e, bad_quote));
LRB_EVENT(label_range, 7, LRB_ENUM(uint8_t, e, bad_range));

/* What LRB_EVENT() refuses at compile time, described by hand. */
static const struct lrb_event_field later_len[] = {
	{ .name = "d", .kind = LRB_KIND_SEQUENCE, .size = 1, .length_field = "n" },
	{ .name = "n", .kind = LRB_KIND_INTEGER, .size = 1 },
};
static const struct lrb_event_field signed_len[] = {
	{ .name = "n", .kind = LRB_KIND_INTEGER, .size = 1, .is_signed = true },
	{ .name = "d", .kind = LRB_KIND_SEQUENCE, .size = 1, .length_field = "n" },
};
static const struct lrb_event_field twice[] = {
	{ .name = "x", .kind = LRB_KIND_INTEGER, .size = 1 },
	{ .name = "x", .kind = LRB_KIND_STRING, .size = 1 },
};
static const struct lrb_event_desc ev_later_len = {
	.name = "later_len", .id = 9, .fields = later_len, .nr_fields = 2,
};
static const struct lrb_event_desc ev_signed_len = {
	.name = "signed_len", .id = 10, .fields = signed_len, .nr_fields = 2,
};
static const struct lrb_event_desc ev_twice = {
	.name = "twice", .id = 11, .fields = twice, .nr_fields = 2,
};

static void test_refused(void)
{
	const struct lrb_event_desc *const lists[][2] = {
		{ &lrb_event_ints, &lrb_event_dup_id },
		{ &lrb_event_enums, &lrb_event_ints_again },
		{ &lrb_event_ints, &lrb_event_ints },
		{ &lrb_event_label_quote, NULL },
		{ &lrb_event_label_range, NULL },
		{ &ev_later_len, NULL },
		{ &ev_signed_len, NULL },
		{ &ev_twice, NULL },
	};
	struct lrb_chan_attr attr = {
		.subbuf_size = 4096, .num_subbuf = 2, .nr_cpus = 1,
	};
	struct lrb_metadata_attr meta = { .clock_freq = 1000000000 };
	struct lrb_chan *chan;
	unsigned int i;

	REQUIRE(!lrb_channel_create(&cfg, &attr, &chan));
	for (i = 0; i < ARRAY_SIZE(lists); i++) {
		meta.events = lists[i];
		meta.nr_events = lists[i][1] ? 2 : 1;
		CHECK_EQ(lrb_metadata_format(chan, &meta, NULL, 0), -EINVAL);
	}
	/* each of them alone is fine */
	meta.events = lists[0];
	meta.nr_events = 1;
	CHECK(lrb_metadata_format(chan, &meta, NULL, 0) > 0);
	meta.events = &lists[0][1];
	CHECK(lrb_metadata_format(chan, &meta, NULL, 0) > 0);
	lrb_channel_destroy(chan);
}

int main(int argc, char **argv)
{
	char *cmd;
	int ret;

	if (argc == 3 && !strcmp(argv[1], "--lrb-dump")) {
		lrb_dump = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: unit_event [--lrb-dump COMMAND]\n");
		return 2;
	}
	test_main_begin(120);
	if (system("babeltrace2 --version >/dev/null 2>&1")) {
		fprintf(stderr,
			"unit_event: babeltrace2 not found: run scripts/setup.sh (or apt-get install babeltrace2)\n");
		return 1;
	}
	if (!mkdtemp(dir)) {
		perror("unit_event: mkdtemp");
		return 1;
	}
	TEST_RUN(test_babeltrace);
	TEST_RUN(test_refused);
	cmd = fmt("rm -rf %s", dir);
	ret = cmd ? system(cmd) : 1;
	free(cmd);
	(void)ret;
	return test_main_end("unit_event");
}
