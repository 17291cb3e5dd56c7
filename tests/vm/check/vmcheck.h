/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb-vmcheck: the checker the VM scenarios run against lrb.ko and the test
 * client (tests/vm/client). Declarations shared by its source files:
 * pass/fail accounting, the packet and record verifier, and helpers for
 * the channel files, the client's debugfs files and sysfs.
 */
#ifndef _LRB_VMCHECK_H
#define _LRB_VMCHECK_H

/* splice(), memmem(), strerrorname_np(): every source includes this first */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#include <uapi/lrb/lrb_abi.h>
#include <vm_record.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef unsigned long long ull;

#define vc_unused __attribute__((unused))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* the kernel's page size: what splice() and mmap() move and map */
#define VC_PAGE ((unsigned long)sysconf(_SC_PAGESIZE))
#define VC_MAX_CPUS 64
#define VC_HEADER_SIZE sizeof(struct lrb_packet_header)
#define VC_WRITTEN "/sys/kernel/debug/lrb_vm_client/written"
#define VC_CLIENT_PARAMS "/sys/module/lrb_vm_client/parameters"

/* --- pass/fail accounting (util.c); thread-safe --- */

extern const char *vc_test;	/* "consume-read", ...: names the report */
extern bool vc_quiet;		/* selftest: failures counted, not printed */

void vc_pass(void);
void vc_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool vc_check_fn(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * One pass or fail on @cond. @cond is evaluated before the message's
 * arguments, so that strerror(errno) there describes the call in @cond.
 */
#define vc_check(cond, ...) ({					\
	bool vc_ok_ = (cond);					\
	vc_check_fn(vc_ok_, __VA_ARGS__);			\
})
/* Check that a call returned -1 with errno @want (or @alt, if nonzero). */
bool vc_check_err(long ret, int err, int want, int alt, const char *what);
void vc_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
ull vc_passed(void);
ull vc_failed(void);
/* Print "vmtest <test>: N passed, M failed"; return the exit status. */
int vc_report(void);

/* SIGBUS/SIGSEGV: report the failure and exit (consumers of mappings). */
void vc_catch_fatal_signals(void);

/* Read one byte at @p: 0 if readable, else the signal it raised. */
int vc_probe(const volatile u8 *p);

/* --- time --- */
u64 vc_now_ns(void);
void vc_sleep_ms(unsigned int ms);

/* --- channel files (util.c) --- */

/**
 * struct vc_chan - the per-CPU files of a channel, opened
 * @name: channel name
 * @ncpu: cpu files found (cpu0 .. cpu<ncpu-1>)
 * @fd: their descriptors
 * @info: LRB_IOC_GET_INFO of each
 */
struct vc_chan {
	const char *name;
	unsigned int ncpu;
	int fd[VC_MAX_CPUS];
	struct lrb_buf_info info[VC_MAX_CPUS];
};

/* Open every cpu file with @flags, check count and info; 0 or -1. */
int vc_chan_open(struct vc_chan *ch, const char *name, int flags);
void vc_chan_close(struct vc_chan *ch);
char *vc_chan_path(char *buf, size_t len, const char *chan,
		   const char *file);
/* Possible CPUs from /sys/devices/system/cpu/possible, or -1. */
int vc_possible_cpus(void);

/* --- the client's files --- */

/**
 * struct vc_client_cpu - the client's counts for one CPU
 * @task: write attempts of the task context
 * @irq: write attempts of the irq context
 * @lost: failed reservations (both contexts)
 * @valid: a line for this CPU was found
 */
struct vc_client_cpu {
	u64 task;
	u64 irq;
	u64 lost;
	bool valid;
};

/* Parse the client's "written" file; number of CPU lines, or -1. */
int vc_read_written(const char *path, struct vc_client_cpu *cl,
		    unsigned int ncpu);
/* A module parameter of the client as a number, or -1 if unreadable. */
long long vc_client_param(const char *param);

