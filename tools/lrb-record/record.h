/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb-record: records every CPU of an lrb channel into a trace directory
 * or to lttng-relayd (Documentation/tools/lrb-record.rst). Declarations
 * shared by its files: main.c (options, setup, signals), consume.c (one
 * thread per CPU: splice, mmap or read), rotate.c (the trace directory,
 * --max-size/--max-files and trace chunks), snapshot.c, relayd.c (to
 * lttng-relayd) and report.c (progress line, summary, JSON).
 */
#ifndef _LRB_RECORD_H
#define _LRB_RECORD_H

#include <pthread.h>
#include <stdbool.h>

#include "tool.h"

enum rec_consumer { REC_SPLICE, REC_MMAP, REC_READ };

/* Long options without a short form (rotate.c parses them). */
enum rec_long_opt {
	REC_OPT_MAX_SIZE = 0x100,
	REC_OPT_MAX_FILES,
	REC_OPT_ROTATE_SIZE,
	REC_OPT_ROTATE_TIME,
};

/* How often consumers look for a chunk rotation while nothing comes. */
#define REC_ROTATE_POLL_MS 100

extern const char *const rec_consumer_names[3];

/**
 * struct rec_framer - finds the packets in a byte stream from a cpu file
 * @hdr: the header of the packet being received
 * @have: bytes of @hdr received; @hdr is complete at its full size
 * @left: bytes of the current packet after @have header bytes still due
 * @bad: a header was not an lrb packet header: framing was given up
 */
struct rec_framer {
	struct lrb_packet_header hdr;
	unsigned int have;
	__u64 left;
	bool bad;
};

/**
 * struct rec_cpu - the recording of one CPU
 * @r: the recording
 * @cpu: the CPU
 * @fd: its cpu file, O_NONBLOCK
 * @out: the stream file, or -1 with --relayd
 * @info: LRB_IOC_GET_INFO
 * @c0: counters at the start
 * @c1: counters at the end
 * @pos0: positions at the start
 * @name: the stream file's name (<channel>_<cpu>)
 * @tid: the consumer thread
 * @bytes: bytes recorded (read by the progress line while it runs)
 * @packets: packets recorded, likewise
 * @fr: framing of the stream (splice and read; mmap: @fr.bad only)
 * @have_seq: a packet was recorded; @first_seq and @last_seq are set
 * @first_seq: packet_seq_num of the first packet recorded
 * @last_seq: packet_seq_num of the last one
 * @seq_gaps: packets missing between the ones recorded
 * @discarded: events_discarded of the last packet recorded
 * @spliced: bytes moved by splice() out of the cpu file
 * @skipped: snapshot: packet positions that could not be taken
 * @eof: the channel was destroyed and everything read
 * @failed: an error stopped this CPU's recording
 * @t_start: when it started (tool_now_ns())
 * @t_end: when it ended
 * @pipe: splice: cpu file -> @pipe[1], @pipe[0] -> @out
 * @peek: splice: packet headers duplicated from @pipe by tee()
 * @chunk: splice: bytes asked of one splice() (pipe capacity)
 * @tee_failed: splice: tee() failed, headers are read out of the pipe
 * @map: mmap: the mapping
 * @buf: read: the buffer
 * @chunk_id: the trace chunk it writes (rotate.c)
 * @switched: @chunk_id, for the main thread to see
 * @ended: its consumer thread is over
 * @file_index: --max-size: the file it writes, counted from 0
 * @file_bytes: bytes in the file it writes
 * @files_removed: --max-files: files replaced, the oldest each time
 */
struct rec_cpu {
	struct rec *r;
	unsigned int cpu;
	int fd;
	int out;
	struct lrb_buf_info info;
	struct lrb_buf_counters c0;
	struct lrb_buf_counters c1;
	struct lrb_positions pos0;
	char name[96];
	pthread_t tid;
	__u64 bytes;
	__u64 packets;
	struct rec_framer fr;
	bool have_seq;
	__u64 first_seq;
	__u64 last_seq;
	__u64 seq_gaps;
	__u64 discarded;
	__u64 spliced;
	__u64 skipped;
	bool eof;
	bool failed;
	__u64 t_start;
	__u64 t_end;
	int pipe[2];
	int peek[2];
	size_t chunk;
	bool tee_failed;
	const unsigned char *map;
	unsigned char *buf;
	unsigned int chunk_id;
	unsigned int switched;
	bool ended;
	__u64 file_index;
	__u64 file_bytes;
	__u64 files_removed;
};

/**
 * struct rec_rotate - how the output is cut (rotate.c)
 * @max_size: --max-size, bytes, or 0
 * @max_files: --max-files, or 0
 * @chunk_size: --rotate-size, bytes, or 0
 * @chunk_ns: --rotate-time, or 0
 * @chunks: the recording goes into trace chunks
 * @chunk: the chunk consumers are to write (set by the main thread)
 * @busy: @chunk - 1 is not complete yet
 * @archived: chunks moved to DIR/archives
 * @chunk_bytes: bytes written to @chunk (consumers add)
 * @t_begin: when @chunk began (tool_now_ns())
 * @begin: the begin time in the names of chunks @chunk - 1 and @chunk
 * @chunk_fd: the directories of chunks @chunk - 1 and @chunk, at the
 *	index of their number modulo 2, or -1
 * @archives_fd: DIR/archives, or -1
 */
