// SPDX-License-Identifier: GPL-2.0
/*
 * Write the seed corpus of dump_fuzz.c into a directory: small valid
 * traces written by liblrb (tests/tools/test-dump-gen.h), their packets
 * cut down to their content so that the seeds stay small, in both input
 * modes of the harness. tests/fuzz/run.sh --corpus builds and runs it,
 * natively and for s390x under qemu-user (the big-endian seeds be-meta-*).
 */
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

	if (argc != 2) {
		fprintf(stderr, "usage: mkcorpus DIR\n");
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
	return 0;
}
