// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-record's output rotation, as LTTng lays it out:
 *
 * --max-size SIZE [--max-files N] (LTTng's tracefile-size and
 * tracefile-count): each CPU's stream is cut into files CHANNEL_CPU_I of
 * at most SIZE bytes of whole packets (a packet larger than SIZE has a
 * file to itself), each a valid CTF stream file. With N, I counts 0 to
 * N-1 and around again: the file replaced is always the oldest, so the
 * newest N files of each CPU are kept.
 *
 * --rotate-size SIZE, --rotate-time SECONDS (lttng enable-rotation): the
 * recording goes into trace chunks, each a trace directory of its own
 * (metadata and stream files). The chunk being written is
 * DIR/BEGIN-ID; once every CPU has moved on to the next one it is renamed
 * DIR/archives/BEGIN-END-ID, complete, as lttng rotate leaves it (times
 * as YYYYmmddTHHMMSS+hhmm). Each CPU moves on at a packet boundary after
 * flushing its buffer and taking what the flush closed, so a chunk holds
 * every record written before its end was asked for.
 *
 * The consumers call rec_rotate_packet() before the first byte of each
 * packet they write; that is the whole hook into the output path.
 */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REC_ARCHIVES "archives"
/*
 * The bounds of --rotate-time: consumers look for a rotation every
 * REC_ROTATE_POLL_MS; some 31 years.
 */
#define REC_ROTATE_TIME_MIN_S 0.1
#define REC_ROTATE_TIME_MAX_S 1e9

/* SIZE: bytes, or with k, M or G (powers of 1024) as LTTng takes them. */
static int rec_parse_size(const char *s, __u64 *v)
{
	unsigned long long n;
	unsigned int shift = 0;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'M')
		shift = 20;
	else if (*end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end || !n || n > (~0ULL >> shift))
		return -1;
	*v = n << shift;
	return 0;
}

int rec_rotate_option(struct rec *r, int opt, const char *arg)
{
	struct rec_rotate *rot = &r->rot;
	double secs;

	switch (opt) {
	case REC_OPT_MAX_SIZE:
		if (rec_parse_size(arg, &rot->max_size))
			tool_usage_error("--max-size %s: want bytes > 0, e.g. 1048576 or 1M",
					 arg);
		return 0;
	case REC_OPT_MAX_FILES:
		if (tool_parse_u64(arg, &rot->max_files) || !rot->max_files)
			tool_usage_error("--max-files %s: want a number of files > 0",
					 arg);
		return 0;
	case REC_OPT_ROTATE_SIZE:
		if (rec_parse_size(arg, &rot->chunk_size))
			tool_usage_error("--rotate-size %s: want bytes > 0, e.g. 64M",
					 arg);
		return 0;
	case REC_OPT_ROTATE_TIME:
		if (tool_parse_seconds(arg, REC_ROTATE_TIME_MIN_S,
				       REC_ROTATE_TIME_MAX_S, &secs))
			tool_usage_error("--rotate-time %s: want seconds from %g to %g, e.g. 60 or 0.5",
					 arg, REC_ROTATE_TIME_MIN_S,
					 REC_ROTATE_TIME_MAX_S);
		rot->chunk_ns = (__u64)(secs * 1e9);
		return 0;
	}
	return -1;
}

void rec_rotate_check(struct rec *r)
{
	struct rec_rotate *rot = &r->rot;

	rot->chunks = rot->chunk_size || rot->chunk_ns;
	if (rot->max_files && !rot->max_size)
		tool_usage_error("--max-files counts the files --max-size cuts: give --max-size too");
	if ((rot->max_size || rot->chunks) && r->relayd)
		tool_usage_error("--max-size, --max-files and --rotate-* cut the files of a local recording: not with --relayd");
	if ((rot->max_size || rot->chunks) && r->snapshot)
		tool_usage_error("--snapshot takes one set of packets: no --max-size, --max-files or --rotate-*");
}

/* ISO 8601 basic form with the offset from UTC, as LTTng names chunks. */
static void rec_chunk_time(char *buf, size_t len, time_t t)
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y%m%dT%H%M%S%z", &tm);
}

/* The name of chunk @chunk's directory in DIR: BEGIN-ID. */
static void rec_chunk_name(const struct rec *r, unsigned int chunk, char *buf,
			   size_t len)
{
	snprintf(buf, len, "%s-%u", r->rot.begin[chunk % 2], chunk);
}

/* The directory the stream files go to: DIR, or its chunk being written. */
static void rec_out_dir(const struct rec *r, unsigned int chunk, char *buf,
			size_t len)
{
	char name[64];

	if (!r->rot.chunks) {
		snprintf(buf, len, "%s", r->dir);
		return;
	}
	rec_chunk_name(r, chunk, name, sizeof(name));
	snprintf(buf, len, "%s/%s", r->dir, name);
}

