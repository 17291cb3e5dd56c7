// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-consumer-bench: the three consumers of a cpu file, each moving every
 * complete packet to a destination, as lrb-record does (one packet per
 * call where the call allows it):
 *
 *   splice  splice() from the file into a pipe (pages moved, each replaced
 *           in the ring by a page the pipe gave back, or a fresh one), then
 *           from the pipe to the destination
 *   mmap    LRB_IOC_GET_NEXT_SUBBUF, write() of the packet from the
 *           mapping to the destination, LRB_IOC_PUT_SUBBUF
 *   read    read() into a buffer, write() of it to the destination
 *
 * and the timed drain of one CPU's ring, with the checks that the bytes
 * drained are exactly what the ring held.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

const char *const cb_via_name[CB_NR_VIA] = {
	[CB_SPLICE] = "splice", [CB_MMAP] = "mmap", [CB_READ] = "read",
};

const char *const cb_dest_name[CB_NR_DEST] = {
	[CB_NULL] = "/dev/null", [CB_TMPFS] = "tmpfs file",
};

const char *const cb_dest_key[CB_NR_DEST] = {
	[CB_NULL] = "null", [CB_TMPFS] = "tmpfs",
};

int cb_cpu_setup(struct cb_cpu *c, unsigned int cpu, int fd,
		 const struct lrb_buf_info *info)
{
	u64 sb = info->subbuf_size;
	struct vc_geom g;
	int size;

	*c = (struct cb_cpu){ .cpu = cpu, .fd = fd, .info = *info };
	vc_geom_from_info(&g, info, false);
	vc_stream_init(&c->st, cpu, &g);
	c->map = mmap(NULL, info->mmap_len, PROT_READ, MAP_SHARED, fd, 0);
	if (c->map == MAP_FAILED) {
		vc_fail("cpu%u: mmap of %llu bytes: %s", cpu,
			(ull)info->mmap_len, strerror(errno));
		return -1;
	}
	if (pipe(c->pipe)) {
		vc_fail("pipe: %s: too many open files?", strerror(errno));
		return -1;
	}
	/* room for a whole packet, as lrb-record asks */
	size = fcntl(c->pipe[1], F_SETPIPE_SZ, sb < 65536 ? 65536 : (int)sb);
	if (size < 0)
		size = fcntl(c->pipe[1], F_GETPIPE_SZ);
	if (size < (int)VC_PAGE) {
		vc_fail("F_GETPIPE_SZ: %s", strerror(errno));
		return -1;
	}
	c->chunk = ((u64)size < sb ? (u64)size : sb) & ~(VC_PAGE - 1);
	c->buf = malloc(sb);
	if (!c->buf) {
		vc_fail("out of memory for a %llu-byte read buffer", (ull)sb);
		return -1;
	}
	/* faulted in now, not while timed */
	memset(c->buf, 0, sb);
	return 0;
}

int cb_sinks_open(struct cb_sinks *s, const char *dir)
{
	struct statfs fs;

	if (statfs(dir, &fs) || fs.f_type != TMPFS_MAGIC) {
		vc_fail("%s is not on tmpfs (statfs: %s): give a tmpfs directory with --dir",
			dir, strerror(errno));
		return -1;
	}
	snprintf(s->tmpfs_path, sizeof(s->tmpfs_path), "%s/drained", dir);
	s->fd[CB_NULL] = open("/dev/null", O_WRONLY);
	s->fd[CB_TMPFS] = open(s->tmpfs_path, O_RDWR | O_CREAT | O_TRUNC,
			       0644);
	if (s->fd[CB_NULL] < 0 || s->fd[CB_TMPFS] < 0) {
		vc_fail("open /dev/null or %s: %s", s->tmpfs_path,
			strerror(errno));
		return -1;
	}
	return 0;
}

static int cb_write_all(int fd, const u8 *p, size_t len)
{
	ssize_t n;

	for (; len; len -= n, p += n) {
		n = write(fd, p, len);
		if (n <= 0)
			return -1;
	}
	return 0;
}

