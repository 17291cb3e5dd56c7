/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records of the lrb sample clients (lrb_sample_driver.ko and
 * lrb_sample_sched.ko): event ids, payload layouts and their CTF 1.8
 * declarations, so that a test or tool can check a trace field by field.
 * Every payload is packed and little-endian, as the channel metadata's
 * byte-aligned typealiases describe it.
 */
#ifndef _LRB_SAMPLE_H
#define _LRB_SAMPLE_H

#include <linux/types.h>

/* The kernel defines __packed; user space must define it itself. */
#ifndef __packed
#error "user space: define __packed as GCC's packed type attribute first"
#endif

#define LRB_SAMPLE_STR_(x) #x
#define LRB_SAMPLE_STR(x) LRB_SAMPLE_STR_(x)

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
 * struct lrb_sample_io - fixed part of an io_complete payload
 * @seq: attempt number in the (@cpu, @ctx) stream, from 0: a gap is a
 *	record lost in this channel
 * @cpu: CPU that wrote the record
 * @ctx: %LRB_SAMPLE_CTX_TASK or %LRB_SAMPLE_CTX_IRQ
 * @rq_op: %LRB_SAMPLE_OP_READ ... %LRB_SAMPLE_OP_DISCARD
 * @nr_sectors: request length in 512-byte sectors
 * @dev: device number as the kernel encodes it (major << 20 | minor)
 * @sector: first sector of the request
 * @latency_ns: time from submission to completion
 * @data_len: bytes of data after this struct, lrb_sample_io_byte() each
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
} __packed;

/* The smallest payload: the fixed fields, no data. */
#define LRB_SAMPLE_IO_MIN sizeof(struct lrb_sample_io)

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

#define LRB_SAMPLE_IO_METADATA						\
	"event {\n"							\
	"\tname = \"io_complete\";\n"					\
	"\tid = " LRB_SAMPLE_STR(LRB_SAMPLE_IO_COMPLETE_ID) ";\n"	\
	"\tstream_id = 0;\n"						\
	"\tfields := struct {\n"					\
	"\t\tuint64_t seq;\n"						\
	"\t\tuint32_t cpu;\n"						\
	"\t\tuint8_t ctx;\n"						\
	"\t\tuint8_t rq_op;\n"						\
	"\t\tuint16_t nr_sectors;\n"					\
	"\t\tuint32_t dev;\n"						\
	"\t\tuint64_t sector;\n"					\
	"\t\tuint32_t latency_ns;\n"					\
	"\t\tuint16_t data_len;\n"					\
	"\t\tuint8_t data[data_len];\n"					\
	"\t};\n"							\
	"};\n"

/* --- lrb_sample_sched: scheduler and interrupt tracepoints --- */

#define LRB_SAMPLE_SCHED_SWITCH_ID 1
#define LRB_SAMPLE_SCHED_WAKEUP_ID 2
#define LRB_SAMPLE_IRQ_ENTRY_ID 3
#define LRB_SAMPLE_IRQ_EXIT_ID 4

#define LRB_SAMPLE_COMM_LEN 16
/* Longest irq handler name recorded; longer names are cut. */
#define LRB_SAMPLE_IRQ_NAME_MAX 32

/**
 * struct lrb_sample_sched_switch - payload of sched_switch
 * @prev_comm: name of the task switched out, NUL-padded
 * @prev_pid: its pid
 * @prev_prio: its priority (kernel scale, 0..139)
 * @prev_state: its state as ftrace reports it: 0 running, else one bit
 *	per TASK_REPORT state (1 S, 2 D, 4 T, 8 t, 16 X, 32 Z, 64 P, 128 I),
 *	256 when it was preempted
 * @next_comm: name of the task switched in
 * @next_pid: its pid
 * @next_prio: its priority
 */
struct lrb_sample_sched_switch {
	char prev_comm[LRB_SAMPLE_COMM_LEN];
	__s32 prev_pid;
	__s32 prev_prio;
	__u32 prev_state;
	char next_comm[LRB_SAMPLE_COMM_LEN];
	__s32 next_pid;
	__s32 next_prio;
} __packed;

