/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb-fuzz: the syscall fuzzer of lrb.ko's channel files, run in the VM
 * (tests/fuzz/vm/run.sh). Declarations shared by its source files: the
 * worker's state (its table of open files, readers and mappings), the
 * operations, the random numbers and the ABI checks.
 */
#ifndef _LRB_FUZZ_H
#define _LRB_FUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <uapi/lrb/lrb_abi.h>

typedef uint32_t u32;
typedef uint64_t u64;
typedef unsigned long long ull;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FZ_PAGE 4096UL
#define FZ_MAX_FDS 12
#define FZ_MAX_READERS (FZ_MAX_FDS + FZ_MAX_MAPS)
#define FZ_MAX_MAPS 4
#define FZ_BUF_SIZE (256UL * 1024)
#define FZ_MAX_PRINTED 20	/* findings printed per worker; all counted */
#define FZ_OP_LEN 200
#define FZ_NR_ERRNO 134		/* errno values counted one by one */
/* usable bytes of a pointer that runs into a PROT_NONE page */
#define FZ_STRADDLE 2

/* The operations, counted per kind in the summary. */
enum fz_op {
	FZ_OPEN, FZ_CLOSE, FZ_READ, FZ_SPLICE, FZ_MMAP, FZ_MUNMAP, FZ_TOUCH,
	FZ_MPROTECT, FZ_IOCTL, FZ_POLL, FZ_FCNTL, FZ_SEEK, FZ_TWIN, FZ_NR_OPS
};

extern const char *const fz_op_names[FZ_NR_OPS];

/* What a file of the table is. */
enum fz_kind { FZ_CPU, FZ_META, FZ_STATS };

/*
 * The reader of a cpuN file: its open file description, shared by the
 * descriptor and the mappings made from it, which keep it alive. What the
 * fuzzer knows of its state decides what the ABI requires of a call.
 */
struct fz_reader {
	int refs;		/* descriptor and mappings; 0: slot free */
	u32 cpu;
	struct lrb_buf_info info;
	bool held;		/* a packet held through the ioctls */
	struct lrb_subbuf_desc desc;	/* ... and its description */
	u64 streamed;		/* bytes read() and splice() returned */
	u64 next_pkt;		/* stream byte of the next packet header */
	u32 watermark;		/* the last one set */
	bool ended;		/* end of file seen: the channel is gone */
};

struct fz_file {
	int fd;			/* -1: slot free */
	enum fz_kind kind;
	int reader;		/* index in readers[] (cpuN files) */
	bool nonblock;
	char path[64];
};

struct fz_map {
	char *addr;		/* NULL: slot free */
	u64 len;
	int reader;
};

/*
 * Per-worker counters and progress, in memory shared with the parent.
 * A call that fails is "refused" if the worker chose an argument or a
 * state the ABI refuses on purpose (a bad pointer, length, flag or
 * command, a file of the wrong kind, a page not held), else "failed":
 * the state of the channel said no (no data yet, another reader, the
 * channel gone or being recreated, a signal).
 */
struct fz_shared {
	volatile u64 steps;
	volatile u64 findings;
	volatile int done;
	u64 ops[FZ_NR_OPS];
	u64 errs[FZ_NR_OPS];	/* of them, failed with an allowed errno */
	u64 refused[FZ_NR_OPS];	/* ... of which refused on purpose */
	u64 errnos[FZ_NR_OPS][FZ_NR_ERRNO];	/* failed, not refused */
	char op[FZ_OP_LEN];	/* the operation in progress */
};

struct fz_worker {
	int id;
	unsigned int nr_workers;
	u64 seed;
	u64 rng;
	u64 step;
	const char *chan;
	u32 nr_cpus;		/* possible CPUs */
	struct fz_shared *sh;
	enum fz_op op;		/* the operation in progress */
	bool refuse;		/* ... and it chose to be refused */
	struct fz_file files[FZ_MAX_FDS];
	struct fz_reader readers[FZ_MAX_READERS];
	struct fz_map maps[FZ_MAX_MAPS];
	char *buf;		/* read() target */
	char *ro;		/* a read-only page */
	char *none;		/* a PROT_NONE page */
	int pipe[2];
};

