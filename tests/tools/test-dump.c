// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lrb-dump (run by tests/tools/test-dump.sh):
 * - traces written by liblrb (test-dump-gen.h): two CPUs with discarded
 *   records, an overwrite buffer with lost packets, compact headers of 8
 *   timestamp bits (wrapping every 26 records): lrb-dump's text and JSON lines are exactly
 *   the expected ones (test-dump-expect.h), its loss notices and summary
 *   add up to liblrb's counters, and babeltrace2 --clock-cycles and
 *   --clock-seconds print the same events, timestamps and numbers;
 * - the options, and the errors of bad directories;
 * - the decoding core in this process (as the fuzzer runs it) on the
 *   stream truncated at every byte and the metadata cut at every byte,
 *   and on random byte flips of both; then the lrb-dump binary on a
 *   sample of those files: exit status 1 with "FILE: offset N: ...", or
 *   0 when the damage left a valid trace, never a crash or a sanitizer
 *   report;
 * - the metadata parser on valid and invalid snippets.
 *
 * Usage: test-dump LRB_DUMP (the binary to run, e.g. an ASan build).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "../user/test.h"
#include "dump.h"
#include "test-dump-expect.h"

static const char *lrb_dump;
static char tmp[] = "/tmp/lrb-test-dump-XXXXXX";

/* ------------------------------------------------------------------ */
/* Files and commands.                                                */

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "test-dump: cannot write %s\n", path);
		exit(1);
	}
}

static char *read_all(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	FILE *f = fopen(path, "r");
	size_t n;

	if (!buf || !f) {
		fprintf(stderr, "test-dump: cannot read %s\n", path);
		exit(1);
	}
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				exit(1);
		}
	}
	fclose(f);
	buf[len] = 0;
	return buf;
}

/* A trace directory: metadata and stream files "test_<cpu>". */
static void write_trace(const char *dir, const char *meta, size_t mlen,
			struct gen_stream *g, unsigned int nr)
{
	char path[512];
	unsigned int i;

	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/metadata", dir);
	write_file(path, meta, mlen);
	for (i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "%s/test_%u", dir, i);
		write_file(path, g[i].data, g[i].len);
	}
}

/*
 * Run "@cmd", its stdout and stderr into malloc'd strings; returns the
 * exit status, or 128 + signal. A sanitizer report fails a check.
 */
static int run(const char *cmd, char **out, char **err)
{
	char full[2048], po[600], pe[600];
	int st;

	snprintf(po, sizeof(po), "%s/out", tmp);
	snprintf(pe, sizeof(pe), "%s/err", tmp);
	snprintf(full, sizeof(full), "%s >%s 2>%s", cmd, po, pe);
	st = system(full);
	*out = read_all(po);
	*err = read_all(pe);
	if (strstr(*err, "Sanitizer") || strstr(*err, "runtime error")) {
		fprintf(stderr, "test-dump: sanitizer report from: %s\n%s", cmd,
			*err);
		CHECK(!"sanitizer report");
	}
	if (st == -1 || !WIFEXITED(st))
		return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return WEXITSTATUS(st);
}

/* ------------------------------------------------------------------ */
/* Traces and what lrb-dump prints for them.                          */

struct trace {
	const char *name;
	const struct lrb_config *cfg;
	unsigned int cpus;
	unsigned int nr;
	unsigned int drain_every;
	char dir[400];
	char *meta;
	size_t mlen;
	struct gen_stream g[2];
};

static struct trace traces[] = {
	{ .name = "compact-2cpu-discard", .cfg = &gen_compact_discard,
	  .cpus = 2, .nr = 3000, .drain_every = 1500 },
	{ .name = "large-overwrite", .cfg = &gen_large_overwrite,
	  .cpus = 1, .nr = 3000, .drain_every = 1500 },
	{ .name = "compact8", .cfg = &gen_compact8_discard,
	  .cpus = 1, .nr = 600, .drain_every = 100 },
};

/* The records of every stream of @t, in time order (no ties by design). */
struct merged {
	const struct gen_rec *r;
	unsigned int cpu;
};

static unsigned long merge(const struct trace *t, struct merged *m)
{
	unsigned long i[2] = { 0, 0 }, n = 0;

	for (;;) {
		int c = -1;
		unsigned int k;

		for (k = 0; k < t->cpus; k++)
			if (i[k] < t->g[k].nr &&
			    (c < 0 || t->g[k].recs[i[k]].ts <
					      t->g[c].recs[i[c]].ts))
				c = k;
		if (c < 0)
			return n;
		m[n].r = &t->g[c].recs[i[c]++];
		m[n++].cpu = c;
	}
}

