/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the lrb tools (tools/lrb-*): messages and exit codes,
 * number and list parsing, whole reads and writes, the files of a channel
 * (/dev/lrb/<channel>/...), trace directories and a small JSON writer.
 * Every tool links all of tools/common, so it stays small and keeps no
 * global state but the program name used in messages.
 */
#ifndef _LRB_TOOL_H
#define _LRB_TOOL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <uapi/lrb/lrb_abi.h>

#define TOOL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/*
 * The kernel's page size (4 KiB on x86-64, 16 or 64 KiB on arm64): lrb.ko
 * splices and maps whole pages of it.
 */
#define TOOL_PAGE_SIZE tool_page_size()
/* CPUs a tool handles; cpu files beyond are reported, not opened */
#define TOOL_MAX_CPUS 1024

/* Exit statuses of every tool. */
#define TOOL_EXIT_OK 0
#define TOOL_EXIT_ERROR 1
#define TOOL_EXIT_USAGE 2

unsigned long tool_page_size(void);

/* --- messages (util.c) --- */

/* The name messages start with ("lrb-record"); set it first in main(). */
extern const char *tool_name;

/* "<tool>: <message>\n" on stderr. */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* tool_err(), then exit(TOOL_EXIT_ERROR). */
void tool_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* tool_err(), a hint to run --help, then exit(TOOL_EXIT_USAGE). */
void tool_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* --- parsing (util.c); 0 on success, -1 if @s is not valid --- */

/*
 * A decimal number, or 0x hexadecimal, that fits 64 bits, without
 * leading or trailing garbage.
 */
int tool_parse_u64(const char *s, __u64 *v);
/*
 * Seconds, with an optional fraction ("2", "0.5"), from @min to @max:
 * every option in seconds has bounds, so that its conversions to
 * microseconds, nanoseconds and poll() timeouts cannot overflow.
 */
int tool_parse_seconds(const char *s, double min, double max, double *v);
/*
 * A CPU list such as "0,2-5": sets @set[n] for each CPU n (< @max).
 * Returns the number of CPUs listed, or -1.
 */
int tool_parse_cpus(const char *s, bool *set, unsigned int max);

/*
 * The first @n bytes of @s, up to a NUL, as text safe to print on a
 * terminal: printable ASCII as it is, a backslash doubled, any other
 * byte (escape sequences, newlines, UTF-8) as \xHH. In @buf, which takes
 * 4 * @n + 1 bytes; cut short if @len is less. Returns @buf.
 */
char *tool_escape(char *buf, size_t len, const char *s, size_t n);

/* --- I/O (util.c) --- */

/* Write all of @len bytes, retrying on EINTR; 0 or -1 (errno set). */
int tool_write_full(int fd, const void *buf, size_t len);
/* Read up to @len bytes, stopping early only at end of file; or -1. */
ssize_t tool_read_full(int fd, void *buf, size_t len);
/*
 * Read a whole (small) file into a NUL-terminated malloc'd buffer; its
 * length in @len if not NULL. NULL with errno set on failure.
 */
char *tool_read_file(const char *path, size_t *len);
/* Create the directory @path and its missing parents; 0 or -1. */
int tool_mkdirs(const char *path);

/* --- time (util.c) --- */

/* CLOCK_MONOTONIC in nanoseconds. */
__u64 tool_now_ns(void);
/* Sleep @ns nanoseconds (any length: not usleep()'s 32 bits). */
void tool_sleep_ns(__u64 ns);
/* Bytes per second as MB/s (10^6 bytes), 0 for no time. */
double tool_mbps(__u64 bytes, __u64 ns);

/* --- channel files (chan.c) --- */

/* Where lrb.ko's nodes are: /dev/lrb, or $LRB_DEV_DIR (for tests). */
const char *lrb_dev_dir(void);
/* "<dev dir>/<chan>/<file>" in @buf; @buf, or NULL if it does not fit. */
char *lrb_chan_path(char *buf, size_t len, const char *chan,
		    const char *file);
