/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events of the lrb-dump fuzzer's fixed metadata, its seed corpus
 * (mkcorpus.c) and the host tests (tests/tools/test-dump.c): every kind
 * of field lrb-dump's metadata parser accepts, and the payload of each
 * event for a sequence number, built byte by byte as CTF lays it out.
 */
#ifndef _LRB_FUZZ_EVENTS_H
#define _LRB_FUZZ_EVENTS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../vm/vm_event.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#define FZ_STREAM_ID 7
#define FZ_CLOCK_FREQ 1000000000ULL
#define FZ_CLOCK_OFFSET_S 1700000000LL

enum fz_event {
	FZ_EV_VM = 1,		/* tests/vm/vm_record.h */
	FZ_EV_SMALL = 3,	/* fixed 12 bytes */
	FZ_EV_RICH = 4,		/* every field kind */
	FZ_EV_TINY = 5,		/* bit fields: 1 + 7 bits */
	FZ_EV_EMPTY = 6,	/* no payload: declared, never written (lrb needs one byte) */
	FZ_EV_BIG = 40,		/* beyond 5 id bits: extended headers */
};

/* The events LRB_EVENT() defines: the VM test client's. */
static const struct lrb_event_desc *const fz_events[] = {
	&lrb_event_lrb_vm_record,
};

/*
 * Appended to lib/metadata.c's text: what LRB_EVENT() does not generate
 * (bit fields, structs in sequences, enumeration ranges, arrays of arrays,
 * an empty event) for lrb-dump's metadata parser.
 */
static const char fz_events_tsdl[] =
	"typealias integer { size = 8; align = 8; signed = false; encoding = UTF8; } := fz_char_t;\n"
	"\n"
	"event {\n"
	"\tname = \"small\";\n"
	"\tid = 3;\n"
	"\tstream_id = 7;\n"
	"\tfields := struct { uint32_t seq; uint64_t ts; };\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"rich\";\n"
	"\tid = 4;\n"
	"\tstream_id = 7;\n"
	"\tfields := struct {\n"
	"\t\tuint32_t seq;\n"
	"\t\tenum : uint8_t { RUNNING = 0, SLEEPING, \"ZOMBIE\" = 4 ... 7 } state;\n"
	"\t\tinteger { size = 16; align = 8; signed = true; } temp;\n"
	"\t\tinteger { size = 32; align = 8; signed = false; base = 16; } flags;\n"
	"\t\tinteger { size = 3; align = 1; signed = false; } lo3;\n"
	"\t\tinteger { size = 5; align = 1; signed = true; } hi5;\n"
	"\t\tfz_char_t comm[8];\n"
	"\t\tstring name;\n"
	"\t\tuint16_t nvals;\n"
	"\t\tstruct { uint16_t a; int8_t b; } vals[nvals];\n"
	"\t\tuint8_t matrix[2][3];\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"tiny\";\n"
	"\tid = 5;\n"
	"\tstream_id = 7;\n"
	"\tfields := struct { integer { size = 1; align = 1; signed = false; } flag;\n"
	"\t\tinteger { size = 7; align = 1; signed = false; } pad; };\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"empty\";\n"
	"\tid = 6;\n"
	"\tstream_id = 7;\n"
	"\tfields := struct { };\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"big\";\n"
	"\tid = 40;\n"
	"\tstream_id = 7;\n"
	"\tfields := struct { uint32_t seq; uint64_t ts; uint8_t n;\n"
	"\t\tuint8_t data[n]; };\n"
	"};\n";

/* The event written as record @seq of a test trace. */
static inline unsigned int fz_event_of(uint32_t seq)
{
	static const unsigned int ids[] = {
		FZ_EV_SMALL, FZ_EV_RICH, FZ_EV_SMALL, FZ_EV_BIG, FZ_EV_TINY,
		FZ_EV_SMALL, FZ_EV_VM, FZ_EV_RICH,
	};

	return ids[seq % ARRAY_SIZE(ids)];
}