/* --- random numbers (worker.c) --- */
u64 fz_rand(struct fz_worker *w);
/* 0 .. n - 1 */
u64 fz_below(struct fz_worker *w, u64 n);
/* true once in @n */
bool fz_one_in(struct fz_worker *w, u64 n);
/* a pointer argument: mostly @good, else NULL, a kernel address... */
void *fz_pointer(struct fz_worker *w, void *good, bool *bad, bool *ro_bad);
/* the read-only page's bytes: @len of @src, the rest (or all) zeros */
void fz_ro_fill(struct fz_worker *w, const void *src, size_t len);

/* --- the ABI checks (check.c) --- */
/* Record the operation in progress (printf format) for findings and hangs. */
void fz_begin(struct fz_worker *w, enum fz_op op, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The call in progress was chosen to be refused (see struct fz_shared). */
static inline void fz_refuse(struct fz_worker *w, bool on)
{
	w->refuse |= on;
}

/* A result the ABI does not allow: print it with the seed and step. */
void fz_finding(struct fz_worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Check a failed call: @err must be one of the zero-terminated @allowed.
 * Counts the error; returns true if it was allowed.
 */
bool fz_errno_ok(struct fz_worker *w, enum fz_op op, int err,
		 const int *allowed);
/* A zero-terminated errno list, static: it may be returned. */
#define FZ_ERRS(...) \
	({ static const int _errs[] = { __VA_ARGS__, 0 }; _errs; })

/* --- the table (table.c) --- */
struct fz_file *fz_any_file(struct fz_worker *w);
bool fz_own_cpu(const struct fz_worker *w, u32 cpu);
bool fz_cpu_in_use(const struct fz_worker *w, u32 cpu);
void fz_close_file(struct fz_worker *w, struct fz_file *f);
void fz_unmap(struct fz_worker *w, struct fz_map *m);
bool fz_put_away(struct fz_worker *w);
struct fz_file *fz_reader_file(struct fz_worker *w, int r);
struct fz_file *fz_free_file(struct fz_worker *w);
unsigned int fz_chan_files(const struct fz_worker *w);
struct fz_map *fz_any_map(struct fz_worker *w);
struct fz_map *fz_free_map(struct fz_worker *w);
int fz_new_reader(struct fz_worker *w, u32 cpu, int fd);
void fz_put_reader(struct fz_worker *w, int r);

/* --- the operations (ops_file.c, ops_map.c, ops_ioctl.c) --- */
void fz_op_open(struct fz_worker *w);
void fz_op_close(struct fz_worker *w);
void fz_op_read(struct fz_worker *w);
void fz_op_splice(struct fz_worker *w);
void fz_op_poll(struct fz_worker *w);
void fz_op_fcntl(struct fz_worker *w);
void fz_op_seek(struct fz_worker *w);
void fz_op_mmap(struct fz_worker *w);
void fz_op_munmap(struct fz_worker *w);
void fz_op_touch(struct fz_worker *w);
void fz_op_mprotect(struct fz_worker *w);
void fz_op_ioctl(struct fz_worker *w);
void fz_op_twin(struct fz_worker *w);
/* GET_NEXT_SUBBUF and PUT_SUBBUF on @f, checked as fz_op_ioctl() does */
void fz_take(struct fz_worker *w, struct fz_file *f);
void fz_put_back(struct fz_worker *w, struct fz_file *f);

/* Run worker @w until @deadline (CLOCK_MONOTONIC seconds). */
void fz_worker_run(struct fz_worker *w, double deadline);
double fz_now(void);

#endif /* _LRB_FUZZ_H */