/*
 * The consumers: every complete packet of @c to @out, until the file has
 * none (EAGAIN). They return the bytes moved, or -1 after a failure.
 */
static long long cb_drain_splice(struct cb_cpu *c, int out)
{
	long long total = 0;
	ssize_t n, m, left;

	for (;;) {
		n = splice(c->fd, NULL, c->pipe[1], NULL, c->chunk,
			   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n < 0 && errno == EAGAIN)
			return total;
		if (n <= 0) {
			vc_fail("cpu%u: splice from the cpu file: %s", c->cpu,
				n ? strerror(errno) : "end of file: channel destroyed?");
			return -1;
		}
		for (left = n; left; left -= m) {
			m = splice(c->pipe[0], NULL, out, NULL, left,
				   SPLICE_F_MOVE);
			if (m <= 0) {
				vc_fail("cpu%u: splice from the pipe to the destination: %s",
					c->cpu, m ? strerror(errno) : "returned 0");
				return -1;
			}
		}
		total += n;
	}
}

static long long cb_drain_mmap(struct cb_cpu *c, int out)
{
	struct lrb_subbuf_desc d;
	long long total = 0;
	int ret;

	for (;;) {
		if (ioctl(c->fd, LRB_IOC_GET_NEXT_SUBBUF, &d)) {
			if (errno == EAGAIN)
				return total;
			vc_fail("cpu%u: LRB_IOC_GET_NEXT_SUBBUF: %s", c->cpu,
				strerror(errno));
			return -1;
		}
		ret = cb_write_all(out, c->map + d.mmap_offset,
				   d.packet_size);
		if (ret)
			vc_fail("cpu%u: write of a packet from the mapping: %s",
				c->cpu, strerror(errno));
		if (ioctl(c->fd, LRB_IOC_PUT_SUBBUF, 0)) {
			vc_fail("cpu%u: LRB_IOC_PUT_SUBBUF: %s", c->cpu,
				strerror(errno));
			return -1;
		}
		if (ret)
			return -1;
		total += d.packet_size;
	}
}

static long long cb_drain_read(struct cb_cpu *c, int out)
{
	long long total = 0;
	ssize_t n;

	for (;;) {
		n = read(c->fd, c->buf, c->info.subbuf_size);
		if (n < 0 && errno == EAGAIN)
			return total;
		if (n <= 0) {
			vc_fail("cpu%u: read from the cpu file: %s", c->cpu,
				n ? strerror(errno) : "end of file: channel destroyed?");
			return -1;
		}
		if (cb_write_all(out, c->buf, n)) {
			vc_fail("cpu%u: write of what read() returned: %s",
				c->cpu, strerror(errno));
			return -1;
		}
		total += n;
	}
}

static long long cb_drain(struct cb_cpu *c, enum cb_via via, int out)
{
	switch (via) {
	case CB_SPLICE:
		return cb_drain_splice(c, out);
	case CB_MMAP:
		return cb_drain_mmap(c, out);
	default:
		return cb_drain_read(c, out);
	}
}

static int cb_sample(struct cb_cpu *c, struct lrb_positions *p,
		     struct lrb_buf_counters *cnt)
{
	if (ioctl(c->fd, LRB_IOC_GET_POSITIONS, p) ||
	    ioctl(c->fd, LRB_IOC_GET_COUNTERS, cnt)) {
		vc_fail("cpu%u: LRB_IOC_GET_POSITIONS or _GET_COUNTERS: %s",
			c->cpu, strerror(errno));
		return -1;
	}
	return 0;
}

