// SPDX-License-Identifier: GPL-2.0
/*
 * abireader: consume every cpuN file of an lrb channel using nothing but
 * Documentation/abi.rst. Every structure, ioctl number and constant below is
 * transcribed from that document (no lrb header is included), and so is
 * the payload sizing, from the channel's metadata file. It is the proof that
 * the document is enough to write a consumer (VM scenario 88-abireader):
 * keep it that way, and fix the document, not this file, when they differ.
 *
 *   abireader [--mmap|--read] CHANNEL
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- abi.rst, "Packets" ---- */
#define LRB_PACKET_MAGIC 0xC1FC1FC1u
struct lrb_packet_header {
	uint32_t magic, stream_id;
	uint64_t timestamp_begin, timestamp_end;
	uint64_t content_size, packet_size;	/* bits */
	uint64_t packet_seq_num, events_discarded;
	uint32_t cpu_id, header_size;
};
/* ---- abi.rst, "ioctls" ---- */
struct lrb_buf_info {
	uint64_t subbuf_size, num_subbuf, mmap_len;
	uint32_t cpu, mode, stream_id, watermark;
	uint32_t switch_timer_us, read_timer_us, header, tsc_bits;
	uint64_t clock_freq;
};
struct lrb_subbuf_desc {
	uint64_t pos, seq, content_size, packet_size, mmap_offset;
};
struct lrb_positions {
	uint64_t consumed, produced;
};
#define NCOUNT 12
struct lrb_buf_counters {
	uint64_t records_written, lost_full, lost_wrap, lost_big, lost_nest;
	uint64_t lost_packets, produced, consumed, packets_read, bytes_read;
	uint64_t pages_spliced, lost_overwrite;
};
static const char *const counter_names[NCOUNT] = {
	"records_written", "lost_full", "lost_wrap", "lost_big", "lost_nest",
	"lost_packets", "produced", "consumed", "packets_read", "bytes_read",
	"pages_spliced", "lost_overwrite",
};
/* abi.rst, "The status page" */
#define LRB_STATUS_FINAL 1u
struct lrb_status {
	uint32_t seq, size, flags, cpu;
	uint64_t subbuf_size, num_subbuf, ready, pages_recycled;
	struct lrb_buf_counters counters;
};
_Static_assert(sizeof(struct lrb_status) == 144, "status");
_Static_assert(sizeof(struct lrb_packet_header) == 64, "header");
_Static_assert(sizeof(struct lrb_buf_info) == 64, "info");
_Static_assert(sizeof(struct lrb_subbuf_desc) == 40, "desc");
_Static_assert(sizeof(struct lrb_positions) == 16, "positions");
_Static_assert(sizeof(struct lrb_buf_counters) == 96, "counters");

#define LRB_IOC_GET_INFO	0x8040b900u
#define LRB_IOC_GET_NEXT_SUBBUF	0x8028b901u
#define LRB_IOC_GET_SUBBUF	0xc028b902u
#define LRB_IOC_PUT_SUBBUF	0x0000b903u
#define LRB_IOC_GET_HELD	0x8028b904u
#define LRB_IOC_GET_POSITIONS	0x8010b905u
#define LRB_IOC_FLUSH		0x0000b906u
#define LRB_IOC_GET_COUNTERS	0x8060b907u
#define LRB_IOC_SET_WATERMARK	0x4004b908u
#define LRB_ABI_MODE_DISCARD	0
#define LRB_ABI_MODE_OVERWRITE	1
#define LRB_ABI_HEADER_COMPACT	0
#define LRB_ABI_HEADER_LARGE	1
#define LRB_LARGE_ID_EXTENDED	0xffffffffu
#define LRB_RECORD_ALIGN	4

/* ---- minimal CTF 1.8 TSDL: enough to size each event's payload ---- */
enum tkind { T_INT, T_FLOAT, T_STRING, T_STRUCT, T_ARRAY, T_SEQ };
struct type {
	enum tkind kind;
	unsigned size, align;			/* bits (INT, FLOAT) */
	struct type *elem;			/* ARRAY, SEQ */
	unsigned long len;			/* ARRAY */
	char lenfield[64];			/* SEQ */
	int nfields;				/* STRUCT */
	struct type **ftype;
	char (*fname)[64];
};
struct alias { char name[64]; struct type *t; };
static struct alias aliases[256];
static int naliases;
#define MAXEV 4096
static struct type *event_fields[MAXEV];	/* by event id */

static char **tok;
static int ntok, tp;

