/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The events of the lrb sample clients (lrb_sample_driver.ko and
 * lrb_sample_sched.ko), each defined once with LRB_EVENT(): the write
 * functions the clients call and the descriptions their channels'
 * metadata declares. Payloads are packed, in the CPU's byte order.
 */
#ifndef _LRB_SAMPLE_H
#define _LRB_SAMPLE_H

#include <lrb/event.h>

/* --- lrb_sample_driver: event io_complete --- */

#define LRB_SAMPLE_IO_COMPLETE_ID 1

/* Writer contexts: each (CPU, context) has its own sequence. */
#define LRB_SAMPLE_CTX_TASK 0
#define LRB_SAMPLE_CTX_IRQ 1
#define LRB_SAMPLE_NR_CTX 2

/* rq_op values, numbered as the block layer's REQ_OP_*. */
#define LRB_SAMPLE_OP_READ 0
#define LRB_SAMPLE_OP_WRITE 1
#define LRB_SAMPLE_OP_FLUSH 2
#define LRB_SAMPLE_OP_DISCARD 3

/**
 * struct lrb_sample_io - the fixed fields of an io_complete record
 * @seq: attempt number in the (@cpu, @ctx) stream, from 0: a gap is a
 *	record lost in this channel
 * @cpu: CPU that wrote the record
 * @ctx: %LRB_SAMPLE_CTX_TASK or %LRB_SAMPLE_CTX_IRQ
 * @rq_op: %LRB_SAMPLE_OP_READ ... %LRB_SAMPLE_OP_DISCARD
 * @nr_sectors: request length in 512-byte sectors
 * @dev: device number as the kernel encodes it (major << 20 | minor)
 * @sector: first sector of the request
 * @latency_ns: time from submission to completion
 * @data_len: bytes of data after these fields, lrb_sample_io_byte() each
 *
 * Every field but @data_len derives from (@seq, @cpu, @ctx) by
 * lrb_sample_io_fill(): a checker can recompute the whole record.
 */
struct lrb_sample_io {
	__u64 seq;
	__u32 cpu;
	__u8 ctx;
	__u8 rq_op;
	__u16 nr_sectors;
	__u32 dev;
	__u64 sector;
	__u32 latency_ns;
	__u16 data_len;
};

LRB_EVENT(io_complete, LRB_SAMPLE_IO_COMPLETE_ID,
	  LRB_INTEGER(u64, seq),
	  LRB_INTEGER(u32, cpu),
	  LRB_INTEGER(u8, ctx),
	  LRB_INTEGER(u8, rq_op),
	  LRB_INTEGER(u16, nr_sectors),
	  LRB_INTEGER(u32, dev),
	  LRB_INTEGER(u64, sector),
	  LRB_INTEGER(u32, latency_ns),
	  LRB_INTEGER(u16, data_len),
	  LRB_SEQUENCE(u8, data, data_len));

/* The smallest payload: the fixed fields, no data. */
#define LRB_SAMPLE_IO_MIN 34U

/* A stateless 64-bit mix (splitmix64's finaliser) of a record's key. */
static inline __u64 lrb_sample_io_mix(__u64 seq, __u32 cpu, __u8 ctx)
{
	__u64 h = ((seq + 1) * 0x9E3779B97F4A7C15ULL) ^ ((__u64)cpu << 8 | ctx);

	h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
	h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
	return h ^ (h >> 31);
}

/* Fill @io for attempt @seq of (@cpu, @ctx) with @data_len bytes of data. */
static inline void lrb_sample_io_fill(struct lrb_sample_io *io, __u64 seq,
				      __u32 cpu, __u8 ctx, __u16 data_len)
{
	__u64 h = lrb_sample_io_mix(seq, cpu, ctx);

	io->seq = seq;
	io->cpu = cpu;
	io->ctx = ctx;
	io->rq_op = (__u8)(h & 3);
	io->nr_sectors = (__u16)(8U << ((h >> 2) % 6));
	io->dev = 259U << 20 | (__u32)((h >> 8) & 3);
	io->sector = ((h >> 10) & 0xFFFFFFFULL) * 8;
	io->latency_ns = 20000 + (__u32)((h >> 40) % 980000);
	io->data_len = data_len;
}

/* Data byte @i of record @seq. */
static inline __u8 lrb_sample_io_byte(__u64 seq, __u32 i)
{
	return (__u8)(seq + i);
}

/* --- lrb_sample_sched: scheduler and interrupt tracepoints --- */

#define LRB_SAMPLE_SCHED_SWITCH_ID 1
#define LRB_SAMPLE_SCHED_WAKEUP_ID 2
#define LRB_SAMPLE_IRQ_ENTRY_ID 3
#define LRB_SAMPLE_IRQ_EXIT_ID 4

#define LRB_SAMPLE_COMM_LEN 16
/* Longest irq handler name recorded; longer names are cut. */
#define LRB_SAMPLE_IRQ_NAME_MAX 32

/*
 * sched_switch: prev_state as ftrace reports it: 0 running, else one bit
 * per TASK_REPORT state (1 S, 2 D, 4 T, 8 t, 16 X, 32 Z, 64 P, 128 I),
 * 256 when it was preempted; priorities on the kernel's scale (0..139).
 */
LRB_EVENT(sched_switch, LRB_SAMPLE_SCHED_SWITCH_ID,
	  LRB_ARRAY_TEXT(prev_comm, LRB_SAMPLE_COMM_LEN),
	  LRB_INTEGER(s32, prev_pid),
	  LRB_INTEGER(s32, prev_prio),
	  LRB_INTEGER(u32, prev_state),
	  LRB_ARRAY_TEXT(next_comm, LRB_SAMPLE_COMM_LEN),
	  LRB_INTEGER(s32, next_pid),
	  LRB_INTEGER(s32, next_prio));

/* sched_wakeup: the task woken and the CPU it will run on. */
LRB_EVENT(sched_wakeup, LRB_SAMPLE_SCHED_WAKEUP_ID,
	  LRB_ARRAY_TEXT(comm, LRB_SAMPLE_COMM_LEN),
	  LRB_INTEGER(s32, pid),
	  LRB_INTEGER(s32, prio),
	  LRB_INTEGER(s32, target_cpu));

/* irq_handler_entry: the handler's name, at most LRB_SAMPLE_IRQ_NAME_MAX. */
LRB_EVENT(irq_handler_entry, LRB_SAMPLE_IRQ_ENTRY_ID,
	  LRB_INTEGER(s32, irq),
	  LRB_INTEGER(u8, name_len),
	  LRB_SEQUENCE_TEXT(name, name_len));

/* irq_handler_exit: ret is the irqreturn_t: 0 none, 1 handled, 2 wake thread */
LRB_EVENT(irq_handler_exit, LRB_SAMPLE_IRQ_EXIT_ID,
	  LRB_INTEGER(s32, irq),
	  LRB_INTEGER(s32, ret));

#endif /* _LRB_SAMPLE_H */