/* ... and its descriptor, which every file is created in. */
static int rec_out_fd(const struct rec *r, unsigned int chunk)
{
	return r->rot.chunks ? r->rot.chunk_fd[chunk % 2] : r->dirfd;
}

/* Open the file @c writes next, replacing the oldest at --max-files. */
static int rec_open_stream(struct rec_cpu *c)
{
	const struct rec_rotate *rot = &c->r->rot;
	int dirfd = rec_out_fd(c->r, c->chunk_id);
	char dir[4096], name[128];

	if (rot->max_size)
		snprintf(name, sizeof(name), "%s_%llu", c->name,
			 (unsigned long long)(rot->max_files ?
					      c->file_index % rot->max_files :
					      c->file_index));
	else
		snprintf(name, sizeof(name), "%s", c->name);
	rec_out_dir(c->r, c->chunk_id, dir, sizeof(dir));
	/* --max-files: the oldest file goes, all its packets with it */
	if (rot->max_files && c->file_index >= rot->max_files) {
		if (unlinkat(dirfd, name, 0) && errno != ENOENT) {
			tool_err("cpu%u: cannot remove the oldest file %s/%s (--max-files): %s",
				 c->cpu, dir, name, strerror(errno));
			c->failed = true;
			return -1;
		}
		c->files_removed++;
	}
	c->out = trace_file_create(dirfd, name);
	if (c->out < 0) {
		tool_err("cpu%u: cannot create %s/%s: %s", c->cpu, dir, name,
			 strerror(errno));
		c->failed = true;
		return -1;
	}
	c->file_bytes = 0;
	return 0;
}

static int rec_close_stream(struct rec_cpu *c)
{
	int ret = close(c->out);

	c->out = -1;
	if (ret) {
		tool_err("cpu%u: writing %s/%s: %s: the trace is incomplete (disk full?)",
			 c->cpu, c->r->dir, c->name, strerror(errno));
		c->failed = true;
	}
	return ret;
}