static void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("abireader: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void tokenize(const char *s)
{
	int cap = 0;

	while (*s) {
		const char *b = s;

		if (isspace((unsigned char)*s)) { s++; continue; }
		if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");
			s = e ? e + 2 : s + strlen(s);
			continue;
		}
		if (s[0] == '/' && s[1] == '/') {
			while (*s && *s != '\n')
				s++;
			continue;
		}
		if (isalnum((unsigned char)*s) || *s == '_') {
			while (isalnum((unsigned char)*s) || *s == '_')
				s++;
		} else if (*s == '"') {
			for (s++; *s && *s != '"'; s++)
				if (*s == '\\' && s[1])
					s++;
			if (*s)
				s++;
		} else if (!strncmp(s, ":=", 2)) {
			s += 2;
		} else if (!strncmp(s, "...", 3)) {
			s += 3;
		} else {
			s++;
		}
		if (ntok == cap) {
			cap = cap ? cap * 2 : 1024;
			tok = realloc(tok, cap * sizeof(*tok));
			if (!tok)
				fatal("out of memory");
		}
		tok[ntok++] = strndup(b, s - b);
	}
}

static const char *peek(void) { return tp < ntok ? tok[tp] : ""; }
static const char *next(void) { return tp < ntok ? tok[tp++] : ""; }
static void expect(const char *t)
{
	if (strcmp(next(), t))
		fatal("metadata: expected '%s' near token %d ('%s')", t, tp - 1,
		      tp ? tok[tp - 1] : "");
}
/* skip to the ';' ending the current statement, over nested braces */
static void skip_statement(void)
{
	int depth = 0;

	while (tp < ntok) {
		const char *t = next();

		if (!strcmp(t, "{") || !strcmp(t, "(") || !strcmp(t, "["))
			depth++;
		else if (!strcmp(t, "}") || !strcmp(t, ")") || !strcmp(t, "]"))
			depth--;
		else if (!strcmp(t, ";") && depth <= 0)
			return;
	}
}

static struct type *newtype(enum tkind k)
{
	struct type *t = calloc(1, sizeof(*t));

	if (!t)
		fatal("out of memory");
	t->kind = k;
	return t;
}

static unsigned type_align(const struct type *t)
{
	unsigned a = 8;
	int i;

	switch (t->kind) {
	case T_INT: case T_FLOAT: return t->align;
	case T_STRING: return 8;
	case T_ARRAY: case T_SEQ: return type_align(t->elem);
	case T_STRUCT:
		a = t->align ? t->align : 1;
		for (i = 0; i < t->nfields; i++)
			if (type_align(t->ftype[i]) > a)
				a = type_align(t->ftype[i]);
		return a;
	}
	return a;
}

static struct type *parse_type(void);

static struct type *parse_struct_body(void)
{
	struct type *st = newtype(T_STRUCT);

	expect("{");
	while (strcmp(peek(), "}")) {
		struct type *ft = parse_type();
		char name[64];

		snprintf(name, sizeof(name), "%s", next());
		while (!strcmp(peek(), "[")) {
			struct type *a;
			const char *n;

			next();
			n = next();
			if (isdigit((unsigned char)n[0])) {
				a = newtype(T_ARRAY);
				a->len = strtoul(n, NULL, 0);
			} else {
				a = newtype(T_SEQ);
				while (!strcmp(peek(), ".")) {	/* a.b.c: last part */
					next();
					n = next();
				}
				snprintf(a->lenfield, sizeof(a->lenfield), "%s", n);
			}
			expect("]");
			a->elem = ft;
			ft = a;
		}
		expect(";");
		st->ftype = realloc(st->ftype, (st->nfields + 1) * sizeof(*st->ftype));
		st->fname = realloc(st->fname, (st->nfields + 1) * sizeof(*st->fname));
		if (!st->ftype || !st->fname)
			fatal("out of memory");
		st->ftype[st->nfields] = ft;
		memcpy(st->fname[st->nfields], name, sizeof(name));
		st->nfields++;
	}
	expect("}");
	if (!strcmp(peek(), "align")) {
		next();
		expect("(");
		st->align = 8 * strtoul(next(), NULL, 0);
		expect(")");
	}
	return st;
}

/* integer/floating_point { k = v; ... } */
static struct type *parse_attr_type(enum tkind k)
{
	struct type *t = newtype(k);
	int have_align = 0;
	unsigned exp = 0, mant = 0;

	expect("{");
	while (strcmp(peek(), "}")) {
		char key[64];

		snprintf(key, sizeof(key), "%s", next());
		expect("=");
		if (!strcmp(key, "size"))
			t->size = strtoul(next(), NULL, 0);
		else if (!strcmp(key, "align"))
			t->align = strtoul(next(), NULL, 0), have_align = 1;
		else if (!strcmp(key, "exp_dig"))
			exp = strtoul(next(), NULL, 0);
		else if (!strcmp(key, "mant_dig"))
			mant = strtoul(next(), NULL, 0);
		else
			while (strcmp(peek(), ";") && tp < ntok)
				next();
		expect(";");
	}
	expect("}");
	if (k == T_FLOAT)
		t->size = exp + mant;
	if (!have_align)	/* CTF 1.8: byte-aligned if a multiple of 8 */
		t->align = t->size % 8 ? 1 : 8;
	return t;
}

static struct type *parse_type(void)
{
	const char *t = next();
	int i;