/*
 * The cpuN files of @chan: sets @present[n] for each; returns the
 * number of entries of @present that matter (highest N + 1), or -1
 * after printing why (no such channel: lists the channels there are).
 */
int lrb_chan_cpus(const char *chan, bool *present, unsigned int max);
/*
 * Open /dev/lrb/<chan>/cpu<cpu> read-only with @flags added and read its
 * LRB_IOC_GET_INFO into @info (if not NULL). Returns the descriptor, or
 * -1 after printing what failed and what to do.
 */
int lrb_cpu_open(const char *chan, unsigned int cpu, int flags,
		 struct lrb_buf_info *info);

/* Names of the fields of struct lrb_buf_counters, in order. */
#define LRB_NR_COUNTERS 12
extern const char *const lrb_counter_names[LRB_NR_COUNTERS];

/* The counters as an array of LRB_NR_COUNTERS __u64, in that order. */
static inline __u64 *lrb_counters_array(struct lrb_buf_counters *c)
{
	return &c->records_written;
}

/*
 * Records lost, all causes: lost_full + lost_wrap + lost_big + lost_nest +
 * lost_overwrite, what packet headers carry as events_discarded.
 */
static inline __u64 lrb_counters_lost(const struct lrb_buf_counters *c)
{
	return c->lost_full + c->lost_wrap + c->lost_big + c->lost_nest +
	       c->lost_overwrite;
}

/*
 * Parse one line of a channel's stats file ("cpu<N> key=value ..." or
 * "total ..."): @cpu gets N, or -1 for the total line. 0 if every
 * counter was found, else -1.
 */
int lrb_parse_stats_line(const char *line, int *cpu,
			 struct lrb_buf_counters *c);

/* --- trace directories (chan.c) --- */

#define TRACE_METADATA "metadata"
/*
 * lrb-record's summary. Hidden: babeltrace2 takes every other regular
 * file of a trace directory for a stream file, and ignores hidden ones.
 */
#define TRACE_SUMMARY ".lrb-record.json"

/* "<chan>_<cpu>", the stream file of one CPU, in @buf. */
char *trace_stream_name(char *buf, size_t len, const char *chan,
			unsigned int cpu);
/*
 * Prepare @dir for a new trace, safe from other users when run as root in
 * a shared directory such as /tmp: its missing parents are created, @dir
 * itself with mkdir(); if it exists, it must be an empty directory, not a
 * symbolic link, owned by this user and writable by no one else, so that
 * no one else can have planted a file or a link in it. Returns a
 * descriptor of the directory (O_DIRECTORY) to create the trace's files
 * in, with trace_file_create(); or -1 after printing why.
 */
int trace_dir_create(const char *dir);
/*
 * Create the file @name in the directory @dirfd: exclusively, never
 * through a symbolic link. A descriptor for writing, or -1 (errno set).
 */
int trace_file_create(int dirfd, const char *name);

/* --- JSON writer (json.c) --- */

/**
 * struct json - a JSON document being written, indented, to a stream
 * @f: the stream
 * @depth: nesting level
 * @first: at each level, nothing written in it yet
 * @closer: at each level, the bracket that closes it
 */
struct json {
	FILE *f;
	int depth;
	bool first[16];
	char closer[16];
};

void json_begin(struct json *j, FILE *f);
/* Close what is open and end with a newline. */
void json_end(struct json *j);
/* Open an object or array; @key is NULL inside an array or at the top. */
void json_object(struct json *j, const char *key);
void json_array(struct json *j, const char *key);
void json_close(struct json *j);
void json_u64(struct json *j, const char *key, __u64 v);
void json_s64(struct json *j, const char *key, long long v);
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, bool v);
void json_str(struct json *j, const char *key, const char *s);
/* Every counter of @c as members of the current object. */
void json_counters(struct json *j, const char *key,
		   const struct lrb_buf_counters *c);

#endif /* _LRB_TOOL_H */