/**
 * struct lrb_sample_sched_wakeup - payload of sched_wakeup
 * @comm: name of the task woken
 * @pid: its pid
 * @prio: its priority
 * @target_cpu: the CPU it will run on
 */
struct lrb_sample_sched_wakeup {
	char comm[LRB_SAMPLE_COMM_LEN];
	__s32 pid;
	__s32 prio;
	__s32 target_cpu;
} __packed;

/**
 * struct lrb_sample_irq_entry - payload of irq_handler_entry
 * @irq: interrupt number
 * @name_len: bytes of @name, at most %LRB_SAMPLE_IRQ_NAME_MAX
 * @name: the handler's name, not NUL-terminated
 */
struct lrb_sample_irq_entry {
	__s32 irq;
	__u8 name_len;
	char name[LRB_SAMPLE_IRQ_NAME_MAX];
} __packed;

/* Payload bytes of an irq_handler_entry record with @name_len. */
#define LRB_SAMPLE_IRQ_ENTRY_LEN(name_len)				\
	(sizeof(struct lrb_sample_irq_entry) - LRB_SAMPLE_IRQ_NAME_MAX +	\
	 (name_len))

/**
 * struct lrb_sample_irq_exit - payload of irq_handler_exit
 * @irq: interrupt number
 * @ret: the handler's irqreturn_t: 0 none, 1 handled, 2 wake thread
 */
struct lrb_sample_irq_exit {
	__s32 irq;
	__s32 ret;
} __packed;

#define LRB_SAMPLE_CHAR_TSDL						\
	"integer { size = 8; align = 8; signed = false; encoding = UTF8; }"

#define LRB_SAMPLE_SCHED_METADATA					\
	"event {\n"							\
	"\tname = \"sched_switch\";\n"					\
	"\tid = " LRB_SAMPLE_STR(LRB_SAMPLE_SCHED_SWITCH_ID) ";\n"	\
	"\tstream_id = 0;\n"						\
	"\tfields := struct {\n"					\
	"\t\t" LRB_SAMPLE_CHAR_TSDL " prev_comm[16];\n"			\
	"\t\tint32_t prev_pid;\n"					\
	"\t\tint32_t prev_prio;\n"					\
	"\t\tuint32_t prev_state;\n"					\
	"\t\t" LRB_SAMPLE_CHAR_TSDL " next_comm[16];\n"			\
	"\t\tint32_t next_pid;\n"					\
	"\t\tint32_t next_prio;\n"					\
	"\t};\n"							\
	"};\n\n"							\
	"event {\n"							\
	"\tname = \"sched_wakeup\";\n"					\
	"\tid = " LRB_SAMPLE_STR(LRB_SAMPLE_SCHED_WAKEUP_ID) ";\n"	\
	"\tstream_id = 0;\n"						\
	"\tfields := struct {\n"					\
	"\t\t" LRB_SAMPLE_CHAR_TSDL " comm[16];\n"			\
	"\t\tint32_t pid;\n"						\
	"\t\tint32_t prio;\n"						\
	"\t\tint32_t target_cpu;\n"					\
	"\t};\n"							\
	"};\n\n"							\
	"event {\n"							\
	"\tname = \"irq_handler_entry\";\n"				\
	"\tid = " LRB_SAMPLE_STR(LRB_SAMPLE_IRQ_ENTRY_ID) ";\n"		\
	"\tstream_id = 0;\n"						\
	"\tfields := struct {\n"					\
	"\t\tint32_t irq;\n"						\
	"\t\tuint8_t name_len;\n"					\
	"\t\t" LRB_SAMPLE_CHAR_TSDL " name[name_len];\n"			\
	"\t};\n"							\
	"};\n\n"							\
	"event {\n"							\
	"\tname = \"irq_handler_exit\";\n"				\
	"\tid = " LRB_SAMPLE_STR(LRB_SAMPLE_IRQ_EXIT_ID) ";\n"		\
	"\tstream_id = 0;\n"						\
	"\tfields := struct {\n"					\
	"\t\tint32_t irq;\n"						\
	"\t\tint32_t ret;\n"						\
	"\t};\n"							\
	"};\n"

#endif /* _LRB_SAMPLE_H */