	if (!strcmp(t, "integer"))
		return parse_attr_type(T_INT);
	if (!strcmp(t, "floating_point"))
		return parse_attr_type(T_FLOAT);
	if (!strcmp(t, "string")) {
		if (!strcmp(peek(), "{")) {
			tp--;
			next();
			skip_statement();	/* not expected in practice */
			fatal("metadata: string { ... } not supported");
		}
		return newtype(T_STRING);
	}
	if (!strcmp(t, "struct")) {
		if (strcmp(peek(), "{"))
			next();		/* struct name, declared inline */
		return parse_struct_body();
	}
	if (!strcmp(t, "enum")) {
		struct type *base;

		if (strcmp(peek(), ":"))
			next();
		expect(":");
		base = parse_type();
		expect("{");
		while (strcmp(peek(), "}") && tp < ntok)
			next();
		expect("}");
		return base;
	}
	for (i = 0; i < naliases; i++)
		if (!strcmp(aliases[i].name, t))
			return aliases[i].t;
	fatal("metadata: unsupported or unknown type '%s'", t);
	return NULL;
}

static void parse_metadata(const char *text)
{
	tokenize(text);
	while (tp < ntok) {
		const char *t = next();

		if (!strcmp(t, "typealias")) {
			struct type *ty = parse_type();

			expect(":=");
			if (naliases == 256)
				fatal("metadata: too many typealiases");
			snprintf(aliases[naliases].name, 64, "%s", next());
			aliases[naliases++].t = ty;
			expect(";");
		} else if (!strcmp(t, "event")) {
			long id = -1;
			struct type *fields = NULL;

			expect("{");
			while (strcmp(peek(), "}") && tp < ntok) {
				const char *k = next();

				if (!strcmp(k, "id")) {
					expect("=");
					id = strtol(next(), NULL, 0);
					expect(";");
				} else if (!strcmp(k, "fields")) {
					expect(":=");
					fields = parse_type();
					expect(";");
				} else if (!strcmp(k, "context")) {
					fatal("metadata: event context not supported");
				} else {
					skip_statement();
				}
			}
			expect("}");
			expect(";");
			if (id < 0 || id >= MAXEV)
				fatal("metadata: event id %ld not supported", id);
			if (!fields)
				fields = newtype(T_STRUCT);
			event_fields[id] = fields;
		} else {
			tp--;
			skip_statement();
		}
	}
}

/*
 * Size the payload of @t at bit offset *@off from the packet start (CTF
 * aligns fields on absolute offsets), reading at most to bit @endbit of @pkt.
 * Returns 0, or -1 if it does not fit.
 */
struct seqvals { char name[64]; uint64_t v; };
static int size_type(const struct type *t, const unsigned char *pkt,
		     uint64_t *off, uint64_t endbit, struct seqvals *sv, int *nsv,
		     const char *name)
{
	unsigned a = type_align(t);
	uint64_t i, n;
	int f;

	*off = (*off + a - 1) / a * a;
	switch (t->kind) {
	case T_INT:
	case T_FLOAT:
		if (*off + t->size > endbit)
			return -1;
		if (t->kind == T_INT && name && t->size <= 64 && *off % 8 == 0 &&
		    t->size % 8 == 0 && *nsv < 64) {
			uint64_t v = 0;

			memcpy(&v, pkt + *off / 8, t->size / 8);	/* LE */
			snprintf(sv[*nsv].name, 64, "%s", name);
			sv[(*nsv)++].v = v;
		}
		*off += t->size;
		return 0;
	case T_STRING:
		for (;;) {
			if (*off + 8 > endbit)
				return -1;
			*off += 8;
			if (!pkt[*off / 8 - 1])
				return 0;
		}
	case T_STRUCT:
		for (f = 0; f < t->nfields; f++)
			if (size_type(t->ftype[f], pkt, off, endbit, sv, nsv,
				      t->fname[f]))
				return -1;
		return 0;
	case T_ARRAY:
	case T_SEQ:
		n = t->len;
		if (t->kind == T_SEQ) {
			for (f = *nsv - 1; f >= 0; f--)
				if (!strcmp(sv[f].name, t->lenfield))
					break;
			if (f < 0)
				return -1;
			n = sv[f].v;
		}
		for (i = 0; i < n; i++)
			if (size_type(t->elem, pkt, off, endbit, sv, nsv, NULL))
				return -1;
		return 0;
	}
	return -1;
}

/* ---- per-CPU consumer ---- */
struct cpu {
	int n, fd;
	char path[256];
	struct lrb_buf_info info;
	struct lrb_positions pos0, pos1;
	struct lrb_buf_counters c0, c1;
	uint64_t packets, records, bytes, gaps, discarded, next_seq, last_seq;
	uint64_t st_pass, st_fail, st_polls;
	const struct lrb_status *st;
	int failed;
	pthread_t th;
};
static int use_mmap;
static long page_size;

static int perr(struct cpu *c, const char *call)
{
	fprintf(stderr, "abireader: %s: %s: %s\n", c->path, call, strerror(errno));
	c->failed = 1;
	return -1;
}

static int bad(struct cpu *c, uint64_t seq, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "abireader: %s: packet seq %llu: ", c->path,
		(unsigned long long)seq);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	c->failed = 1;
	return -1;
}