static bool is_event_line(const char *line, bool json)
{
	return json ? !strncmp(line, "{\"type\":\"event\"", 15) :
		      !strstr(line, " discarded: ") && !strstr(line, " lost: ");
}

/*
 * The count of a loss notice: the number after @key ("up to" it for the
 * first packet of a stream that is not packet 0).
 */
static bool notice(const char *line, const char *key, unsigned long long *c)
{
	const char *p = strstr(line, key);

	if (!p)
		return false;
	p += strlen(key);
	if (!strncmp(p, "up to ", 6))
		p += 6;
	return sscanf(p, "%llu", c) == 1;
}

/* lrb-dump's lines against the expected ones; notices summed. */
static void check_lines(struct trace *t, const char *opts, bool json,
			bool cycles)
{
	static struct merged m[8192];
	unsigned long n = merge(t, m), k = 0, bad = 0;
	unsigned long long disc = 0, lost = 0, c;
	unsigned long want_disc = 0, want_lost = 0;
	char cmd[1024], *out, *err, *line, *save;
	struct sb b;
	unsigned int i;
	int st;

	for (i = 0; i < t->cpus; i++) {
		want_disc += t->g[i].discarded;
		want_lost += t->g[i].last_seq - t->g[i].first_seq + 1 -
			     t->g[i].packets;
	}
	snprintf(cmd, sizeof(cmd), "%s %s %s", lrb_dump, opts, t->dir);
	st = run(cmd, &out, &err);
	CHECK_EQ(st, 0);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!is_event_line(line, json)) {
			if (notice(line, json ? "\"events\":" : " discarded: ", &c))
				disc += c;
			else if (notice(line, json ? "\"packets\":" : " lost: ", &c))
				lost += c;
			else
				CHECK(!"unexpected notice line");
			continue;
		}
		if (k >= n) {
			k++;
			continue;
		}
		expect_line(&b, m[k].r, m[k].cpu, json, cycles);
		if (strcmp(line, b.buf) && bad++ < 5)
			fprintf(stderr, "%s %s: line %lu:\n  got:  %s\n  want: %s\n",
				t->name, opts, k, line, b.buf);
		k++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(k, n);
	CHECK_EQ(disc, want_disc);
	CHECK_EQ(lost, want_lost);
	snprintf(cmd, sizeof(cmd), "%lu events, %lu discarded, %lu packets lost",
		 n, want_disc, want_lost);
	if (!strstr(err, cmd))
		fprintf(stderr, "%s: summary without '%s':\n%s", t->name, cmd, err);
	CHECK(strstr(err, cmd));
	free(out);
	free(err);
}

/* The numbers of a payload, in order: what two printers must agree on. */
static unsigned int numbers(const char *s, long long *v, unsigned int max)
{
	unsigned int n = 0;

	while (*s && n < max) {
		char *end;

		/* babeltrace2's array indexes: "[3] = " */
		if (*s == '[' && s[1] >= '0' && s[1] <= '9') {
			strtoll(s + 1, &end, 10);
			if (!strncmp(end, "] = ", 4)) {
				s = end + 4;
				continue;
			}
		}
		if ((*s >= '0' && *s <= '9') ||
		    (*s == '-' && s[1] >= '0' && s[1] <= '9')) {
			v[n++] = strtoll(s, &end, 0);
			s = end;
		} else {
			s++;
		}
	}
	return n;
}

/*
 * babeltrace2 and lrb-dump print the same events with the same
 * timestamps (cycles, then seconds) and the same payload numbers.
 */