/* The tmpfs file holds @bytes of valid packets, verified record by record. */
static bool cb_check_sink(struct cb_cpu *c, const struct cb_sinks *s,
			  long long bytes)
{
	u64 packets = c->st.packets, errors = vc_stream_errors(&c->st);
	struct stat sb;

	if (fstat(s->fd[CB_TMPFS], &sb))
		sb.st_size = -1;
	if (!vc_check(sb.st_size == bytes,
		      "cpu%u: %s holds %lld bytes (-1: fstat failed), %lld were drained into it",
		      c->cpu, s->tmpfs_path, (long long)sb.st_size, bytes))
		return false;
	vc_verify_file(&c->st, s->tmpfs_path);
	return vc_check(c->st.packets - packets == c->info.num_subbuf &&
			vc_stream_errors(&c->st) == errors,
			"cpu%u: the verifier found %llu packets in %s, want %llu, and %llu errors (above)",
			c->cpu, (ull)(c->st.packets - packets), s->tmpfs_path,
			(ull)c->info.num_subbuf,
			(ull)(vc_stream_errors(&c->st) - errors));
}

static int cb_pin(unsigned int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		vc_fail("sched_setaffinity to CPU %u: %s: is it online?", cpu,
			strerror(errno));
		return -1;
	}
	return 0;
}

int cb_drain_timed(struct cb_cpu *c, enum cb_via via, enum cb_dest dest,
		   const struct cb_sinks *s, struct cb_total *t)
{
	u64 sb = c->info.subbuf_size, n = c->info.num_subbuf, t0, t1;
	const char *how = cb_via_name[via];
	struct lrb_buf_counters c0, c1;
	struct lrb_positions p0, p1;
	int out = s->fd[dest];
	long long bytes;
	bool ok;

	/* the consumer of a CPU's ring runs on that CPU */
	if (cb_pin(c->cpu))
		return -1;
	if (dest == CB_TMPFS &&
	    (ftruncate(out, 0) || lseek(out, 0, SEEK_SET))) {
		vc_fail("truncating %s: %s", s->tmpfs_path, strerror(errno));
		return -1;
	}
	if (cb_sample(c, &p0, &c0))
		return -1;
	if (!vc_check(p0.produced - p0.consumed == n * sb,
		      "cpu%u: %llu bytes of packets before the drain, want the whole ring (%llu): the fill did not fill it",
		      c->cpu, (ull)(p0.produced - p0.consumed),
		      (ull)(n * sb)))
		return -1;

	t0 = vc_now_ns();
	bytes = cb_drain(c, via, out);
	t1 = vc_now_ns();

	if (bytes < 0 || cb_sample(c, &p1, &c1))
		return -1;
	ok = vc_check(p1.consumed == p0.produced,
		      "cpu%u: %s: consumed %llu after the drain, want %llu: packets were left",
		      c->cpu, how, (ull)p1.consumed, (ull)p0.produced);
	ok &= vc_check(c1.bytes_read - c0.bytes_read == (u64)bytes &&
		       c1.packets_read - c0.packets_read == n,
		       "cpu%u: %s: %lld bytes drained, but bytes_read grew by %llu and packets_read by %llu (want %llu)",
		       c->cpu, how, bytes, (ull)(c1.bytes_read - c0.bytes_read),
		       (ull)(c1.packets_read - c0.packets_read), (ull)n);
	/* every packet but the last is full: no measurement of nothing */
	ok &= vc_check((u64)bytes > (n - 1) * sb,
		       "cpu%u: %s: %lld bytes drained from %llu packets of %llu bytes: they were not full",
		       c->cpu, how, bytes, (ull)n, (ull)sb);
	ok &= vc_check(c1.records_written == c0.records_written,
		       "cpu%u: records were written during the drain: the writers did not stop",
		       c->cpu);
	if (via == CB_SPLICE)
		ok &= vc_check(c1.pages_spliced - c0.pages_spliced ==
			       (u64)bytes / VC_PAGE,
			       "cpu%u: pages_spliced grew by %llu for %lld bytes spliced: pages were copied, not moved",
			       c->cpu, (ull)(c1.pages_spliced - c0.pages_spliced),
			       bytes);
	if (dest == CB_TMPFS)
		ok &= cb_check_sink(c, s, bytes);
	if (!ok)
		return -1;
	t->bytes += bytes;
	t->mbps[t->fills++] = bytes * 1e3 / (t1 - t0);
	return 0;
}