static int zeros(const unsigned char *p, uint64_t from, uint64_t to)
{
	for (; from < to; from++)
		if (p[from])
			return 0;
	return 1;
}

/* Validate one packet of @avail readable bytes at @pkt and walk its records. */
static int check_packet(struct cpu *c, const unsigned char *pkt, uint64_t avail)
{
	const struct lrb_buf_info *in = &c->info;
	struct lrb_packet_header h;
	unsigned bits = in->header == LRB_ABI_HEADER_LARGE ? 32 : in->tsc_bits;
	int large = in->header == LRB_ABI_HEADER_LARGE;
	uint64_t mask = (bits == 64 ? ~0ULL : (1ULL << bits) - 1);
	uint32_t id_ext = large ? LRB_LARGE_ID_EXTENDED : (1U << (32 - bits)) - 1;
	uint64_t csize, psize, ts, pos, end, last_end, nrec = 0;

	memcpy(&h, pkt, sizeof(h));
	csize = h.content_size / 8;
	psize = h.packet_size / 8;
	if (h.magic != LRB_PACKET_MAGIC)
		return bad(c, h.packet_seq_num, "magic 0x%x", h.magic);
	if (h.stream_id != in->stream_id)
		return bad(c, h.packet_seq_num, "stream_id %u, GET_INFO says %u",
			   h.stream_id, in->stream_id);
	if (h.cpu_id != (uint32_t)c->n)
		return bad(c, h.packet_seq_num, "cpu_id %u", h.cpu_id);
	if (h.header_size != 64)
		return bad(c, h.packet_seq_num, "header_size %u", h.header_size);
	if (h.content_size % 8 || h.packet_size % 8 || csize < 64 ||
	    csize > psize || psize > in->subbuf_size || psize > avail ||
	    psize != (csize + page_size - 1) / page_size * page_size)
		return bad(c, h.packet_seq_num,
			   "content_size %llu bits, packet_size %llu bits, subbuf_size %llu",
			   (unsigned long long)h.content_size,
			   (unsigned long long)h.packet_size,
			   (unsigned long long)in->subbuf_size);
	if (h.packet_seq_num < c->next_seq)
		return bad(c, h.packet_seq_num, "sequence went back, expected %llu",
			   (unsigned long long)c->next_seq);
	c->gaps += h.packet_seq_num - c->next_seq;
	c->next_seq = h.packet_seq_num + 1;
	c->last_seq = h.packet_seq_num;
	if (h.events_discarded < c->discarded)
		return bad(c, h.packet_seq_num, "events_discarded fell %llu -> %llu",
			   (unsigned long long)c->discarded,
			   (unsigned long long)h.events_discarded);
	c->discarded = h.events_discarded;
	if (h.timestamp_end < h.timestamp_begin && csize > 64)
		return bad(c, h.packet_seq_num, "timestamp_end < timestamp_begin");
	if (!zeros(pkt, csize, avail))
		return bad(c, h.packet_seq_num, "bytes past content_size not zero");

	ts = h.timestamp_begin;
	pos = last_end = h.header_size;
	end = csize;
	while (pos < end) {
		uint32_t w[2], id;
		struct seqvals sv[64];
		int nsv = 0;
		uint64_t off;

		if (pos % LRB_RECORD_ALIGN || pos + (large ? 8 : 4) > end)
			return bad(c, h.packet_seq_num, "record header at %llu",
				   (unsigned long long)pos);
		memcpy(w, pkt + pos, large ? 8 : 4);
		id = large ? w[0] : (w[0] & id_ext);
		if (id == id_ext) {
			if (!large && w[0] >> (32 - bits))
				return bad(c, h.packet_seq_num,
					   "extended header with timestamp bits");
			if (pos + 16 > end)
				return bad(c, h.packet_seq_num, "extended header cut");
			memcpy(&id, pkt + pos + 4, 4);
			memcpy(&ts, pkt + pos + 8, 8);
			pos += 16;
		} else {
			uint64_t low = large ? w[1] : w[0] >> (32 - bits);

			if (low < (ts & mask))
				ts += mask + 1;
			ts = (ts & ~mask) | low;
			pos += large ? 8 : 4;
		}
		if (!nrec && ts != h.timestamp_begin)
			return bad(c, h.packet_seq_num,
				   "first record ts %llu != timestamp_begin %llu",
				   (unsigned long long)ts,
				   (unsigned long long)h.timestamp_begin);
		if (ts > h.timestamp_end)
			return bad(c, h.packet_seq_num,
				   "record %llu ts %llu after timestamp_end %llu",
				   (unsigned long long)nrec, (unsigned long long)ts,
				   (unsigned long long)h.timestamp_end);
		if (id >= MAXEV || !event_fields[id])
			return bad(c, h.packet_seq_num, "record %llu: unknown event id %u",
				   (unsigned long long)nrec, id);
		off = pos * 8;
		if (size_type(event_fields[id], pkt, &off, end * 8, sv, &nsv, NULL))
			return bad(c, h.packet_seq_num,
				   "record %llu (id %u) overruns the content",
				   (unsigned long long)nrec, id);
		last_end = (off + 7) / 8;
		nrec++;
		pos = (last_end + LRB_RECORD_ALIGN - 1) & ~(uint64_t)(LRB_RECORD_ALIGN - 1);
		if (pos < end && !zeros(pkt, last_end, pos))
			return bad(c, h.packet_seq_num, "padding not zero");
	}
	if (last_end != end)
		return bad(c, h.packet_seq_num, "last record ends at %llu, content at %llu",
			   (unsigned long long)last_end, (unsigned long long)end);
	c->records += nrec;
	c->packets++;
	c->bytes += psize;
	return 0;
}

