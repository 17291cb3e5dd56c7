// SPDX-License-Identifier: GPL-2.0
/*
 * One line per item: text ("[time] cpu N name: field=value ...") or a
 * JSON object. Times are the clock's cycles converted with its frequency
 * and offsets, as babeltrace2 --clock-seconds prints them, or the raw
 * cycles (--clock-cycles), which are exact.
 */
#include "dump.h"

#include <string.h>

#define NS_PER_S 1000000000LL

char *dump_time(char *buf, size_t len, const struct dump_clock *clock,
		unsigned long long cycles)
{
	__int128_t ns;
	unsigned long long freq = clock && clock->freq ? clock->freq : NS_PER_S;

	/* as babeltrace2: the offset and the value are converted apart */
	ns = (__int128)(clock ? clock->offset_s : 0) * NS_PER_S;
	ns += (__uint128_t)(clock ? clock->offset : 0) * NS_PER_S / freq;
	ns += (__uint128_t)cycles * NS_PER_S / freq;
	if (ns < 0) {
		ns = -ns;
		snprintf(buf, len, "-%lld.%09lld", (long long)(ns / NS_PER_S),
			 (long long)(ns % NS_PER_S));
	} else {
		snprintf(buf, len, "%lld.%09lld", (long long)(ns / NS_PER_S),
			 (long long)(ns % NS_PER_S));
	}
	return buf;
}

/* A name from the metadata: anything but control characters as is. */
static void print_name(FILE *f, const char *s, bool json)
{
	if (json)
		fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (json && (c == '"' || c == '\\'))
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, json ? "\\u%04x" : "\\x%02x", c);
		else
			fputc(c, f);
	}
	if (json)
		fputc('"', f);
}

static void print_stamp(FILE *f, const struct dump_meta *meta,
			unsigned long long ts, unsigned int flags)
{
	char buf[64];

	if (flags & DUMP_CYCLES)
		fprintf(f, "[%llu]", ts);
	else
		fprintf(f, "[%s]", dump_time(buf, sizeof(buf), meta->clock, ts));
}

static void print_text(FILE *f, const struct dump_meta *meta,
		       const struct dump_item *it, unsigned int flags)
{
	print_stamp(f, meta, it->ts, flags);
	fprintf(f, " cpu %u ", it->cpu);
	switch (it->kind) {
	case DUMP_ITEM_EVENT:
		print_name(f, it->event->name, false);
		fputc(':', f);
		if (it->event->fields && it->event->fields->nr_fields)
			fputc(' ', f);
		dump_print_fields(f, it, false);
		break;
	case DUMP_ITEM_DISCARDED:
		fprintf(f, "discarded: %s%llu events%s until ",
			it->approx ? "up to " : "", it->count,
			it->approx ? " (counted since the buffer was created)" : "");
		print_stamp(f, meta, it->ts_end, flags);
		break;
	case DUMP_ITEM_LOST:
		fprintf(f, "lost: %llu packets until ", it->count);
		print_stamp(f, meta, it->ts_end, flags);
		break;
	}
	fputc('\n', f);
}

static void print_json(FILE *f, const struct dump_meta *meta,
		       const struct dump_item *it)
{
	static const char *const type[] = {
		[DUMP_ITEM_EVENT] = "event",
		[DUMP_ITEM_DISCARDED] = "discarded",
		[DUMP_ITEM_LOST] = "lost",
	};
	char buf[64];

	fprintf(f, "{\"type\":\"%s\",\"time\":\"%s\",\"timestamp\":%llu,\"cpu\":%u",
		type[it->kind], dump_time(buf, sizeof(buf), meta->clock, it->ts),
		it->ts, it->cpu);
	switch (it->kind) {
	case DUMP_ITEM_EVENT:
		fputs(",\"name\":", f);
		print_name(f, it->event->name, true);
		fprintf(f, ",\"id\":%u,\"fields\":{", it->event->id);
		dump_print_fields(f, it, true);
		fputc('}', f);
		break;
	case DUMP_ITEM_DISCARDED:
		fprintf(f, ",\"events\":%llu,\"approx\":%s,\"until\":%llu",
			it->count, it->approx ? "true" : "false", it->ts_end);
		break;
	case DUMP_ITEM_LOST:
		fprintf(f, ",\"packets\":%llu,\"until\":%llu", it->count,
			it->ts_end);
		break;
	}
	fputs("}\n", f);
}

void dump_print(FILE *f, const struct dump_meta *meta,
		const struct dump_item *item, unsigned int flags)
{
	if (flags & DUMP_JSON)
		print_json(f, meta, item);
	else
		print_text(f, meta, item, flags);
}
