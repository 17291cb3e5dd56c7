// SPDX-License-Identifier: GPL-2.0
/*
 * The LRB_EVENT() sample in user space: writes COUNT records of each of
 * the three events of samples/kernel/lrb_sample_events.h into a channel
 * and stores them as a CTF trace directory (the packets in DIR/stream_0,
 * the metadata lib/metadata.c generates from the events' descriptions in
 * DIR/metadata), which babeltrace2 reads:
 *
 *   events DIR [COUNT]        (COUNT: 1000 by default)
 *   babeltrace2 DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../kernel/lrb_sample_events.h"

#define NR_EVENTS (sizeof(lrb_sample_events) / sizeof(lrb_sample_events[0]))

static const struct lrb_config cfg = {
	.mode = LRB_MODE_DISCARD,
	.alloc = LRB_ALLOC_GLOBAL,
	.wakeup = LRB_WAKEUP_BY_WRITER,
	.header = LRB_HEADER_COMPACT,
	.tsc_bits = 27,
	.cb.clock_read = lrb_clock_default,
};

/* Append every complete packet of @buf to @f. */
static int drain(struct lrb_chan *chan, struct lrb_buf *buf, FILE *f,
		 void *packet)
{
	struct lrb_subbuf sb;

	while (!lrb_get_next_subbuf(buf, &sb)) {
		lrb_subbuf_copy(chan, &sb, 0, packet, sb.packet_size);
		if (fwrite(packet, 1, sb.packet_size, f) != sb.packet_size)
			return -1;
		lrb_put_subbuf(buf, &sb);
	}
	return 0;
}

/*
 * The metadata, with the zero of the clock (lrb_clock_default():
 * CLOCK_MONOTONIC) in Unix time, so that babeltrace2 prints wall-clock time.
 */
static int write_metadata(struct lrb_chan *chan, const char *path)
{
	struct lrb_metadata_attr attr = {
		.clock_freq = 1000000000,
		.events = lrb_sample_events,
		.nr_events = NR_EVENTS,
	};
	struct timespec real, mono;
	FILE *f = fopen(path, "w");
	char *text;
	int len;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	attr.clock_offset_s = real.tv_sec - mono.tv_sec;
	if (real.tv_nsec >= mono.tv_nsec) {
		attr.clock_offset = real.tv_nsec - mono.tv_nsec;
	} else {
		attr.clock_offset = 1000000000 + real.tv_nsec - mono.tv_nsec;
		attr.clock_offset_s--;
	}
	len = lrb_metadata_format(chan, &attr, NULL, 0);
	text = len > 0 ? malloc(len + 1) : NULL;
	if (!f || !text) {
		free(text);
		if (f)
			fclose(f);
		return -1;
	}
	lrb_metadata_format(chan, &attr, text, len + 1);
	fputs(text, f);
	free(text);
	return fclose(f);
}

int main(int argc, char **argv)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = 65536,
		.num_subbuf = 4,
		.nr_cpus = 1,
	};
	unsigned long count = argc > 2 ? strtoul(argv[2], NULL, 0) : 1000;
	char path[4096], text[64];
	unsigned long i, lost = 0;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	void *packet;
	FILE *f;
	int ret;

	if (argc < 2 || argc > 3 || !count || count > 0xffffffffUL) {
		fprintf(stderr, "usage: events DIR [COUNT]  (COUNT from 1 to 4294967295)\n");
		return 2;
	}
	if (mkdir(argv[1], 0755) && errno != EEXIST) {
		fprintf(stderr, "events: cannot create %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	ret = lrb_channel_create(&cfg, &attr, &chan);
	if (ret) {
		fprintf(stderr, "events: cannot create the channel: %s\n",
			strerror(-ret));
		return 1;
	}
	buf = lrb_channel_nth_buf(chan, 0);
	packet = malloc(attr.subbuf_size);
	snprintf(path, sizeof(path), "%s/stream_0", argv[1]);
	f = fopen(path, "w");
	if (!packet || !f || lrb_reader_open(buf)) {
		fprintf(stderr, "events: cannot open %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	for (i = 0; i < count; i++) {
		lost += lrb_sample_events_write(&cfg, chan, i, text);
		if (drain(chan, buf, f, packet))
			break;
	}
	/* user space has no switch timer: close the last packet by hand */
	lrb_buf_flush(buf);
	if (i < count || drain(chan, buf, f, packet) || fclose(f)) {
		fprintf(stderr, "events: cannot write %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/metadata", argv[1]);
	if (write_metadata(chan, path)) {
		fprintf(stderr, "events: cannot write %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	printf("events: %lu records of each of %zu events in %s, %lu lost\n",
	       count, NR_EVENTS, argv[1], lost);
	lrb_reader_close(buf);
	lrb_channel_destroy(chan);
	free(packet);
	return lost ? 1 : 0;
}