/* read() until end of file; partial reads are allowed anywhere. */
static size_t read_full(struct cpu *c, unsigned char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(c->fd, buf + done, len - done);

		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perr(c, "read");
			return (size_t)-1;
		}
		done += n;
	}
	return done;
}

static void *consume_read(struct cpu *c)
{
	unsigned char *buf = malloc(c->info.subbuf_size);
	struct lrb_packet_header h;
	size_t n, size;

	if (!buf)
		return perr(c, "malloc"), NULL;
	for (;;) {
		n = read_full(c, buf, sizeof(h));
		if (n == 0)
			break;			/* destroyed and drained */
		if (n != sizeof(h)) {
			if (n != (size_t)-1)
				bad(c, c->next_seq, "end of file inside a header");
			break;
		}
		memcpy(&h, buf, sizeof(h));
		size = h.packet_size / 8;
		if (h.magic != LRB_PACKET_MAGIC || size > c->info.subbuf_size ||
		    size < sizeof(h)) {
			bad(c, h.packet_seq_num, "not a packet (magic 0x%x, size %zu)",
			    h.magic, size);
			break;
		}
		n = read_full(c, buf + sizeof(h), size - sizeof(h));
		if (n != size - sizeof(h)) {
			if (n != (size_t)-1)
				bad(c, h.packet_seq_num, "packet cut short");
			break;
		}
		if (check_packet(c, buf, size))
			break;
	}
	free(buf);
	return NULL;
}

/* abi.rst, "The status page": a consistent copy, as a seqcount. */
static void status_read(const struct lrb_status *st, struct lrb_status *out)
{
	uint32_t s1, s2;

	do {
		s1 = __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE);
		memcpy(out, (const void *)st, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&st->seq, __ATOMIC_RELAXED);
	} while ((s1 & 1) || s1 != s2);
}

static void st_check(struct cpu *c, int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		c->st_pass++;
		return;
	}
	c->st_fail++;
	va_start(ap, fmt);
	fprintf(stderr, "abireader: %s: status page: ", c->path);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/*
 * The status page against the ioctls: its counters never decrease and
 * never exceed LRB_IOC_GET_COUNTERS called after it; @exact: nothing can
 * change any more, they must be equal.
 */
static void status_vs_ioctls(struct cpu *c, struct lrb_status *prev, int exact)
{
	struct lrb_buf_counters k;
	struct lrb_status s;
	const uint64_t *a, *b, *p;
	int i;

	status_read(c->st, &s);
	if (ioctl(c->fd, LRB_IOC_GET_COUNTERS, &k)) {
		perr(c, "ioctl(LRB_IOC_GET_COUNTERS)");
		return;
	}
	a = (const uint64_t *)&s.counters;
	b = (const uint64_t *)&k;
	p = (const uint64_t *)&prev->counters;
	for (i = 0; i < NCOUNT; i++) {
		st_check(c, exact ? a[i] == b[i] : a[i] <= b[i],
			 "%s %llu, then LRB_IOC_GET_COUNTERS %llu",
			 counter_names[i], (unsigned long long)a[i],
			 (unsigned long long)b[i]);
		st_check(c, a[i] >= p[i], "%s went back from %llu to %llu",
			 counter_names[i], (unsigned long long)p[i],
			 (unsigned long long)a[i]);
	}
	st_check(c, s.size >= sizeof(s) && s.cpu == c->info.cpu &&
		 s.subbuf_size == c->info.subbuf_size &&
		 s.num_subbuf == c->info.num_subbuf &&
		 s.ready <= s.num_subbuf &&
		 s.pages_recycled <= s.counters.pages_spliced,
		 "size %u cpu %u geometry %llu x %llu ready %llu disagree with LRB_IOC_GET_INFO",
		 s.size, s.cpu, (unsigned long long)s.subbuf_size,
		 (unsigned long long)s.num_subbuf, (unsigned long long)s.ready);
	if (exact)
		st_check(c, (s.flags & LRB_STATUS_FINAL) && !s.ready,
			 "flags %u ready %llu after the end of file", s.flags,
			 (unsigned long long)s.ready);
	*prev = s;
}

