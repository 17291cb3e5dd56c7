/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record the VM test client (tests/vm/client) writes and the VM
 * checkers (tests/vm/check) verify: event LRB_VM_EVENT_ID, payload a
 * struct lrb_vm_record followed by data_len bytes derived from the
 * sequence number, with their checksum in the header. The event itself is
 * defined in tests/vm/vm_event.h.
 */
#ifndef _LRB_VM_RECORD_H
#define _LRB_VM_RECORD_H

#include <linux/types.h>

#define LRB_VM_EVENT_ID 1

/* Writer contexts: one sequence per (CPU, context). */
#define LRB_VM_CTX_TASK 0
#define LRB_VM_CTX_IRQ 1
#define LRB_VM_NR_CTX 2

/**
 * struct lrb_vm_record - fixed part of a test record's payload
 * @seq: sequence number in its (cpu, ctx) stream, from 0
 * @cpu: CPU that wrote the record
 * @data_len: bytes of data after this struct
 * @ctx: %LRB_VM_CTX_TASK or %LRB_VM_CTX_IRQ
 * @zero: 0
 * @csum: lrb_vm_csum() of the data
 */
struct lrb_vm_record {
	__u64 seq;
	__u32 cpu;
	__u16 data_len;
	__u8 ctx;
	__u8 zero;
	__u32 csum;
} __attribute__((packed));

#define LRB_VM_RECORD_MIN sizeof(struct lrb_vm_record)

/* Byte @i of the data of record @seq written by @cpu in @ctx. */
static inline __u8 lrb_vm_data_byte(__u64 seq, __u32 cpu, __u8 ctx, __u32 i)
{
	return (__u8)(seq * 131 + cpu * 31 + ctx * 7 + i * 13 + 5);
}

/* FNV-1a over the data, seeded so that equal data in records differ. */
static inline __u32 lrb_vm_csum(const __u8 *data, __u32 len, __u64 seq)
{
	__u32 h = 2166136261U ^ (__u32)seq;
	__u32 i;

	for (i = 0; i < len; i++) {
		h ^= data[i];
		h *= 16777619U;
	}
	return h;
}

#endif /* _LRB_VM_RECORD_H */