static void check_babeltrace(struct trace *t, bool seconds)
{
	char cmd[1024], *bo, *be, *lo, *le, *bl, *ll, *bs, *ls;
	unsigned long n = 0, bad = 0;
	unsigned long long disc = 0, c;
	unsigned long want_disc = 0;
	unsigned int i;

	snprintf(cmd, sizeof(cmd), "babeltrace2 %s %s",
		 seconds ? "--clock-seconds" : "--clock-cycles", t->dir);
	CHECK_EQ(run(cmd, &bo, &be), 0);
	snprintf(cmd, sizeof(cmd), "%s %s %s", lrb_dump,
		 seconds ? "" : "--clock-cycles", t->dir);
	CHECK_EQ(run(cmd, &lo, &le), 0);
	bl = strtok_r(bo, "\n", &bs);
	ll = strtok_r(lo, "\n", &ls);
	while (bl || ll) {
		char bts[64], lts[64], bname[64], lname[64], *bp, *lp;
		long long bv[256], lv[256];
		unsigned int bcpu, lcpu, nb, nl;

		while (ll && !is_event_line(ll, false))
			ll = strtok_r(NULL, "\n", &ls);
		if (!bl || !ll)
			break;
		/* [ts] (+delta) name: { cpu_id = N, header_size = 64 }, { ... } */
		bp = strstr(bl, "}, {");
		lp = strchr(ll, ':');
		if (sscanf(bl, "[%63[^]]] %*s %63[^:]: { cpu_id = %u", bts, bname,
			   &bcpu) != 3 || !bp ||
		    sscanf(ll, "[%63[^]]] cpu %u %63[^:]:", lts, &lcpu, lname) != 3 ||
		    !lp) {
			if (bad++ < 5)
				fprintf(stderr, "%s: cannot parse:\n  %s\n  %s\n",
					t->name, bl, ll);
			break;
		}
		nb = numbers(bp + 3, bv, 256);
		nl = numbers(lp + 1, lv, 256);
		/* babeltrace2 pads cycles with zeros */
		if ((seconds ? strcmp(bts, lts) :
			       strtoull(bts, NULL, 10) != strtoull(lts, NULL, 10)) ||
		    strcmp(bname, lname) || bcpu != lcpu || nb != nl ||
		    memcmp(bv, lv, nb * sizeof(bv[0]))) {
			if (bad++ < 5)
				fprintf(stderr, "%s: event %lu differs:\n  babeltrace2: %s\n  lrb-dump:    %s\n",
					t->name, n, bl, ll);
		}
		n++;
		bl = strtok_r(NULL, "\n", &bs);
		ll = strtok_r(NULL, "\n", &ls);
	}
	CHECK(!bl && !ll);
	CHECK_EQ(bad, 0);
	/* babeltrace2 reports the losses after each stream's first packet */
	for (i = 0; i < t->cpus; i++) {
		n -= t->g[i].nr;
		want_disc += t->g[i].discarded - t->g[i].first_discarded;
	}
	CHECK_EQ(n, 0);
	for (bl = strtok_r(be, "\n", &bs); bl; bl = strtok_r(NULL, "\n", &bs)) {
		char what[16];

		if (sscanf(bl, "WARNING: Tracer discarded %llu %15s", &c, what) == 2 &&
		    !strcmp(what, "events"))
			disc += c;
	}
	CHECK_EQ(disc, want_disc);
	free(bo);
	free(be);
	free(lo);
	free(le);
}

static void make_traces(void)
{
	unsigned int i, k;

	for (i = 0; i < ARRAY_SIZE(traces); i++) {
		struct trace *t = &traces[i];

		for (k = 0; k < t->cpus; k++)
			/* CPU 0 on even clock values, CPU 1 on odd ones */
			REQUIRE_EQ(gen_stream(t->cfg, k, t->nr, t->drain_every,
					      false, 1000 + k, 10, &t->g[k]), 0);
		t->meta = gen_metadata(t->cfg, &t->mlen);
		snprintf(t->dir, sizeof(t->dir), "%s/%s", tmp, t->name);
		write_trace(t->dir, t->meta, t->mlen, t->g, t->cpus);
	}
	/* the runs exercise what they claim to */
	CHECK(traces[0].g[0].discarded > 0 && traces[0].g[1].discarded > 0);
	CHECK(traces[0].g[0].lost_all >= traces[0].g[0].discarded);
	CHECK(traces[1].g[0].last_seq - traces[1].g[0].first_seq + 1 >
	      traces[1].g[0].packets);
	/* overwrite: every record written was read or counted lost */
	CHECK_EQ(traces[1].g[0].nr + traces[1].g[0].lost_all, traces[1].nr);
	CHECK_EQ(traces[1].g[0].discarded, traces[1].g[0].lost_all);
	CHECK(traces[2].g[0].packets > 1 && !traces[2].g[0].discarded);
}