static void *consume_mmap(struct cpu *c)
{
	const unsigned char *map;
	struct lrb_subbuf_desc d, held;
	struct lrb_status s, prev;

	map = mmap(NULL, c->info.mmap_len, PROT_READ, MAP_SHARED, c->fd, 0);
	if (map == MAP_FAILED)
		return perr(c, "mmap"), NULL;
	c->st = mmap(NULL, page_size, PROT_READ, MAP_SHARED, c->fd,
		     c->info.mmap_len);
	if (c->st == MAP_FAILED) {
		munmap((void *)map, c->info.mmap_len);
		return perr(c, "mmap of the status page"), NULL;
	}
	memset(&prev, 0, sizeof(prev));
	status_vs_ioctls(c, &prev, 0);
	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		struct lrb_packet_header h;
		int r;

		/* follow the buffer on the status page; poll only when idle */
		status_read(c->st, &s);
		if (!s.ready && !(s.flags & LRB_STATUS_FINAL)) {
			c->st_polls++;
			if (poll(&pfd, 1, -1) < 0 && errno != EINTR) {
				perr(c, "poll");
				break;
			}
			continue;
		}
		if (ioctl(c->fd, LRB_IOC_GET_NEXT_SUBBUF, &d)) {
			if (errno == ENODEV)
				break;
			if (errno != EAGAIN) {
				perr(c, "ioctl(LRB_IOC_GET_NEXT_SUBBUF)");
				break;
			}
			if (poll(&pfd, 1, -1) < 0 && errno != EINTR) {
				perr(c, "poll");
				break;
			}
			continue;
		}
		if (ioctl(c->fd, LRB_IOC_GET_HELD, &held)) {
			perr(c, "ioctl(LRB_IOC_GET_HELD)");
			break;
		}
		if (d.mmap_offset % c->info.subbuf_size ||
		    d.mmap_offset + c->info.subbuf_size > c->info.mmap_len) {
			bad(c, d.seq, "mmap_offset %llu", (unsigned long long)d.mmap_offset);
			break;
		}
		memcpy(&h, map + d.mmap_offset, sizeof(h));
		if (memcmp(&d, &held, sizeof(d)) || d.seq != h.packet_seq_num ||
		    d.pos != d.seq * c->info.subbuf_size ||
		    d.content_size * 8 != h.content_size ||
		    d.packet_size * 8 != h.packet_size) {
			bad(c, d.seq, "desc (pos %llu content %llu packet %llu) "
			    "disagrees with GET_HELD or the header",
			    (unsigned long long)d.pos,
			    (unsigned long long)d.content_size,
			    (unsigned long long)d.packet_size);
			break;
		}
		/* the whole slot is readable: zeros up to subbuf_size */
		r = check_packet(c, map + d.mmap_offset, c->info.subbuf_size);
		if (ioctl(c->fd, LRB_IOC_PUT_SUBBUF, 0)) {
			perr(c, "ioctl(LRB_IOC_PUT_SUBBUF)");
			break;
		}
		if (r)
			break;
		/* the page shows the release as soon as PUT_SUBBUF returns */
		status_read(c->st, &s);
		st_check(c, s.counters.packets_read ==
				    c->c0.packets_read + c->packets &&
			    s.counters.bytes_read == c->c0.bytes_read + c->bytes,
			 "packets_read %llu bytes_read %llu after %llu packets %llu bytes read",
			 (unsigned long long)s.counters.packets_read,
			 (unsigned long long)s.counters.bytes_read,
			 (unsigned long long)c->packets,
			 (unsigned long long)c->bytes);
		st_check(c, c->info.mode == LRB_ABI_MODE_DISCARD ?
			 s.counters.consumed == d.pos + c->info.subbuf_size :
			 s.counters.consumed >= d.pos + c->info.subbuf_size,
			 "consumed %llu after releasing the packet at %llu",
			 (unsigned long long)s.counters.consumed,
			 (unsigned long long)d.pos);
		status_vs_ioctls(c, &prev, 0);
	}
	/* drained after destroy: the last call refreshed the page for good */
	status_vs_ioctls(c, &prev, 1);
	munmap((void *)c->st, page_size);
	munmap((void *)map, c->info.mmap_len);
	return NULL;
}

static void *thread_main(void *arg)
{
	struct cpu *c = arg;

	return use_mmap ? consume_mmap(c) : consume_read(c);
}