/* Parse a "key=value ..." stats line into @c; 0 if every key was found. */
int vc_parse_stats_line(const char *line, struct lrb_buf_counters *c);

/* Read a whole (small) file into a NUL-terminated malloc'd buffer. */
char *vc_read_file(const char *path, size_t *len);

/* --- record header layout (from the channel metadata) --- */

/**
 * struct vc_layout - record header layout of the stream
 * @large: large header (32-bit id + 32-bit timestamp) instead of compact
 * @tsc_bits: timestamp bits of a compact header
 */
struct vc_layout {
	bool large;
	unsigned int tsc_bits;
};

extern struct vc_layout vc_layout;
/* Learn the layout from the metadata text; 0, or -1 if not recognised. */
int vc_layout_from_metadata(const char *text, struct vc_layout *l);

/* --- verifier (verify.c) --- */

enum vc_cat {
	VC_FRAMING,	/* the byte stream could not be cut into packets */
	VC_HEADER,	/* packet header fields */
	VC_PKTSEQ,	/* packet_seq_num */
	VC_TIME,	/* packet and record timestamps */
	VC_DISC,	/* events_discarded */
	VC_RECORD,	/* record layout and fixed fields */
	VC_DATA,	/* record data bytes and checksum */
	VC_ORDER,	/* per (cpu, ctx) record sequence */
	VC_PAD,		/* padding after the content */
	VC_NR_VERIFY,
	/* accounting after the end of the stream */
	VC_ACC_GAPS = VC_NR_VERIFY, /* seq gaps == client's lost */
	VC_ACC_LOST,	/* client's lost == lrb's lost_* sum */
	VC_ACC_DISC,	/* last events_discarded == lost */
	VC_ACC_TOTAL,	/* received + lost == attempts */
	VC_ACC_WRITTEN,	/* records_written == received */
	VC_ACC_READ,	/* packets_read, bytes_read */
	VC_ACC_POS,	/* positions: everything consumed */
	VC_ACC_SPLICE,	/* pages_spliced == bytes spliced / page */
	VC_NR_CAT,
};

extern const char *const vc_cat_name[VC_NR_CAT];

/**
 * struct vc_geom - what every packet of a stream must agree with
 * @subbuf_size: largest packet
 * @stream_id: CTF stream id of the channel
 * @data_len: data bytes every record carries (client size - 20), or -1
 * @exact_seq: consuming reader of a discard buffer from its creation: the
 *	first packet is number 0 and each next one is +1
 */
struct vc_geom {
	u64 subbuf_size;
	u32 stream_id;
	long data_len;
	bool exact_seq;
};

/**
 * struct vc_packet - what the verifier learnt of the last packet
 * @h: its header
 * @records: records decoded
 * @first_ts: timestamp of its first record
 * @last_ts: timestamp of its last record
 * @max_gap: longest time between two of its records, or from its last
 *	record to its timestamp_end: how long its CPU may have stalled
 * @hash: FNV-1a of its bytes (to compare two takes of one packet)
 */
struct vc_packet {
	struct lrb_packet_header h;
	u64 records;
	u64 first_ts;
	u64 last_ts;
	u64 max_gap;
	u32 hash;
};

/**
 * struct vc_stream - one CPU's stream of packets being verified
 * @cpu: the CPU of the file
 * @g: geometry
 * @have_pkt: a packet was verified; @last is its header
 * @last: header of the previous packet
 * @cur: the packet verified last
 * @packets: packets verified
 * @bytes: their bytes
 * @records: records decoded
 * @lost_packets: gaps in packet_seq_num
 * @have_seq: a record of this ctx was seen
 * @last_seq: its seq
 * @received: records per ctx
 * @gaps: records missing between received ones, per ctx
 * @desync: per ctx, records were skipped after a decoding error: the next
 *	one's distance to the last seq is not a loss
 * @errors: per category
 * @printed: detail lines printed per category
 */
