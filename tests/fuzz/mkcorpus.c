// SPDX-License-Identifier: GPL-2.0
/*
 * mkcorpus DUMP_DIR [REGION_DIR]: write the seed corpus of dump_fuzz.c
 * into DUMP_DIR: small valid traces written by liblrb
 * (tests/tools/test-dump-gen.h), their packets cut down to their content
 * so that the seeds stay small, in both input modes of the harness; and
 * that of region_fuzz.c into REGION_DIR: the regions of small persistent
 * channels as a crash leaves them. tests/fuzz/run.sh --corpus builds and
 * runs it, natively and for s390x under qemu-user (the big-endian dump
 * seeds be-meta-*).
 */
#include <stdlib.h>

#include <lrb/region.h>
#include "../tools/test-dump-gen.h"

/* Cut every packet of @g to its content rounded up to 8 bytes. */
static void shrink(struct gen_stream *g)
{
	size_t in = 0, out = 0;

	while (in + sizeof(struct lrb_packet_header) <= g->len) {
		struct lrb_packet_header h;
		size_t content, packet;

		memcpy(&h, g->data + in, sizeof(h));
		content = h.content_size / 8;
		packet = h.packet_size / 8;
		h.packet_size = ((content + 7) & ~7UL) * 8;
		memmove(g->data + out, g->data + in, content);
		memcpy(g->data + out, &h, sizeof(h));
		memset(g->data + out + content, 0, h.packet_size / 8 - content);
		out += h.packet_size / 8;
		in += packet;
	}
	g->len = out;
}

/* Packet k of @g (after shrink()): its header. */
static struct lrb_packet_header *packet(struct gen_stream *g, unsigned int k)
{
	size_t off = 0;

	while (k--)
		off += ((struct lrb_packet_header *)(g->data + off))->packet_size / 8;
	return (struct lrb_packet_header *)(g->data + off);
}

static void write_seed(const char *dir, const char *name, uint8_t mode,
		       const char *meta, size_t mlen, const struct gen_stream *g)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputc(mode, f);
	if (meta) {
		fputc(mlen & 0xff, f);
		fputc(mlen >> 8, f);
		fwrite(meta, 1, mlen, f);
	}
	fwrite(g->data, 1, g->len, f);
	if (fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* Persistent channels, as lrb.ko's client and liblrb's make them. */
#define RG_CONFIG(a, h, bits) {						\
	.mode = LRB_MODE_OVERWRITE, .alloc = a,				\
	.wakeup = LRB_WAKEUP_BY_WRITER, .header = h, .tsc_bits = bits,	\
	.persistent = true, .cb = { .clock_read = gen_clock },		\
}

static const struct lrb_config rg_global =
	RG_CONFIG(LRB_ALLOC_GLOBAL, LRB_HEADER_COMPACT, 27);
static const struct lrb_config rg_large =
	RG_CONFIG(LRB_ALLOC_GLOBAL, LRB_HEADER_LARGE, 27);
static const struct lrb_config rg_percpu =
	RG_CONFIG(LRB_ALLOC_PER_CPU, LRB_HEADER_COMPACT, 8);

/*
 * A region of @cfg (@nr_cpus buffers if per CPU) after @nr records of
 * events.h, as a crash leaves it: the last packet open and, if @held, a
 * record reserved and never committed in it, the ring gone round. Into
 * DIR/NAME, after the harness's flags byte (0).
 */
static void write_region(const char *dir, const char *name,
			 const struct lrb_config *cfg, unsigned int nr_cpus,
			 unsigned int nr, bool held)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = 4096, .num_subbuf = 2, .nr_cpus = nr_cpus,
		.stream_id = FZ_STREAM_ID, .run_id = 42,
	};
	uint8_t payload[128];
	struct lrb_chan *chan;
	struct lrb_ctx ctx;
	char path[4096];
	unsigned int i, id;
	size_t mlen;
	FILE *f;

	attr.metadata = gen_metadata(cfg, &mlen);
	attr.region_size = lrb_region_size(cfg, &attr);
	attr.region = aligned_alloc(4096, attr.region_size);
	if (!attr.region_size || !attr.region ||
	    lrb_channel_create(cfg, &attr, &chan)) {
		fprintf(stderr, "mkcorpus: liblrb failed to lay out a region\n");
		exit(1);
	}
	gen_now = 1000;
	for (i = 0; i < nr; i++) {
		gen_now += i % 97 == 50 ? (1ULL << 28) + 20 : 10;
		id = fz_event_of(i);
		lrb_event_write(cfg, chan, id, payload,
				fz_payload(id, i, gen_now, payload));
	}
	/* a writer killed between reserve and commit */
	if (held && !lrb_reserve(cfg, chan, &ctx, FZ_EV_SMALL, 12))
		lrb_write(&ctx, payload, 12);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputc(0, f) == EOF ||
	    fwrite(attr.region, 1, attr.region_size, f) != attr.region_size ||
	    fclose(f)) {
		perror(path);
		exit(1);
	}
	/* the channel stays, as the crash left it: nothing to free */
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		const struct lrb_config *cfg;
	} layouts[] = {
		{ "compact27", &gen_compact_discard },
		{ "large", &gen_large_overwrite },
		{ "compact8", &gen_compact8_discard },
	};
	struct gen_stream g;
	char name[64], *meta;
	unsigned int i;
	size_t mlen;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: mkcorpus DUMP_DIR [REGION_DIR]\n");
		return 2;
	}
	for (i = 0; i < 3; i++) {
		/* 3 packets of 8 records: every event kind, some extended */
		if (gen_stream(layouts[i].cfg, 1, 24, 8, true, 1000, 10, &g)) {
			fprintf(stderr, "mkcorpus: liblrb failed\n");
			return 1;
		}
		shrink(&g);
		snprintf(name, sizeof(name), "stream-%s", layouts[i].name);
		write_seed(argv[1], name, 2 * i, NULL, 0, &g);
		if (i < 2) {
			meta = gen_metadata(layouts[i].cfg, &mlen);
			snprintf(name, sizeof(name), "meta-%s", layouts[i].name);
			write_seed(argv[1], name, 1, meta, mlen, &g);
			free(meta);
		}
		if (!i) {
			/* losses: discarded records, then a gap in the packets */
			packet(&g, 1)->events_discarded = 5;
			packet(&g, 2)->events_discarded = 9;
			packet(&g, 2)->packet_seq_num += 3;
			write_seed(argv[1], "stream-losses", 0, NULL, 0, &g);
		}
		gen_free(&g);
	}
	if (argc == 3) {
		write_region(argv[2], "region-compact", &rg_global, 1, 40, false);
		write_region(argv[2], "region-wrapped", &rg_global, 1, 400, true);
		write_region(argv[2], "region-large", &rg_large, 1, 300, false);
		write_region(argv[2], "region-percpu", &rg_percpu, 2, 200, true);
	}
	return 0;
}
