// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of the recovery of a persistent channel's region, as
 * lrb-dump --recover runs it on a file anyone may have written: the
 * public recovery API of lib/region.c (lrb_region_check(),
 * lrb_region_recover(), lrb_recovery_copy(), lrb_recovery_free()) with
 * lrb-dump's metadata parser on the metadata the region holds and its
 * payload validation as the decoder's (dump_recover_payload_size()); then
 * the packets kept, copied out, read by lrb-dump's stream decoder and
 * printer as it reads the trace --recover writes.
 *
 * Input: a flags byte, then the region (page aligned here, as a mapping
 * is). Flag 1: recompute the header's checksum first, as the layout
 * defines it (include/uapi/lrb/lrb_region.h: FNV-1a of the header before
 * the checksum, then of the metadata), so that mutations of the header's
 * fields and of the metadata get past it, as a crafted file's would.
 * Seeds: regions written by liblrb (mkcorpus.c). Built and run by
 * tests/fuzz/run.sh.
 */
#include <sanitizer/asan_interface.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lrb/region.h>
#include "dump.h"

#define FZ_RESEAL 0x1
#define FZ_PAGE 4096UL

static FILE *devnull;

/* 64-bit FNV-1a, the region header's checksum. */
static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void reseal(uint8_t *base, size_t size)
{
	struct lrb_region_header h;
	uint64_t sum;

	if (size < sizeof(h))
		return;
	memcpy(&h, base, sizeof(h));
	if (h.metadata_offset > size || h.metadata_size > size - h.metadata_offset)
		return;
	sum = fnv(0xcbf29ce484222325ULL, &h,
		  offsetof(struct lrb_region_header, checksum));
	h.checksum = fnv(sum, base + h.metadata_offset, h.metadata_size);
	memcpy(base, &h, sizeof(h));
}

/* The packets of buffer @b, copied out, as lrb-dump reads its file. */
static void read_back(const struct lrb_recovery *rec, unsigned int b,
		      const struct dump_meta *meta, uint8_t *pkt, size_t size)
{
	struct dump_stream s;
	struct dump_item item;
	uint8_t *stream = NULL, *p;
	size_t len = 0;
	unsigned int i;
	long n;

	for (i = 0; i < rec->bufs[b].nr_packets; i++) {
		n = lrb_recovery_copy(rec, b, i, pkt, size);
		if (n < 0)
			abort();	/* recovery said it keeps this packet */
		p = realloc(stream, len + n);
		if (!p)
			abort();
		stream = p;
		memcpy(stream + len, pkt, n);
		len += n;
	}
	dump_stream_init(&s, meta, stream, len);
	while (dump_stream_next(&s, &item) > 0)
		dump_print(devnull, meta, &item, DUMP_JSON);
	free(stream);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dump_recover_ctx rc = { 0 };
	struct lrb_decoder dec = { .payload_size = dump_recover_payload_size,
				   .priv = &rc };
	struct lrb_region_header h;
	struct lrb_recovery *rec;
	struct dump_meta *meta;
	const char *why;
	uint8_t *base, *pkt;
	char err[300];
	unsigned int b;
	size_t alloc;

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		if (!devnull)
			abort();
	}
	if (size < 2)
		return 0;
	size--;
	alloc = (size + FZ_PAGE - 1) & ~(FZ_PAGE - 1);
	base = aligned_alloc(FZ_PAGE, alloc);
	if (!base)
		abort();
	memcpy(base, data + 1, size);
	/* recovery reads nothing past @size: ASan says if it does */
	ASAN_POISON_MEMORY_REGION(base + size, alloc - size);
	if (data[0] & FZ_RESEAL)
		reseal(base, size);
	/* lrb-dump --recover: the header, the metadata, then recovery */
	if (lrb_region_check(base, size, &h))
		goto out;
	meta = dump_meta_parse((const char *)base + h.metadata_offset,
			       h.metadata_size, err, sizeof(err));
	if (!meta)
		goto out;
	rc.meta = meta;
	rc.sc = dump_meta_stream(meta, h.stream_id);
	if (rc.sc && !lrb_region_recover(base, size, &dec, &rec, &why)) {
		pkt = malloc(h.subbuf_size);
		if (!pkt)
			abort();
		for (b = 0; b < rec->nr_bufs; b++)
			read_back(rec, b, meta, pkt, h.subbuf_size);
		free(pkt);
		lrb_recovery_free(rec);
	}
	dump_meta_free(meta);
out:
	ASAN_UNPOISON_MEMORY_REGION(base + size, alloc - size);
	free(base);
	return 0;
}