struct vc_stream {
	unsigned int cpu;
	struct vc_geom g;
	bool have_pkt;
	struct lrb_packet_header last;
	struct vc_packet cur;
	u64 packets;
	u64 bytes;
	u64 records;
	u64 lost_packets;
	bool have_seq[LRB_VM_NR_CTX];
	u64 last_seq[LRB_VM_NR_CTX];
	u64 received[LRB_VM_NR_CTX];
	u64 gaps[LRB_VM_NR_CTX];
	bool desync[LRB_VM_NR_CTX];
	u64 errors[VC_NR_CAT];
	unsigned int printed[VC_NR_CAT];
};

void vc_stream_init(struct vc_stream *s, unsigned int cpu,
		    const struct vc_geom *g);
/* Count an error of @cat on @s and print its detail (first few only). */
void vc_err(struct vc_stream *s, enum vc_cat cat, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Verify one packet of @len bytes delivered at @p; @where is its position
 * in the stream (byte offset, or desc.pos), for messages.
 */
void vc_verify_packet(struct vc_stream *s, const u8 *p, u64 len, u64 where);
/* Turn the per-category error counts of @s into checks. */
void vc_stream_report(struct vc_stream *s, bool accounting);
u64 vc_stream_errors(const struct vc_stream *s);

/**
 * struct vc_acct - inputs of the end-of-stream accounting
 * @cnt: LRB_IOC_GET_COUNTERS after end of file
 * @pos: LRB_IOC_GET_POSITIONS after end of file
 * @cl: the client's final counts for the CPU
 * @spliced: bytes moved by splice() from the cpu file, -1 if not spliced
 */
struct vc_acct {
	struct lrb_buf_counters cnt;
	struct lrb_positions pos;
	struct vc_client_cpu cl;
	long long spliced;
};

void vc_account(struct vc_stream *s, const struct vc_acct *a);

/**
 * struct vc_framer - cuts a byte stream into packets for the verifier
 * @buf: the packet being assembled (subbuf_size bytes)
 * @have: bytes of it received
 * @need: bytes wanted: the header, then the whole packet
 * @off: stream offset of its first byte
 * @broken: framing was lost (bad packet_size): the rest is discarded
 */
struct vc_framer {
	u8 *buf;
	u64 have;
	u64 need;
	u64 off;
	bool broken;
};

int vc_framer_init(struct vc_framer *f, u64 subbuf_size);
void vc_framer_free(struct vc_framer *f);
/* Where the next bytes go, and how many the current packet still wants. */
u8 *vc_framer_space(struct vc_framer *f, u64 *len);
/* @n bytes were stored at vc_framer_space(): verify what is complete. */
void vc_framer_commit(struct vc_framer *f, struct vc_stream *s, u64 n);
/* End of stream: a packet cut short is an error. */
void vc_framer_end(struct vc_framer *f, struct vc_stream *s);
/* Read from @fd (read(2)) into the framer; returns read()'s result. */
ssize_t vc_framer_read(struct vc_framer *f, struct vc_stream *s, int fd);
/* Verify a whole file holding a packet stream; 0 or -1 (I/O error). */
int vc_verify_file(struct vc_stream *s, const char *path);

/* --- subcommands --- */

/**
 * struct vc_opts - command line
 * @chan: channel name
 * @via: consume: read, splice-file, splice-tcp, mmap
 * @out: consume --via splice-file: directory of the cpu files; live-lag:
 *	the copy of the input
 * @written: the client's written file
 * @sync: destroyed: directory of the handshake files
 * @timeout_s: give up waiting after this long
 * @period_us: timer: the switch timer period
 * @slack_us: timer: allowed lateness of the switch timer; live-lag: of
 *	an event
 * @duration_s: timer: how long to watch
 * @count: snapshot: snapshots to take
 * @interval_ms: snapshot: pause between them
 * @final: snapshot: writers are stopped; flush and expect everything
 * @cpu: watermark: the CPU whose file is used
 * @dirs: trace: the trace directories, in recording order
 * @ndirs: their number
 * @stats: trace: a copy of the stats file taken after ctl "stop"
 * @live: trace: a snapshot taken while the writers ran: no accounting
 * @ko: fault-load: the module file
 * @params: fault-load: its parameters
 * @fail_nth: consume: fail allocation 1..@fail_nth in turn of every call
 *	on the cpu files (0: none)
 */
#define VC_TRACE_DIRS 4
struct vc_opts {
	const char *chan;
	const char *via;
	const char *out;
	const char *written;
	const char *sync;
	unsigned int timeout_s;
	unsigned int period_us;
	unsigned int slack_us;
	unsigned int duration_s;
	unsigned int count;
	unsigned int interval_ms;
	bool final;
	unsigned int cpu;
	const char *dirs[VC_TRACE_DIRS];
	unsigned int ndirs;
	const char *stats;
	bool live;
	const char *ko;
	const char *params;
	unsigned int fail_nth;
};

int vc_cmd_consume(const struct vc_opts *o);
int vc_cmd_snapshot(const struct vc_opts *o);
int vc_cmd_timer(const struct vc_opts *o);
int vc_cmd_watermark(const struct vc_opts *o);
int vc_cmd_badinput(const struct vc_opts *o);
int vc_cmd_destroyed(const struct vc_opts *o);
int vc_cmd_pipe_outlive(const struct vc_opts *o);
int vc_cmd_selftest(const struct vc_opts *o);
int vc_cmd_trace(const struct vc_opts *o);
int vc_cmd_fault_load(const struct vc_opts *o);
int vc_cmd_fault_open(const struct vc_opts *o);
int vc_cmd_create_failed(const struct vc_opts *o);
int vc_cmd_live_lag(const struct vc_opts *o);
int vc_consume_selftest(const char *via, const char *dir, int fd,
			struct vc_stream *st, long long *spliced);

/* Shared by subcommands: geometry of a channel for the verifier. */
void vc_geom_from_info(struct vc_geom *g, const struct lrb_buf_info *info,
		       bool exact_seq);
/* Read the metadata of @chan and set vc_layout; 0 or -1. */
int vc_load_layout(const char *chan);
/* Accounting of every CPU of a drained discard channel. */
void vc_account_all(struct vc_chan *ch, struct vc_stream *st,
		    const long long *spliced, const char *written);
/* Touch @dir/@name; wait for @dir/@name to exist: 0 or -1 on timeout. */
int vc_sync_touch(const char *dir, const char *name);
int vc_sync_wait(const char *dir, const char *name, unsigned int timeout_s);

/* --- injected allocation failures (faults.c) --- */

/**
 * struct vc_fault - a thread's /proc/thread-self/fail-nth
 * @fd: the file, -1 when no failures are injected
 * @next: vc_fault_arm_next() arms this allocation
 * @max: and then cycles @next through 1..@max
 * @pending: armed, and vc_fault_fired() not asked yet
 * @streak: the calls failed from the last @streak armings in a row
 * @armed: calls armed
 * @fired: failures injected
 * @enomem: calls that failed with ENOMEM from an injected failure
 */
struct vc_fault {
	int fd;
	unsigned int next;
	unsigned int max;
	bool pending;
	unsigned int streak;
	u64 armed;
	u64 fired;
	u64 enomem;
};

/* Open the calling thread's fail-nth; 0, or -1 (failure reported). */
int vc_fault_open(struct vc_fault *f, unsigned int max);
void vc_fault_close(struct vc_fault *f);
/* Fail the @n-th allocation of this thread from now on. */
void vc_fault_arm(struct vc_fault *f, unsigned int n);
void vc_fault_arm_next(struct vc_fault *f);
/* Disarm; true if the armed failure was injected. Keeps errno. */
bool vc_fault_fired(struct vc_fault *f);
/* After an armed call: true if it failed, with ENOMEM, from the injection. */
bool vc_fault_retry(struct vc_fault *f, long ret, const char *what);

#endif /* _LRB_VMCHECK_H */