struct rec_rotate {
	__u64 max_size;
	__u64 max_files;
	__u64 chunk_size;
	__u64 chunk_ns;
	bool chunks;
	unsigned int chunk;
	bool busy;
	unsigned int archived;
	__u64 chunk_bytes;
	__u64 t_begin;
	char begin[2][32];
	int chunk_fd[2];
	int archives_fd;
};

/**
 * struct rec - a recording
 * @chan: channel name
 * @dir: -o DIR; with --relayd, the session name (NULL: the default)
 * @dirfd: DIR, which every file of the trace is created in; -1 with --relayd
 * @relayd: --relayd URL, or NULL
 * @live: --live period in seconds, 0 if not live
 * @consumer: --consumer
 * @duration: --duration in seconds, 0 for none
 * @snapshot: --snapshot
 * @quiet: --quiet: no progress line or messages
 * @progress: show the progress line (stderr is a terminal, not quiet)
 * @ncpu: CPUs recorded
 * @cpus: their recordings
 * @metadata: the channel's metadata text
 * @metadata_len: its length
 * @stop: a stop was requested (written by the main thread only)
 * @wake: a pipe that becomes readable when @stop is set
 * @done: consumer threads finished
 * @main_thread: the thread that waits for signals
 * @stop_reason: why the recording stopped
 * @t_start: start (tool_now_ns())
 * @t_end: end
 * @start_realtime: wall clock at the start, seconds since the epoch
 * @failed: something failed: exit status 1
 * @rot: --max-size, --max-files, --rotate-size, --rotate-time
 */
struct rec {
	const char *chan;
	const char *dir;
	int dirfd;
	const char *relayd;
	double live;
	enum rec_consumer consumer;
	double duration;
	bool snapshot;
	bool quiet;
	bool progress;
	unsigned int ncpu;
	struct rec_cpu *cpus;
	char *metadata;
	size_t metadata_len;
	int stop;
	int wake[2];
	unsigned int done;
	pthread_t main_thread;
	const char *stop_reason;
	__u64 t_start;
	__u64 t_end;
	double start_realtime;
	bool failed;
	struct rec_rotate rot;
};

/* consume.c */
int rec_consumer_setup(struct rec_cpu *c);
void *rec_consume_thread(void *arg);
void rec_consumer_cleanup(struct rec_cpu *c);
/* A packet header arrived: count it and check its sequence. */
int rec_packet_header(struct rec_cpu *c, const struct lrb_packet_header *h);

/* rotate.c */
/* Parse one of the rec_long_opt options: 0, or -1 if @opt is not one. */
int rec_rotate_option(struct rec *r, int opt, const char *arg);
/* After the options: usage errors of their combinations. */
void rec_rotate_check(struct rec *r);
/* The trace directory (or its first chunk): metadata and stream files. */
void rec_open_dir(struct rec *r);
/* A packet of @size bytes is about to be written: cut the file if due. */
int rec_rotate_packet(struct rec_cpu *c, __u64 size);
/* The main thread asked for the next chunk and @c is not there yet. */
bool rec_rotate_pending(const struct rec_cpu *c);
/* Move @c's output to the chunk asked for (at a packet boundary). */
int rec_rotate_switch(struct rec_cpu *c);
/* Main thread, often: start a rotation when due, archive a finished chunk. */
void rec_rotate_tick(struct rec *r);
/* Consumers ended: archive the chunks left. */
int rec_rotate_finish(struct rec *r);

/* snapshot.c */
void rec_snapshot_cpu(struct rec_cpu *c);

/* relayd.c */
/* Check a --relayd URL (and keep its addresses); 0, or -1 after saying why. */
int rec_relayd_parse(const char *url, bool quiet);
/* Connect, create the session @session and its streams, send the metadata. */
int rec_relayd_open(struct rec *r, const char *session, bool named);
/* Bytes of @c's stream, whole packets or not, to relayd; 0 or -1. */
int rec_relayd_write(struct rec_cpu *c, const void *buf, size_t len);
/* --live: close @c's packet; a beacon if the CPU is quiet. 0 or -1. */
int rec_relayd_tick(struct rec_cpu *c);
/*
 * A beacon: @c wrote nothing before @now (tool_now_ns()) that relayd does
 * not have. 0 or -1.
 */
int rec_relayd_beacon(struct rec_cpu *c, __u64 now);
/* Close the streams and the connections; 0, or -1 if anything failed. */
int rec_relayd_close(struct rec *r);
/*
 * Packets of @c relayd confirmed (said it has written to its files), and
 * their bytes in @bytes.
 */
__u64 rec_relayd_confirmed(const struct rec_cpu *c, __u64 *bytes);
/* Packets of @c sent whole to relayd, confirmed or not; bytes in @bytes. */
__u64 rec_relayd_sent(const struct rec_cpu *c, __u64 *bytes);
/* relayd's control address, and its directory for the session. */
const char *rec_relayd_peer(void);
const char *rec_relayd_output(void);

/* report.c */
void rec_progress(struct rec *r, bool final);
void rec_summary(struct rec *r, FILE *f);
/* .lrb-record.json into a malloc'd string; NULL if out of memory. */
char *rec_json(struct rec *r, size_t *len);

#endif /* _LRB_RECORD_H */
