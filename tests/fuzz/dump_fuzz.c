// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of lrb-dump's decoding core (tools/lrb-dump: the
 * metadata parser, the stream cursor, the payload walker, the printer).
 * The first input byte picks the mode:
 *
 *   even: a stream file under one of the fixed metadata texts that
 *         lib/metadata.c writes (byte >> 1 picks the layout), with the
 *         events of events.h; the rest of the input is the stream;
 *   odd:  the next two bytes (little-endian) are the length of a
 *         metadata text that follows, then the stream: both are fuzzed.
 *
 * Every item is printed, as text and as JSON, to /dev/null. Built and run
 * by tests/fuzz/run.sh with clang -fsanitize=fuzzer,address,undefined.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lrb/metadata.h>
#include "dump.h"
#include "events.h"

/* Fixed layouts: compact 27 bits, large, compact 8 bits (many extended). */
static const struct lrb_config fz_configs[] = {
	{ .header = LRB_HEADER_COMPACT, .tsc_bits = 27 },
	{ .header = LRB_HEADER_LARGE, .tsc_bits = 27 },
	{ .header = LRB_HEADER_COMPACT, .tsc_bits = 8 },
};

#define NR_FIXED ARRAY_SIZE(fz_configs)

static struct dump_meta *fixed[NR_FIXED];
static FILE *devnull;

static void setup(void)
{
	struct lrb_metadata_attr attr = {
		.clock_freq = FZ_CLOCK_FREQ,
		.clock_offset_s = FZ_CLOCK_OFFSET_S,
		.events = fz_events,
		.nr_events = ARRAY_SIZE(fz_events),
	};
	struct lrb_chan chan = { .stream_id = FZ_STREAM_ID };
	static char text[16384];
	char err[300];
	unsigned int i;
	int len;

	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	for (i = 0; i < NR_FIXED; i++) {
		chan.cfg = &fz_configs[i];
		len = lrb_metadata_format(&chan, &attr, text, sizeof(text));
		/* the parser's own test events, beyond what LRB_EVENT() makes */
		if (len > 0 && len < (int)sizeof(text))
			len += snprintf(text + len, sizeof(text) - len, "\n%s",
					fz_events_tsdl);
		if (len <= 0 || len >= (int)sizeof(text))
			abort();
		fixed[i] = dump_meta_parse(text, len, err, sizeof(err));
		if (!fixed[i]) {
			fprintf(stderr, "dump_fuzz: fixed metadata %u: %s\n", i, err);
			abort();
		}
	}
}

static void decode(const struct dump_meta *meta, const uint8_t *data,
		   size_t len)
{
	struct dump_stream s;
	struct dump_item item;

	dump_stream_init(&s, meta, data, len);
	while (dump_stream_next(&s, &item) > 0) {
		dump_print(devnull, meta, &item, 0);
		dump_print(devnull, meta, &item, DUMP_JSON | DUMP_CYCLES);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dump_meta *meta;
	char err[300], *text;
	size_t mlen;

	if (!devnull)
		setup();
	if (!size)
		return 0;
	if (!(data[0] & 1)) {
		decode(fixed[(data[0] >> 1) % NR_FIXED], data + 1, size - 1);
		return 0;
	}
	if (size < 3)
		return 0;
	mlen = data[1] | (size_t)data[2] << 8;
	if (mlen > size - 3)
		mlen = size - 3;
	/* a copy of its exact size, so that ASan sees any read past it */
	text = malloc(mlen + 1);
	if (!text)
		abort();
	memcpy(text, data + 3, mlen);
	meta = dump_meta_parse(text, mlen, err, sizeof(err));
	free(text);
	if (!meta)
		return 0;
	decode(meta, data + 3 + mlen, size - 3 - mlen);
	dump_meta_free(meta);
	return 0;
}