/* ---- stats file ---- */
static int read_stats(int fd, const char *path, struct lrb_buf_counters *cpus,
		      int ncpu, struct lrb_buf_counters *total, int *seen)
{
	static char text[1 << 20];
	size_t len = 0;
	ssize_t n;
	char *line, *save;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return fprintf(stderr, "abireader: %s: lseek: %s\n", path,
			       strerror(errno)), -1;
	while ((n = read(fd, text + len, sizeof(text) - 1 - len)) > 0)
		len += n;
	if (n < 0)
		return fprintf(stderr, "abireader: %s: read: %s\n", path,
			       strerror(errno)), -1;
	text[len] = 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		uint64_t v[NCOUNT];
		char *p = line, *e;
		int i, cpu = -1;

		if (!strncmp(p, "total ", 6)) {
			p += 6;
		} else if (!strncmp(p, "cpu", 3)) {
			cpu = strtol(p + 3, &e, 10);
			if (e == p + 3 || *e != ' ' || cpu >= ncpu)
				goto badline;
			p = e + 1;
		} else {
			goto badline;
		}
		for (i = 0; i < NCOUNT; i++) {
			size_t kl = strlen(counter_names[i]);

			while (*p == ' ')
				p++;
			if (strncmp(p, counter_names[i], kl) || p[kl] != '=')
				goto badline;
			v[i] = strtoull(p + kl + 1, &e, 10);
			p = e;
		}
		/* pages_recycled, then whatever later versions add: name=n */
		while (*p == ' ') {
			char *eq = strchr(p + 1, '=');

			if (!eq || eq == p + 1)
				goto badline;
			strtoull(eq + 1, &e, 10);
			if (e == eq + 1 || (*e && *e != ' '))
				goto badline;
			p = e;
		}
		if (*p)
			goto badline;
		memcpy(cpu < 0 ? total : &cpus[cpu], v, sizeof(v));
		if (cpu >= 0)
			seen[cpu] = 1;
		else
			seen[ncpu] = 1;
		continue;
badline:
		fprintf(stderr, "abireader: %s: unexpected line '%s'\n", path, line);
		return -1;
	}
	return 0;
}