static int rec_write_metadata(const struct rec *r, int dirfd,
			      const char *dir)
{
	int fd = trace_file_create(dirfd, TRACE_METADATA);

	if (fd < 0 || tool_write_full(fd, r->metadata, r->metadata_len) ||
	    close(fd)) {
		tool_err("cannot write %s/%s: %s", dir, TRACE_METADATA,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* A new directory @name in @dirfd (@dir), opened; or -1 after saying why. */
static int rec_subdir(int dirfd, const char *dir, const char *name,
		      const char *what)
{
	int fd = -1;

	if (!mkdirat(dirfd, name, 0755))
		fd = openat(dirfd, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		tool_err("cannot create %s %s/%s: %s", what, dir, name,
			 strerror(errno));
	return fd;
}

/* Create the directory of chunk @chunk, its metadata in it. */
static int rec_chunk_create(struct rec *r, unsigned int chunk, time_t begin)
{
	struct rec_rotate *rot = &r->rot;
	char dir[4096], name[64];
	int fd;

	rec_chunk_time(rot->begin[chunk % 2], sizeof(rot->begin[0]), begin);
	rec_chunk_name(r, chunk, name, sizeof(name));
	fd = rec_subdir(r->dirfd, r->dir, name, "the trace chunk");
	if (fd < 0)
		return -1;
	/* chunk - 2, which had this slot, is archived */
	if (rot->chunk_fd[chunk % 2] >= 0)
		close(rot->chunk_fd[chunk % 2]);
	rot->chunk_fd[chunk % 2] = fd;
	rec_out_dir(r, chunk, dir, sizeof(dir));
	return rec_write_metadata(r, fd, dir);
}

void rec_open_dir(struct rec *r)
{
	struct rec_rotate *rot = &r->rot;
	unsigned int i;

	rot->chunk_fd[0] = -1;
	rot->chunk_fd[1] = -1;
	rot->archives_fd = -1;
	r->dirfd = trace_dir_create(r->dir);
	if (r->dirfd < 0)
		exit(TOOL_EXIT_ERROR);
	if (rot->chunks) {
		rot->archives_fd = rec_subdir(r->dirfd, r->dir, REC_ARCHIVES,
					      "the directory of finished chunks");
		if (rot->archives_fd < 0)
			exit(TOOL_EXIT_ERROR);
		rot->t_begin = tool_now_ns();
		if (rec_chunk_create(r, 0, time(NULL)))
			exit(TOOL_EXIT_ERROR);
	}
	for (i = 0; i < r->ncpu; i++)
		if (rec_open_stream(&r->cpus[i]))
			exit(TOOL_EXIT_ERROR);
	/* last: a directory with a metadata file holds a trace */
	if (!rot->chunks && rec_write_metadata(r, r->dirfd, r->dir))
		exit(TOOL_EXIT_ERROR);
}

int rec_rotate_packet(struct rec_cpu *c, __u64 size)
{
	const struct rec_rotate *rot = &c->r->rot;

	if (rot->max_size && c->file_bytes &&
	    size > rot->max_size - (c->file_bytes < rot->max_size ?
				    c->file_bytes : rot->max_size)) {
		if (rec_close_stream(c))
			return -1;
		c->file_index++;
		if (rec_open_stream(c))
			return -1;
	}
	c->file_bytes += size;
	if (rot->chunks)
		__atomic_add_fetch(&c->r->rot.chunk_bytes, size,
				   __ATOMIC_RELAXED);
	return 0;
}

bool rec_rotate_pending(const struct rec_cpu *c)
{
	return c->r->rot.chunks &&
	       __atomic_load_n(&c->r->rot.chunk, __ATOMIC_ACQUIRE) != c->chunk_id;
}

int rec_rotate_switch(struct rec_cpu *c)
{
	if (rec_close_stream(c))
		return -1;
	c->chunk_id = __atomic_load_n(&c->r->rot.chunk, __ATOMIC_ACQUIRE);
	c->file_index = 0;
	if (rec_open_stream(c))
		return -1;
	__atomic_store_n(&c->switched, c->chunk_id, __ATOMIC_RELEASE);
	return 0;
}

/* DIR/BEGIN-ID, finished, to DIR/archives/BEGIN-END-ID. */
static int rec_chunk_archive(struct rec *r, unsigned int chunk)
{
	struct rec_rotate *rot = &r->rot;
	char from[64], to[128], end[32];

	rec_chunk_time(end, sizeof(end), time(NULL));
	rec_chunk_name(r, chunk, from, sizeof(from));
	snprintf(to, sizeof(to), "%s-%s-%u", rot->begin[chunk % 2], end,
		 chunk);
	if (renameat(r->dirfd, from, rot->archives_fd, to)) {
		tool_err("cannot move the finished trace chunk %s/%s to %s/%s/%s: %s",
			 r->dir, from, r->dir, REC_ARCHIVES, to,
			 strerror(errno));
		return -1;
	}
	rot->archived++;
	if (!r->quiet && !r->progress)
		tool_err("trace chunk %u is complete: %s/%s/%s", chunk, r->dir,
			 REC_ARCHIVES, to);
	return 0;
}

/*
 * A CPU is done with chunk @chunk when it moved on, or when its consumer
 * ended (it writes nothing more).
 */
static bool rec_chunk_left(const struct rec *r, unsigned int chunk)
{
	unsigned int i;

	for (i = 0; i < r->ncpu; i++) {
		const struct rec_cpu *c = &r->cpus[i];

		if (__atomic_load_n(&c->switched, __ATOMIC_ACQUIRE) == chunk &&
		    !__atomic_load_n(&c->ended, __ATOMIC_ACQUIRE))
			return false;
	}
	return true;
}

void rec_rotate_tick(struct rec *r)
{
	struct rec_rotate *rot = &r->rot;
	unsigned int cur = rot->chunk;
	__u64 now = tool_now_ns();

	if (!rot->chunks || r->stop || r->failed)
		return;
	if (rot->busy) {
		/* every CPU moved to chunk cur: cur - 1 is complete */
		if (!rec_chunk_left(r, cur - 1))
			return;
		if (rec_chunk_archive(r, cur - 1)) {
			r->failed = true;
			return;
		}
		rot->busy = false;
	}
	if (!(rot->chunk_ns && now - rot->t_begin >= rot->chunk_ns) &&
	    !(rot->chunk_size &&
	      __atomic_load_n(&rot->chunk_bytes, __ATOMIC_RELAXED) >=
	      rot->chunk_size))
		return;
	if (rec_chunk_create(r, cur + 1, time(NULL))) {
		r->failed = true;
		return;
	}
	rot->t_begin = now;
	__atomic_store_n(&rot->chunk_bytes, 0, __ATOMIC_RELAXED);
	rot->busy = true;
	/* the consumers see it within REC_ROTATE_POLL_MS */
	__atomic_store_n(&rot->chunk, cur + 1, __ATOMIC_RELEASE);
}

int rec_rotate_finish(struct rec *r)
{
	struct rec_rotate *rot = &r->rot;
	int ret = 0;

	if (!rot->chunks)
		return 0;
	/* consumers ended: a rotation in progress is complete, or was cut */
	if (rot->busy && rec_chunk_archive(r, rot->chunk - 1))
		ret = -1;
	if (rec_chunk_archive(r, rot->chunk))
		ret = -1;
	close(rot->chunk_fd[0]);
	if (rot->chunk_fd[1] >= 0)
		close(rot->chunk_fd[1]);
	close(rot->archives_fd);
	return ret;
}