/* @v in @bytes bytes, in this CPU's byte order as a client writes them. */
static inline unsigned int fz_put(uint8_t *p, uint64_t v, unsigned int bytes)
{
	bool be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	unsigned int i;

	for (i = 0; i < bytes; i++)
		p[be ? bytes - 1 - i : i] = (uint8_t)(v >> (8 * i));
	return bytes;
}

/* Fields of a "rich" record, derived from its sequence number. */
struct fz_rich {
	uint8_t state;
	int16_t temp;
	uint32_t flags;
	uint8_t lo3;
	int8_t hi5;
	char comm[8];
	char name[16];
	uint16_t nvals;
};

static inline void fz_rich_values(uint32_t seq, struct fz_rich *r)
{
	memset(r, 0, sizeof(*r));
	r->state = seq % 9;
	r->temp = (int16_t)(1000 - (int32_t)(seq * 37 % 2000));
	r->flags = seq * 2654435761U;
	r->lo3 = seq % 8;
	r->hi5 = (int8_t)((int32_t)(seq % 32) - 16);
	/* a full comm has no NUL: the reader stops at the array's end */
	if (seq % 3)
		snprintf(r->comm, sizeof(r->comm), "t%u", seq % 1000);
	else
		memcpy(r->comm, "kworker/", 8);
	snprintf(r->name, sizeof(r->name), "n\"%u\\", seq);
	r->nvals = seq % 4;
}

/*
 * Payload of record @seq of event @id at @p (room for 128 bytes), for a
 * record written at clock value @ts. Returns its size.
 */
static inline unsigned int fz_payload(unsigned int id, uint32_t seq,
				      uint64_t ts, uint8_t *p)
{
	struct lrb_vm_record vm;
	struct fz_rich r;
	unsigned int n = 0, i;

	switch (id) {
	case FZ_EV_SMALL:
		n += fz_put(p + n, seq, 4);
		n += fz_put(p + n, ts, 8);
		return n;
	case FZ_EV_BIG:
		n += fz_put(p + n, seq, 4);
		n += fz_put(p + n, ts, 8);
		p[n++] = seq % 5;
		for (i = 0; i < seq % 5; i++)
			p[n++] = (uint8_t)(seq + i);
		return n;
	case FZ_EV_TINY:
		p[0] = seq & 1;
		return 1;
	case FZ_EV_VM:
		memset(&vm, 0, sizeof(vm));
		vm.seq = seq;
		vm.cpu = 0;
		vm.data_len = seq % 7;
		for (i = 0; i < vm.data_len; i++)
			p[sizeof(vm) + i] = lrb_vm_data_byte(seq, 0, 0, i);
		vm.csum = lrb_vm_csum(p + sizeof(vm), vm.data_len, seq);
		memcpy(p, &vm, sizeof(vm));
		return sizeof(vm) + vm.data_len;
	case FZ_EV_RICH:
		fz_rich_values(seq, &r);
		n += fz_put(p + n, seq, 4);
		p[n++] = r.state;
		n += fz_put(p + n, (uint16_t)r.temp, 2);
		n += fz_put(p + n, r.flags, 4);
		/* lo3 in bits 0-2, hi5 in bits 3-7 of one byte */
		p[n++] = (uint8_t)(r.lo3 | ((uint8_t)r.hi5 & 0x1f) << 3);
		memcpy(p + n, r.comm, 8);
		n += 8;
		memcpy(p + n, r.name, strlen(r.name) + 1);
		n += strlen(r.name) + 1;
		n += fz_put(p + n, r.nvals, 2);
		for (i = 0; i < r.nvals; i++) {
			n += fz_put(p + n, 100 + i, 2);
			p[n++] = (uint8_t)(int8_t)-(int)i;
		}
		for (i = 0; i < 6; i++)
			p[n++] = (uint8_t)(seq + i);
		return n;
	}
	return 0;
}

#endif /* _LRB_FUZZ_EVENTS_H */
