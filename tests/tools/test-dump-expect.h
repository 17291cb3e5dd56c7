/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What lrb-dump must print for a record of tests/fuzz/events.h, written
 * from the record's sequence number and timestamp alone (not from the
 * trace), as text and as JSON (Documentation/tools/lrb-dump.rst).
 */
#ifndef _LRB_TEST_DUMP_EXPECT_H
#define _LRB_TEST_DUMP_EXPECT_H

#include <stdarg.h>
#include <stdbool.h>

#include "test-dump-gen.h"

/* A string builder over a fixed buffer. */
struct sb {
	char buf[2048];
	size_t len;
};

static inline void sb_add(struct sb *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void sb_add(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->len, sizeof(b->buf) - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += n;
	if (b->len >= sizeof(b->buf))
		b->len = sizeof(b->buf) - 1;
}

static inline void sb_str(struct sb *b, const char *s, size_t n)
{
	size_t i;

	sb_add(b, "\"");
	for (i = 0; i < n && s[i]; i++) {
		if (s[i] == '"' || s[i] == '\\')
			sb_add(b, "\\%c", s[i]);
		else
			sb_add(b, "%c", s[i]);
	}
	sb_add(b, "\"");
}

/* "name=" in text, "\"name\":" in JSON, with the separator before. */
static inline void sb_key(struct sb *b, bool json, bool first,
			  const char *name)
{
	if (json)
		sb_add(b, "%s\"%s\":", first ? "" : ",", name);
	else
		sb_add(b, "%s%s=", first ? "" : " ", name);
}

static inline const char *expect_state(unsigned int v)
{
	if (v == 0)
		return "RUNNING";
	if (v == 1)
		return "SLEEPING";
	if (v >= 4 && v <= 7)
		return "ZOMBIE";
	return NULL;
}

/* The fields of record @r (written at its own timestamp) into @b. */
static inline void expect_fields(struct sb *b, const struct gen_rec *r,
				 bool json)
{
	struct fz_rich x;
	unsigned int i, n;
	const char *label;

	switch (r->id) {
	case FZ_EV_SMALL:
	case FZ_EV_BIG:
		sb_key(b, json, true, "seq");
		sb_add(b, "%u", r->seq);
		sb_key(b, json, false, "ts");
		sb_add(b, "%llu", (unsigned long long)r->ts);
		if (r->id == FZ_EV_SMALL)
			return;
		n = r->seq % 5;
		sb_key(b, json, false, "n");
		sb_add(b, "%u", n);
		sb_key(b, json, false, "data");
		sb_add(b, "[");
		for (i = 0; i < n; i++)
			sb_add(b, "%s%u", i ? "," : "", (uint8_t)(r->seq + i));
		sb_add(b, "]");
		return;
	case FZ_EV_TINY:
		sb_key(b, json, true, "flag");
		sb_add(b, "%u", r->seq & 1);
		sb_key(b, json, false, "pad");
		sb_add(b, "0");
		return;
	case FZ_EV_VM:
		n = r->seq % 7;
		sb_key(b, json, true, "seq");
		sb_add(b, "%u", r->seq);
		sb_key(b, json, false, "cpu");
		sb_add(b, "0");
		sb_key(b, json, false, "data_len");
		sb_add(b, "%u", n);
		sb_key(b, json, false, "ctx");
		sb_add(b, "0");
		sb_key(b, json, false, "zero");
		sb_add(b, "0");
		{
			uint8_t d[8];

			for (i = 0; i < n; i++)
				d[i] = lrb_vm_data_byte(r->seq, 0, 0, i);
			sb_key(b, json, false, "csum");
			sb_add(b, "%u", lrb_vm_csum(d, n, r->seq));
			sb_key(b, json, false, "data");
			sb_add(b, "[");
			for (i = 0; i < n; i++)
				sb_add(b, "%s%u", i ? "," : "", d[i]);
			sb_add(b, "]");
		}
		return;
	case FZ_EV_RICH:
		fz_rich_values(r->seq, &x);
		sb_key(b, json, true, "seq");
		sb_add(b, "%u", r->seq);
		sb_key(b, json, false, "state");
		label = expect_state(x.state);
		if (json)
			sb_add(b, "{\"label\":%s%s%s,\"value\":%u}",
			       label ? "\"" : "", label ? label : "null",
			       label ? "\"" : "", x.state);
		else
			sb_add(b, "%s(%u)", label ? label : "", x.state);
		sb_key(b, json, false, "temp");
		sb_add(b, "%d", x.temp);
		sb_key(b, json, false, "flags");
		sb_add(b, json ? "%u" : "0x%x", x.flags);
		sb_key(b, json, false, "lo3");
		sb_add(b, "%u", x.lo3);
		sb_key(b, json, false, "hi5");
		sb_add(b, "%d", x.hi5);
		sb_key(b, json, false, "comm");
		sb_str(b, x.comm, sizeof(x.comm));
		sb_key(b, json, false, "name");
		sb_str(b, x.name, sizeof(x.name));
		sb_key(b, json, false, "nvals");
		sb_add(b, "%u", x.nvals);
		sb_key(b, json, false, "vals");
		sb_add(b, "[");
		for (i = 0; i < x.nvals; i++) {
			sb_add(b, "%s{", i ? "," : "");
			sb_key(b, json, true, "a");
			sb_add(b, "%u", 100 + i);
			sb_key(b, json, false, "b");
			sb_add(b, "%d}", -(int)i);
		}
		sb_add(b, "]");
		sb_key(b, json, false, "matrix");
		sb_add(b, "[[%u,%u,%u],[%u,%u,%u]]", (uint8_t)r->seq,
		       (uint8_t)(r->seq + 1), (uint8_t)(r->seq + 2),
		       (uint8_t)(r->seq + 3), (uint8_t)(r->seq + 4),
		       (uint8_t)(r->seq + 5));
		return;
	}
}

static inline const char *expect_name(unsigned int id)
{
	switch (id) {
	case FZ_EV_SMALL:
		return "small";
	case FZ_EV_BIG:
		return "big";
	case FZ_EV_TINY:
		return "tiny";
	case FZ_EV_VM:
		return "lrb_vm_record";
	case FZ_EV_RICH:
		return "rich";
	}
	return "?";
}

/* The clock value as seconds since the epoch (1 GHz, offset_s only). */
static inline void expect_time(struct sb *b, uint64_t ts)
{
	sb_add(b, "%llu.%09llu",
	       (unsigned long long)(FZ_CLOCK_OFFSET_S + ts / 1000000000ULL),
	       (unsigned long long)(ts % 1000000000ULL));
}

/* The whole line lrb-dump prints for @r on @cpu (without the newline). */
static inline void expect_line(struct sb *b, const struct gen_rec *r,
			       unsigned int cpu, bool json, bool cycles)
{
	b->len = 0;
	b->buf[0] = 0;
	if (json) {
		sb_add(b, "{\"type\":\"event\",\"time\":\"");
		expect_time(b, r->ts);
		sb_add(b, "\",\"timestamp\":%llu,\"cpu\":%u,\"name\":\"%s\",\"id\":%u,\"fields\":{",
		       (unsigned long long)r->ts, cpu, expect_name(r->id), r->id);
		expect_fields(b, r, true);
		sb_add(b, "}}");
		return;
	}
	if (cycles) {
		sb_add(b, "[%llu]", (unsigned long long)r->ts);
	} else {
		sb_add(b, "[");
		expect_time(b, r->ts);
		sb_add(b, "]");
	}
	sb_add(b, " cpu %u %s: ", cpu, expect_name(r->id));
	expect_fields(b, r, false);
}

#endif /* _LRB_TEST_DUMP_EXPECT_H */