static int npass, nfail;
static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		npass++;
		return;
	}
	nfail++;
	va_start(ap, fmt);
	fputs("abireader: FAIL ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

static char *slurp(const char *path)
{
	size_t cap = 65536, len = 0;
	char *s = malloc(cap);
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		fatal("%s: open: %s", path, strerror(errno));
	for (;;) {
		if (!s)
			fatal("out of memory");
		n = read(fd, s + len, cap - len - 1);
		if (n < 0)
			fatal("%s: read: %s", path, strerror(errno));
		if (n == 0)
			break;
		len += n;
		if (len + 1 == cap)
			s = realloc(s, cap *= 2);
	}
	s[len] = 0;
	close(fd);
	return s;
}

int main(int argc, char **argv)
{
	char path[256], *possible, *p;
	struct cpu *cpus = NULL;
	struct lrb_buf_counters *st, total, sum;
	int ncpu = 0, maxcpu = -1, i, j, statfd, *seen, err = 0;
	const char *chan;

	if (argc != 3 || (strcmp(argv[1], "--mmap") && strcmp(argv[1], "--read"))) {
		fprintf(stderr, "usage: %s [--mmap|--read] CHANNEL\n", argv[0]);
		return 2;
	}
	use_mmap = !strcmp(argv[1], "--mmap");
	chan = argv[2];
	page_size = sysconf(_SC_PAGESIZE);

	/* every possible CPU has a file */
	possible = slurp("/sys/devices/system/cpu/possible");
	for (p = possible; *p && *p != '\n';) {
		long a = strtol(p, &p, 10), b = a;

		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		for (; a <= b; a++) {
			cpus = realloc(cpus, (ncpu + 1) * sizeof(*cpus));
			if (!cpus)
				fatal("out of memory");
			memset(&cpus[ncpu], 0, sizeof(*cpus));
			cpus[ncpu++].n = a;
			if (a > maxcpu)
				maxcpu = a;
		}
		if (*p == ',')
			p++;
	}

	/* metadata: the events' payload layouts; stats: kept open past destroy */
	snprintf(path, sizeof(path), "/dev/lrb/%s/metadata", chan);
	parse_metadata(slurp(path));
	snprintf(path, sizeof(path), "/dev/lrb/%s/stats", chan);
	statfd = open(path, O_RDONLY);
	if (statfd < 0)
		fatal("%s: open: %s", path, strerror(errno));

	for (i = 0; i < ncpu; i++) {
		struct cpu *c = &cpus[i];

		snprintf(c->path, sizeof(c->path), "/dev/lrb/%s/cpu%d", chan, c->n);
		c->fd = open(c->path, O_RDONLY);
		if (c->fd < 0)
			fatal("%s: open: %s", c->path, strerror(errno));
		if (ioctl(c->fd, LRB_IOC_GET_INFO, &c->info))
			fatal("%s: ioctl(LRB_IOC_GET_INFO): %s", c->path, strerror(errno));
		if (ioctl(c->fd, LRB_IOC_GET_POSITIONS, &c->pos0))
			fatal("%s: ioctl(LRB_IOC_GET_POSITIONS): %s", c->path,
			      strerror(errno));
		if (ioctl(c->fd, LRB_IOC_GET_COUNTERS, &c->c0))
			fatal("%s: ioctl(LRB_IOC_GET_COUNTERS): %s", c->path,
			      strerror(errno));
		if (c->info.cpu != (uint32_t)c->n || !c->info.subbuf_size ||
		    c->info.subbuf_size % page_size ||
		    (c->info.subbuf_size & (c->info.subbuf_size - 1)) ||
		    (c->info.header == LRB_ABI_HEADER_COMPACT &&
		     (c->info.tsc_bits < 1 || c->info.tsc_bits > 31)) ||
		    c->info.header > LRB_ABI_HEADER_LARGE ||
		    c->info.mode > LRB_ABI_MODE_OVERWRITE || c->info.watermark != 1 ||
		    c->pos0.consumed % c->info.subbuf_size)
			fatal("%s: implausible GET_INFO/GET_POSITIONS", c->path);
		c->next_seq = c->pos0.consumed / c->info.subbuf_size;
	}
	printf("abireader: consuming %d cpu files of %s via %s\n", ncpu, chan,
	       use_mmap ? "mmap" : "read");
	fflush(stdout);

	for (i = 0; i < ncpu; i++)
		if (pthread_create(&cpus[i].th, NULL, thread_main, &cpus[i]))
			fatal("pthread_create failed");
	for (i = 0; i < ncpu; i++)
		pthread_join(cpus[i].th, NULL);

	st = calloc(maxcpu + 1, sizeof(*st));
	seen = calloc(maxcpu + 2, sizeof(*seen));
	if (!st || !seen)
		fatal("out of memory");
	if (read_stats(statfd, "stats", st, maxcpu + 1, &total, seen))
		err = 1;
	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < ncpu; i++) {
		struct cpu *c = &cpus[i];
		struct lrb_buf_counters *k = &c->c1;
		uint64_t lost, *a, *b;

		printf("cpu %d: packets %llu records %llu discarded %llu seq_gaps %llu\n",
		       c->n, (unsigned long long)c->packets,
		       (unsigned long long)c->records,
		       (unsigned long long)c->discarded, (unsigned long long)c->gaps);
		if (c->failed)
			err = 1;
		if (ioctl(c->fd, LRB_IOC_GET_COUNTERS, k) ||
		    ioctl(c->fd, LRB_IOC_GET_POSITIONS, &c->pos1)) {
			perr(c, "ioctl(LRB_IOC_GET_COUNTERS/GET_POSITIONS)");
			err = 1;
			continue;
		}
		lost = k->lost_full + k->lost_wrap + k->lost_big + k->lost_nest +
		       k->lost_overwrite;
		check(c->discarded == lost,
		      "cpu %d: last events_discarded %llu != lost_* sum %llu", c->n,
		      (unsigned long long)c->discarded, (unsigned long long)lost);
		check(c->gaps == k->lost_packets - c->c0.lost_packets,
		      "cpu %d: seq gaps %llu != lost_packets %llu", c->n,
		      (unsigned long long)c->gaps,
		      (unsigned long long)(k->lost_packets - c->c0.lost_packets));
		/* read + lost = written; lost_overwrite is 0 in discard mode */
		if (c->pos0.consumed == 0)
			check(c->records + k->lost_overwrite == k->records_written,
			      "cpu %d: records read %llu + lost_overwrite %llu != records_written %llu",
			      c->n, (unsigned long long)c->records,
			      (unsigned long long)k->lost_overwrite,
			      (unsigned long long)k->records_written);
		else
			check(c->records <= k->records_written,
			      "cpu %d: records read %llu > records_written %llu", c->n,
			      (unsigned long long)c->records,
			      (unsigned long long)k->records_written);
		check(k->packets_read - c->c0.packets_read == c->packets &&
		      k->bytes_read - c->c0.bytes_read == c->bytes,
		      "cpu %d: packets_read +%llu bytes_read +%llu, read %llu packets %llu bytes",
		      c->n, (unsigned long long)(k->packets_read - c->c0.packets_read),
		      (unsigned long long)(k->bytes_read - c->c0.bytes_read),
		      (unsigned long long)c->packets, (unsigned long long)c->bytes);
		check(c->pos1.consumed == c->next_seq * c->info.subbuf_size &&
		      k->consumed == c->pos1.consumed && k->produced == c->pos1.produced,
		      "cpu %d: consumed %llu (counters %llu), expected %llu", c->n,
		      (unsigned long long)c->pos1.consumed,
		      (unsigned long long)k->consumed,
		      (unsigned long long)(c->next_seq * c->info.subbuf_size));
		check(c->n <= maxcpu && seen[c->n] && !memcmp(&st[c->n], k, sizeof(*k)),
		      "cpu %d: stats line differs from LRB_IOC_GET_COUNTERS", c->n);
		if (use_mmap) {
			printf("cpu %d: status page checks %llu, poll() calls %llu\n",
			       c->n, (unsigned long long)c->st_pass,
			       (unsigned long long)c->st_polls);
			check(c->st_pass && !c->st_fail,
			      "cpu %d: status page: %llu checks failed (above)",
			      c->n, (unsigned long long)c->st_fail);
		}
		a = (uint64_t *)&sum;
		b = (uint64_t *)&st[c->n];
		for (j = 0; j < NCOUNT; j++)
			a[j] += b[j];
	}
	check(seen[maxcpu + 1] && !memcmp(&sum, &total, sizeof(sum)),
	      "stats: total line is not the sum of the cpu lines");
	printf("abireader: %d passed, %d failed\n", npass, nfail);
	return nfail || err;
}