static void test_output(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(traces); i++) {
		test_current = traces[i].name;
		check_lines(&traces[i], "--clock-cycles", false, true);
		check_lines(&traces[i], "", false, false);
		check_lines(&traces[i], "--json", true, false);
		check_babeltrace(&traces[i], false);
		check_babeltrace(&traces[i], true);
	}
}

/* ------------------------------------------------------------------ */
/* Options and bad directories.                                       */

static void test_options(void)
{
	struct trace *t = &traces[0];
	char cmd[1024], path[600], *out, *err, *p, *save;
	unsigned long n = 0;

	snprintf(cmd, sizeof(cmd), "%s --cpu 1 -C %s", lrb_dump, t->dir);
	CHECK_EQ(run(cmd, &out, &err), 0);
	for (p = strtok_r(out, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		CHECK(strstr(p, "] cpu 1 "));
		n += is_event_line(p, false);
	}
	CHECK_EQ(n, t->g[1].nr);
	free(out);
	free(err);

	snprintf(cmd, sizeof(cmd), "%s --limit 5 --json %s", lrb_dump, t->dir);
	CHECK_EQ(run(cmd, &out, &err), 0);
	for (n = 0, p = out; (p = strchr(p, '\n')); p++)
		n++;
	CHECK_EQ(n, 5);
	CHECK(strstr(err, "stopped at --limit"));
	free(out);
	free(err);

	snprintf(cmd, sizeof(cmd), "%s --help", lrb_dump);
	CHECK_EQ(run(cmd, &out, &err), 0);
	CHECK(strstr(out, "Usage: lrb-dump"));
	free(out);
	free(err);

	snprintf(cmd, sizeof(cmd), "%s --bogus %s", lrb_dump, t->dir);
	CHECK_EQ(run(cmd, &out, &err), 2);
	free(out);
	free(err);

	snprintf(cmd, sizeof(cmd), "%s %s/nonexistent", lrb_dump, tmp);
	CHECK_EQ(run(cmd, &out, &err), 1);
	CHECK(strstr(err, "lrb-dump: ") && strstr(err, "nonexistent/metadata"));
	free(out);
	free(err);

	/* metadata only: a valid, empty trace */
	snprintf(path, sizeof(path), "%s/empty", tmp);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/empty/metadata", tmp);
	write_file(path, t->meta, t->mlen);
	snprintf(path, sizeof(path), "%s/empty/test_0", tmp);
	write_file(path, "", 0);
	snprintf(cmd, sizeof(cmd), "%s %s/empty", lrb_dump, tmp);
	CHECK_EQ(run(cmd, &out, &err), 0);
	CHECK(!*out && strstr(err, "0 events"));
	free(out);
	free(err);

	/* bad metadata: the file and the line */
	snprintf(path, sizeof(path), "%s/empty/metadata", tmp);
	write_file(path, "trace { major = 2; };\n", 22);
	snprintf(cmd, sizeof(cmd), "%s %s/empty", lrb_dump, tmp);
	CHECK_EQ(run(cmd, &out, &err), 1);
	CHECK(strstr(err, "empty/metadata: line 1: CTF major version 2"));
	free(out);
	free(err);
}

/* ------------------------------------------------------------------ */
/* Damaged streams and metadata.                                      */

static struct dump_meta *parse(const char *text, size_t len, char *err,
			       size_t errlen)
{
	/* an exact copy, so that ASan sees reads past the end */
	char *copy = malloc(len + 1);
	struct dump_meta *m;

	memcpy(copy, text, len);
	m = dump_meta_parse(copy, len, err, errlen);
	free(copy);
	return m;
}

/* Decode @len bytes of @data; the records, or -1 with the error offset. */
static long decode(const struct dump_meta *meta, const uint8_t *data,
		   size_t len, unsigned long long *err_offset)
{
	uint8_t *copy = malloc(len ? len : 1);
	struct dump_stream s;
	struct dump_item it;
	FILE *null = fopen("/dev/null", "w");
	long n = 0;
	int ret;

	memcpy(copy, data, len);
	dump_stream_init(&s, meta, copy, len);
	while ((ret = dump_stream_next(&s, &it)) > 0) {
		dump_print(null, meta, &it, 0);
		dump_print(null, meta, &it, DUMP_JSON);
		n += it.kind == DUMP_ITEM_EVENT;
	}
	fclose(null);
	free(copy);
	*err_offset = s.err_offset;
	if (ret < 0) {
		CHECK(s.err[0]);
		CHECK(s.err_offset <= len);
		return -1;
	}
	return n;
}

/* Cut the compact8 stream at every byte: an error at the cut packet. */
static void test_truncate(void)
{
	struct trace *t = &traces[2];
	const struct gen_stream *g = &t->g[0];
	unsigned long long off, bound[64];
	long before[64], n;
	unsigned int nb = 0, j = 0;
	char err[300], path[600], cmd[1024], *out, *serr, want[700];
	struct dump_meta *meta;
	size_t cut;

	meta = parse(t->meta, t->mlen, err, sizeof(err));
	REQUIRE(meta);
	/* packet boundaries, and the records of the packets before each */
	for (bound[0] = 0; bound[nb] < g->len && nb + 1 < ARRAY_SIZE(bound); nb++) {
		struct lrb_packet_header h;

		memcpy(&h, g->data + bound[nb], sizeof(h));
		bound[nb + 1] = bound[nb] + h.packet_size / 8;
		before[nb] = decode(meta, g->data, bound[nb], &off);
	}
	before[nb] = decode(meta, g->data, bound[nb], &off);
	REQUIRE(bound[nb] == g->len && nb > 2);
	CHECK_EQ(before[nb], g->nr);
	for (cut = 0; cut <= g->len; cut++) {
		bool cli;

		if (j < nb && cut == bound[j + 1])
			j++;
		n = decode(meta, g->data, cut, &off);
		if (cut == bound[j]) {
			CHECK_EQ(n, before[j]);
		} else {
			CHECK_EQ(n, -1);
			/* the header cut short, or its packet_size past the end */
			CHECK(off == bound[j] || off == bound[j] + 32);
		}
		cli = cut - bound[j] <= 1 || cut - bound[j] == 63 ||
		      cut - bound[j] == 64 || cut + 1 == bound[j + 1] ||
		      cut % 1999 == 0;
		if (!cli)
			continue;
		snprintf(path, sizeof(path), "%s/cut/test_0", tmp);
		write_file(path, g->data, cut);
		snprintf(cmd, sizeof(cmd), "%s %s/cut", lrb_dump, tmp);
		if (n >= 0) {
			CHECK_EQ(run(cmd, &out, &serr), 0);
		} else {
			CHECK_EQ(run(cmd, &out, &serr), 1);
			snprintf(want, sizeof(want), "lrb-dump: %s/cut/test_0: offset %llu: ",
				 tmp, off);
			if (!strstr(serr, want))
				fprintf(stderr, "no '%s' in:\n%s", want, serr);
			CHECK(strstr(serr, want));
		}
		free(out);
		free(serr);
	}
	dump_meta_free(meta);
}

static unsigned long long rnd_state = 88172645463325252ULL;

static unsigned long long rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Random flips in the streams and the metadata of every trace. */
static void test_flips(void)
{
	unsigned int i, k, round, cli = 0;
	char err[300], path[600], cmd[1024], *out, *serr;
	unsigned long long off;
	struct dump_meta *meta;
	uint8_t *buf;
	char *text;
	int st;

	for (i = 0; i < ARRAY_SIZE(traces); i++) {
		struct trace *t = &traces[i];
		const struct gen_stream *g = &t->g[0];

		meta = parse(t->meta, t->mlen, err, sizeof(err));
		REQUIRE(meta);
		buf = malloc(g->len);
		for (round = 0; round < 400; round++) {
			memcpy(buf, g->data, g->len);
			for (k = 0; k < 1 + rnd() % 4; k++) {
				size_t at = rnd() % g->len;

				/* packet headers get a fair share of the damage */
				if (rnd() % 2)
					at = at / 4096 * 4096 + rnd() % 64;
				buf[at] ^= 1 << (rnd() % 8);
			}
			decode(meta, buf, g->len, &off);
			if (round % 40)
				continue;
			/* the binary, on a sample */
			snprintf(path, sizeof(path), "%s/flip/test_0", tmp);
			write_file(path, buf, g->len);
			snprintf(path, sizeof(path), "%s/flip/metadata", tmp);
			write_file(path, t->meta, t->mlen);
			snprintf(cmd, sizeof(cmd), "%s %s/flip", lrb_dump, tmp);
			st = run(cmd, &out, &serr);
			CHECK(st == 0 || st == 1);
			if (st == 1)
				CHECK(strstr(serr, "/flip/test_0: offset "));
			cli++;
			free(out);
			free(serr);
		}
		free(buf);
		dump_meta_free(meta);

		text = malloc(t->mlen);
		for (round = 0; round < 1000; round++) {
			struct dump_meta *m;

			memcpy(text, t->meta, t->mlen);
			for (k = 0; k < 1 + rnd() % 3; k++) {
				size_t at = rnd() % t->mlen;

				text[at] = round % 2 ? (char)rnd() :
					   " ;{}[]:=.0189az_\"*/"[rnd() % 20];
			}
			m = parse(text, t->mlen, err, sizeof(err));
			if (!m) {
				CHECK(!strncmp(err, "line ", 5));
				continue;
			}
			decode(m, g->data, g->len, &off);
			dump_meta_free(m);
		}
		free(text);
	}
	CHECK(cli > 0);
}

/* The metadata cut at every byte: an error with a line, or a shorter text. */
static void test_meta_truncate(void)
{
	struct trace *t = &traces[0];
	struct dump_meta *m;
	unsigned long long off;
	unsigned long ok = 0;
	char err[300];
	size_t cut;

	for (cut = 0; cut <= t->mlen; cut++) {
		err[0] = 0;
		m = parse(t->meta, cut, err, sizeof(err));
		if (!m) {
			CHECK(!strncmp(err, "line ", 5));
			continue;
		}
		ok++;
		decode(m, t->g[0].data, t->g[0].len, &off);
		dump_meta_free(m);
	}
	/* from the last event block's end on (but not before the stream's) */
	CHECK(ok > 0 && ok < t->mlen / 2);
}

/* ------------------------------------------------------------------ */
/* The metadata parser on snippets.                                   */

static char *with_events(const struct trace *t, const char *events)
{
	struct lrb_metadata_attr attr = { .clock_freq = FZ_CLOCK_FREQ };
	struct lrb_chan chan = { .cfg = t->cfg, .stream_id = FZ_STREAM_ID };
	static char text[16384];
	int n = lrb_metadata_format(&chan, &attr, text, sizeof(text));

	snprintf(text + n, sizeof(text) - n, "\n%s", events ? events : "");
	return text;
}

/* 12 nested structs: 48 and an integer are one type too deep */
#define S12 "struct { struct { struct { struct { struct { struct { " \
	    "struct { struct { struct { struct { struct { struct { "
#define E12 " } a; } a; } a; } a; } a; } a; } a; } a; } a; } a; } a; } a;"

static void test_parser(void)
{
	static const struct {
		const char *events;
		const char *error;	/* NULL: valid */
	} snips[] = {
		{ "event { name = a; id = 1; fields := struct { uint8_t x; }; };", NULL },
		{ "typedef uint32_t my_t; typealias integer { size = 8; } := unsigned char;\n"
		  "event { name = \"b\"; id = 2; stream_id = 7; loglevel = -1;\n"
		  "  fields := struct { my_t x; unsigned char y[2]; string s;\n"
		  "    enum e : int8_t { A = -3 ... -1, B } z; } align(8); };", NULL },
		{ "event { name = a; id = 1; fields := struct { uint8_t x }; };",
		  "expected ';' after a field" },
		{ "event { name = a; id = 1; fields := struct { u8 x; }; };",
		  "unknown type 'u8'" },
		{ "event { name = a; id = 1; fields := struct { uint8_t d[n]; }; };",
		  "sequence length 'n' is not an unsigned integer field declared before" },
		{ "event { name = a; id = 1; fields := struct { int8_t n; uint8_t d[n]; }; };",
		  "sequence length 'n'" },
		{ "event { name = a; id = 1; fields := struct { uint8_t x; uint8_t x; }; };",
		  "field 'x' declared twice" },
		{ "event { name = a; id = 1; }; event { name = b; id = 1; };",
		  "have the same id 1" },
		{ "event { name = a; id = 1; stream_id = 3; };", "no stream has id 3" },
		{ "event { name = a; fields := struct { }; };", "has no id" },
		{ "event { name = a; id = 1; fields := struct { integer { size = 16; byte_order = middle; } x; }; };",
		  "byte_order must be le, be, network or native" },
		{ "event { name = a; id = 1; fields := struct { integer { size = 65; } x; }; };",
		  "size must be a number from 0 to 64" },
		{ "event { name = a; id = 1; fields := struct { integer { size = 8; align = 3; } x; }; };",
		  "align must be a power of two" },
		{ "event { name = a; id = 1; fields := struct { floating_point { exp_dig = 8; } x; }; };",
		  "exp_dig = 8, mant_dig = 0: only IEEE 754 binary32" },
		{ "event { name = a; id = 1; fields := struct { floating_point { exp_dig = 11; mant_dig = 53; byte_order = be; } d;\n"
		  "  floating_point { exp_dig = 8; mant_dig = 24; align = 32; } f[2]; }; };", NULL },
		{ "event { name = a; id = 1; fields := struct { uint8_t t; variant <t> { uint8_t a; } v; }; };",
		  "variants are not supported in payloads" },
		{ "event { name = a; id = 1; fields := struct { enum : uint8_t { A = 300 } e; }; };",
		  "enum value 300 does not fit in 8 bits" },
		{ "event { name = a; id = 1; fields := struct { uint8_t x[2000000000]; }; };",
		  "at most" },
		{ "event { name = a; id = 1; context := struct { uint8_t x; }; };",
		  "event context is not supported" },
		{ "event { name = a; id = 1; colour = 3; };",
		  "unknown attribute 'colour' in the event block" },
		{ "event { name = \"a\\q\"; id = 1; };", "unsupported escape" },
		{ "/* open comment", "comment not closed" },
		{ "event { name = a; id = 0x1g; };", "bad character 'g' after a number" },
		{ "event { name = a; id = 99999999999999999999; };", "number too large" },
		{ "event { name = a; id = 1; fields := struct { struct s x; }; };",
		  "references to named structs are not supported" },
		{ "typealias " S12 S12 S12 S12 "uint8_t a;" E12 E12 E12
		  " } a; } a; } a; } a; } a; } a; } a; } a; } a; } a; } a; } := deep;",
		  "types nested more than 48 deep" },
		{ "\x01", "unexpected byte 0x01" },
	};
	char err[300];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(snips); i++) {
		const char *text = with_events(&traces[0], snips[i].events);
		struct dump_meta *m = parse(text, strlen(text), err, sizeof(err));

		bool good = snips[i].error ? !m && strstr(err, snips[i].error) :
					     !!m;

		if (!good)
			fprintf(stderr, "parser case %u: want %s, got %s\n", i,
				snips[i].error ? snips[i].error : "valid",
				m ? "valid" : err);
		CHECK(good);
		dump_meta_free(m);
	}
	/* not lrb's packet header */
	{
		static const char bad[] =
			"typealias integer { size = 32; } := uint32_t;\n"
			"trace { major = 1; minor = 8; byte_order = le;\n"
			"\tpacket.header := struct { uint32_t magic; }; };\n";

		CHECK(!parse(bad, strlen(bad), err, sizeof(err)) &&
		      strstr(err, "is not lrb's"));
	}
	/* lrb's packet header, but not in the trace's byte order */
	{
		static const char bad[] =
			"typealias integer { size = 32; } := uint32_t;\n"
			"trace { major = 1; minor = 8; byte_order = le;\n"
			"\tpacket.header := struct { integer { size = 32; byte_order = be; } magic;\n"
			"\t\tuint32_t stream_id; }; };\n";

		CHECK(!parse(bad, strlen(bad), err, sizeof(err)) &&
		      strstr(err, "is not lrb's"));
	}
}

int main(int argc, char **argv)
{
	char cmd[600], path[600];
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: test-dump LRB_DUMP\n");
		return 2;
	}
	lrb_dump = argv[1];
	test_main_begin(600);
	if (!mkdtemp(tmp)) {
		perror("test-dump: mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/cut", tmp);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/flip", tmp);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/cut/metadata", tmp);
	TEST_RUN(make_traces);
	write_file(path, traces[2].meta, traces[2].mlen);
	TEST_RUN(test_output);
	TEST_RUN(test_options);
	TEST_RUN(test_truncate);
	TEST_RUN(test_meta_truncate);
	TEST_RUN(test_flips);
	TEST_RUN(test_parser);
	if (!getenv("TEST_KEEP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		ret = system(cmd);
		(void)ret;
	} else {
		fprintf(stderr, "test-dump: traces kept in %s\n", tmp);
	}
	return test_main_end("test-dump");
}
