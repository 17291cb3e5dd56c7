/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb-consumer-bench: consumer throughput of lrb.ko's per-CPU files in the
 * VM (make bench, part consumer-vm). The test client's writers fill every
 * CPU's ring, then stop; each ring is drained by one of the consumers
 * (splice, mmap, read) into one of the destinations (/dev/null, a file on
 * tmpfs), and only the drain is timed. Built on the VM checker's helpers
 * (tests/vm/check: channel files, pass/fail accounting, the verifier).
 */
#ifndef _LRB_CONSUMER_BENCH_H
#define _LRB_CONSUMER_BENCH_H

#include "vmcheck.h"

#include <stdio.h>

#define CB_CTL "/sys/kernel/debug/lrb_vm_client/ctl"

enum cb_via { CB_SPLICE, CB_MMAP, CB_READ, CB_NR_VIA };
enum cb_dest { CB_NULL, CB_TMPFS, CB_NR_DEST };

extern const char *const cb_via_name[CB_NR_VIA];
extern const char *const cb_dest_name[CB_NR_DEST];
extern const char *const cb_dest_key[CB_NR_DEST];

/**
 * struct cb_cpu - the consumer of one cpu file, set up once
 * @cpu: its CPU
 * @fd: the cpu file, O_NONBLOCK
 * @info: its LRB_IOC_GET_INFO
 * @map: mmap: the file's mapping
 * @pipe: splice: the pipe between the file and the destination
 * @chunk: splice: bytes asked of one splice() from the file
 * @buf: read: the buffer, subbuf_size bytes
 * @st: what the verifier learnt of the packets that reached tmpfs
 */
struct cb_cpu {
	unsigned int cpu;
	int fd;
	struct lrb_buf_info info;
	const u8 *map;
	int pipe[2];
	size_t chunk;
	u8 *buf;
	struct vc_stream st;
};

/**
 * struct cb_sinks - the destinations
 * @fd: their descriptors
 * @tmpfs_path: the file on tmpfs (truncated before each drain)
 */
struct cb_sinks {
	int fd[CB_NR_DEST];
	char tmpfs_path[256];
};

/**
 * struct cb_total - the drains of one consumer, destination and CPU
 * @bytes: bytes drained
 * @fills: rings drained
 * @mbps: MB/s of each drain, room for every fill of the run
 */
struct cb_total {
	u64 bytes;
	unsigned int fills;
	double *mbps;
};

/* fill.c: start the writers, wait until every ring refuses records, stop. */
int cb_fill(struct vc_chan *ch, unsigned int timeout_s);

/* drain.c */
int cb_cpu_setup(struct cb_cpu *c, unsigned int cpu, int fd,
		 const struct lrb_buf_info *info);
int cb_sinks_open(struct cb_sinks *s, const char *dir);
/*
 * Drain @c's ring, full of complete packets, by @via into @dest, timed,
 * with the checks that the bytes drained are what the ring held; add the
 * figures to @t. Returns 0, or -1 after reporting a failure.
 */
int cb_drain_timed(struct cb_cpu *c, enum cb_via via, enum cb_dest dest,
		   const struct cb_sinks *s, struct cb_total *t);

/* report.c: the table and the BENCH lines. */
void cb_report(FILE *out, struct cb_total t[CB_NR_VIA][CB_NR_DEST][VC_MAX_CPUS],
	       unsigned int ncpu, const struct lrb_buf_info *info);

#endif /* _LRB_CONSUMER_BENCH_H */
