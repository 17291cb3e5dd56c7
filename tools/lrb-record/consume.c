// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-record's consumer threads, one per CPU: take the complete packets of
 * the cpu file by splice() (zero copy), mmap() with GET_NEXT_SUBBUF /
 * PUT_SUBBUF, or read(), and write them to the stream file or socket;
 * wait in poll() (watermark 1) when nothing is complete. On a stop request
 * flush the buffer and take what is complete up to the flush, without
 * waiting for new data, always ending at a packet boundary.
 */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/* After a flush, how long packets it closed may take to complete. */
#define REC_DRAIN_WAIT_NS (2 * 1000000000ULL)

/* What one step of a consumer did. */
enum rec_step { REC_MORE, REC_AGAIN, REC_EOF, REC_ERR };

#define HDR_SIZE sizeof(struct lrb_packet_header)

static void rec_add(__u64 *v, __u64 n)
{
	/* the progress line reads these from the main thread */
	__atomic_store_n(v, *v + n, __ATOMIC_RELAXED);
}

int rec_packet_header(struct rec_cpu *c, const struct lrb_packet_header *h)
{
	__u64 size = h->packet_size / 8;

	if (h->magic != LRB_PACKET_MAGIC || h->packet_size % 8 ||
	    size < HDR_SIZE || size > c->info.subbuf_size ||
	    h->header_size != HDR_SIZE) {
		tool_err("cpu%u: packet %llu of the stream (after %llu bytes) has a bad header (magic 0x%08x, packet_size %llu bits): lrb.ko and these tools disagree on the ABI",
			 c->cpu, (unsigned long long)c->packets,
			 (unsigned long long)c->bytes, h->magic,
			 (unsigned long long)h->packet_size);
		c->failed = true;
		return -1;
	}
	if (c->have_seq && h->packet_seq_num > c->last_seq + 1)
		c->seq_gaps += h->packet_seq_num - c->last_seq - 1;
	if (!c->have_seq)
		c->first_seq = h->packet_seq_num;
	c->have_seq = true;
	c->last_seq = h->packet_seq_num;
	c->discarded = h->events_discarded;
	return 0;
}

/*
 * @len bytes of the stream went by; @p has them, or is NULL when they
 * were not seen (splice), which is allowed only after a header.
 */
static void rec_frame(struct rec_cpu *c, const unsigned char *p, __u64 len)
{
	struct rec_framer *f = &c->fr;
	__u64 n;

	while (len && !f->bad) {
		if (f->have < HDR_SIZE) {
			n = HDR_SIZE - f->have;
			if (n > len)
				n = len;
			if (!p) {
				tool_err("cpu%u: a packet header at byte %llu was not seen: packet counts are not exact",
					 c->cpu, (unsigned long long)c->bytes);
				f->bad = true;
				return;
			}
			memcpy((char *)&f->hdr + f->have, p, n);
			f->have += n;
			p += n;
			len -= n;
			if (f->have < HDR_SIZE)
				continue;
			if (rec_packet_header(c, &f->hdr)) {
				f->bad = true;
				return;
			}
			f->left = f->hdr.packet_size / 8 - HDR_SIZE;
		}
		n = len < f->left ? len : f->left;
		f->left -= n;
		len -= n;
		if (p)
			p += n;
		if (!f->left && f->have == HDR_SIZE) {
			f->have = 0;
			rec_add(&c->packets, 1);
		}
	}
}

static bool rec_at_boundary(const struct rec_cpu *c)
{
	return c->fr.bad || !c->fr.have;
}

/*
 * A packet's start was not seen (@why): its size cannot be known before
 * its first byte is written. Without a limit on the output the stream
 * goes on unframed (packet counts come from the buffer's counters); with
 * --max-size or --rotate-*, it would go on past them, filling the disk:
 * this CPU's recording stops with an error instead. True if it stops.
 */
static bool rec_unframed(struct rec_cpu *c, const char *why)
{
	if (!c->r->rot.max_size && !c->r->rot.chunks)
		return false;
	tool_err("cpu%u: %s: --max-size and --rotate-* cut files at packet starts, which are lost: this CPU's recording stops here, its files within their limits (--consumer mmap takes each packet whole)",
		 c->cpu, why);
	c->failed = true;
	return true;
}

static enum rec_step rec_error(struct rec_cpu *c, const char *what)
{
	int err = errno;

	if (err == EINTR)
		return REC_MORE;
	if (err == EAGAIN)
		return REC_AGAIN;
	tool_err("cpu%u: %s: %s", c->cpu, what, strerror(err));
	c->failed = true;
	return REC_ERR;
}

/* Write to the output, naming it in an error. */
static int rec_output(struct rec_cpu *c, const void *p, size_t len)
{
	if (c->r->relayd)
		return rec_relayd_write(c, p, len);
	if (!tool_write_full(c->out, p, len))
		return 0;
	tool_err("cpu%u: writing %s/%s: %s: the trace is incomplete (disk full?)",
		 c->cpu, c->r->dir, c->name, strerror(errno));
	c->failed = true;
	return -1;
}

/*
 * read() goes on into the next packet when it is complete: write packet
 * by packet, so that rotation can start a file at each. A read ends on a
 * page or at a packet's end, so a packet header is never split.
 */
static enum rec_step rec_step_read(struct rec_cpu *c)
{
	ssize_t n = read(c->fd, c->buf, c->info.subbuf_size);
	const unsigned char *p = c->buf;
	struct lrb_packet_header h;
	bool start;
	__u64 m;

	if (n < 0)
		return rec_error(c, "read from the cpu file");
	if (!n)
		return REC_EOF;
	while (n) {
		m = n;
		start = !c->fr.bad && !c->fr.have;
		if (start && (__u64)n < HDR_SIZE &&
		    rec_unframed(c, "a packet header is split between two read()s"))
			return REC_ERR;
		if (start && (__u64)n >= HDR_SIZE) {
			memcpy(&h, p, HDR_SIZE);
			if (h.packet_size / 8 >= HDR_SIZE &&
			    h.packet_size / 8 < m)
				m = h.packet_size / 8;
		} else if (!c->fr.bad && c->fr.have == HDR_SIZE &&
			   c->fr.left < m) {
			m = c->fr.left;
		}
		rec_frame(c, p, m);
		if (c->fr.bad && rec_unframed(c, "framing lost"))
			return REC_ERR;
		/* the header is valid: it says where the packet ends */
		if (start && !c->fr.bad && (__u64)n >= HDR_SIZE &&
		    rec_rotate_packet(c, h.packet_size / 8))
			return REC_ERR;
		if (rec_output(c, p, m))
			return REC_ERR;
		rec_add(&c->bytes, m);
		p += m;
		n -= m;
	}
	return REC_MORE;
}

/* Move @len bytes from the pipe to the output. */
static int rec_pipe_out(struct rec_cpu *c, size_t len)
{
	while (len) {
		ssize_t m = splice(c->pipe[0], NULL, c->out, NULL, len,
				   SPLICE_F_MOVE);

		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0) {
			if (!m)
				errno = EIO;
			tool_err("cpu%u: splice to %s/%s: %s: the trace is incomplete (disk full?)",
				 c->cpu, c->r->dir, c->name, strerror(errno));
			c->failed = true;
			return -1;
		}
		len -= m;
	}
	return 0;
}

/*
 * The packet header at the front of the pipe, in @h: duplicated by tee()
 * and read from the copy, the pipe left whole (0); or, if tee() fails,
 * read out of the pipe itself (1: the caller writes it). -1 on an error.
 */
static int rec_splice_header(struct rec_cpu *c, struct lrb_packet_header *h)
{
	ssize_t m = tee(c->pipe[0], c->peek[1], HDR_SIZE, SPLICE_F_NONBLOCK);
	char skip[HDR_SIZE];

	if (m == (ssize_t)HDR_SIZE &&
	    tool_read_full(c->peek[0], h, HDR_SIZE) == m)
		return 0;
	/* a short copy is dropped, not left in front of the next one */
	if (m > 0 && m < (ssize_t)HDR_SIZE &&
	    tool_read_full(c->peek[0], skip, m) != m)
		m = -1;
	if (!c->tee_failed)
		tool_err("cpu%u: tee() of a packet header: %s: reading the headers out of the pipe instead (64 bytes copied per packet)",
			 c->cpu, m < 0 ? strerror(errno) : "short");
	c->tee_failed = true;
	if (tool_read_full(c->pipe[0], h, HDR_SIZE) == (ssize_t)HDR_SIZE)
		return 1;
	tool_err("cpu%u: reading a packet header out of the pipe: %s", c->cpu,
		 strerror(errno));
	c->failed = true;
	return -1;
}

static enum rec_step rec_step_splice(struct rec_cpu *c)
{
	struct lrb_packet_header h;
	bool start = rec_at_boundary(c) && !c->fr.bad;
	ssize_t n;
	int copied = 0;

	n = splice(c->fd, NULL, c->pipe[1], NULL, c->chunk,
		   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
	if (n < 0)
		return rec_error(c, "splice from the cpu file");
	if (!n)
		return REC_EOF;
	c->spliced += n;
	if (start && (size_t)n < HDR_SIZE &&
	    rec_unframed(c, "a packet header is split between two splice()s"))
		return REC_ERR;
	if (start && (size_t)n >= HDR_SIZE) {
		/* see the packet header, if possible without taking it */
		copied = rec_splice_header(c, &h);
		if (copied < 0)
			return REC_ERR;
		rec_frame(c, (const unsigned char *)&h, HDR_SIZE);
		rec_frame(c, NULL, n - HDR_SIZE);
	} else {
		rec_frame(c, NULL, n);
	}
	if (c->fr.bad && rec_unframed(c, "framing lost"))
		return REC_ERR;
	/* splice() stops at a packet's end: all of n is h's */
	if (start && !c->fr.bad && (size_t)n >= HDR_SIZE &&
	    rec_rotate_packet(c, h.packet_size / 8))
		return REC_ERR;
	if (copied && rec_output(c, &h, HDR_SIZE))
		return REC_ERR;
	if (rec_pipe_out(c, n - (copied ? HDR_SIZE : 0)))
		return REC_ERR;
	rec_add(&c->bytes, n);
	return REC_MORE;
}

static enum rec_step rec_step_mmap(struct rec_cpu *c)
{
	struct lrb_packet_header h;
	struct lrb_subbuf_desc d;
	const unsigned char *p;
	int ret = 0;

	if (ioctl(c->fd, LRB_IOC_GET_NEXT_SUBBUF, &d)) {
		if (errno == ENODEV)
			return REC_EOF;
		return rec_error(c, "LRB_IOC_GET_NEXT_SUBBUF");
	}
	if (d.mmap_offset > c->info.mmap_len ||
	    d.packet_size < HDR_SIZE ||
	    d.packet_size > c->info.mmap_len - d.mmap_offset) {
		tool_err("cpu%u: LRB_IOC_GET_NEXT_SUBBUF gave packet_size %llu at mmap_offset %llu, outside the mapping of %llu bytes: lrb.ko and these tools disagree on the ABI",
			 c->cpu, (unsigned long long)d.packet_size,
			 (unsigned long long)d.mmap_offset,
			 (unsigned long long)c->info.mmap_len);
		c->failed = true;
		ioctl(c->fd, LRB_IOC_PUT_SUBBUF, 0);
		return REC_ERR;
	}
	p = c->map + d.mmap_offset;
	memcpy(&h, p, sizeof(h));
	if (!c->fr.bad && rec_packet_header(c, &h))
		c->fr.bad = true;
	if (rec_rotate_packet(c, d.packet_size) ||
	    rec_output(c, p, d.packet_size))
		ret = -1;
	if (ioctl(c->fd, LRB_IOC_PUT_SUBBUF, 0)) {
		rec_error(c, "LRB_IOC_PUT_SUBBUF");
		return REC_ERR;
	}
	if (ret)
		return REC_ERR;
	rec_add(&c->bytes, d.packet_size);
	rec_add(&c->packets, 1);
	return REC_MORE;
}

static enum rec_step rec_step(struct rec_cpu *c)
{
	switch (c->r->consumer) {
	case REC_SPLICE:
		return rec_step_splice(c);
	case REC_MMAP:
		return rec_step_mmap(c);
	default:
		return rec_step_read(c);
	}
}

int rec_consumer_setup(struct rec_cpu *c)
{
	__u32 wm = 1;
	int size;

	if (ioctl(c->fd, LRB_IOC_SET_WATERMARK, &wm)) {
		tool_err("cpu%u: LRB_IOC_SET_WATERMARK(1): %s", c->cpu,
			 strerror(errno));
		return -1;
	}
	switch (c->r->consumer) {
	case REC_SPLICE:
		if (pipe2(c->pipe, O_CLOEXEC) || pipe2(c->peek, O_CLOEXEC)) {
			tool_err("cpu%u: pipe: %s", c->cpu, strerror(errno));
			return -1;
		}
		/* room for a whole packet: one splice() per packet */
		size = c->info.subbuf_size < (1U << 16) ?
		       1 << 16 : (int)c->info.subbuf_size;
		size = fcntl(c->pipe[1], F_SETPIPE_SZ, size);
		if (size < 0)
			size = fcntl(c->pipe[1], F_GETPIPE_SZ);
		if (size < (int)TOOL_PAGE_SIZE) {
			tool_err("cpu%u: F_GETPIPE_SZ: %s", c->cpu,
				 strerror(errno));
			return -1;
		}
		c->chunk = (__u64)size < c->info.subbuf_size ?
			   (size_t)size : c->info.subbuf_size;
		c->chunk &= ~(TOOL_PAGE_SIZE - 1);
		return 0;
	case REC_MMAP:
		c->map = mmap(NULL, c->info.mmap_len, PROT_READ, MAP_SHARED,
			      c->fd, 0);
		if (c->map == MAP_FAILED) {
			c->map = NULL;
			tool_err("cpu%u: mmap of %llu bytes: %s", c->cpu,
				 (unsigned long long)c->info.mmap_len,
				 strerror(errno));
			return -1;
		}
		return 0;
	default:
		c->buf = malloc(c->info.subbuf_size);
		if (!c->buf) {
			tool_err("cpu%u: out of memory for a %llu-byte buffer",
				 c->cpu,
				 (unsigned long long)c->info.subbuf_size);
			return -1;
		}
		return 0;
	}
}

void rec_consumer_cleanup(struct rec_cpu *c)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (c->pipe[i] >= 0)
			close(c->pipe[i]);
		if (c->peek[i] >= 0)
			close(c->peek[i]);
		c->pipe[i] = -1;
		c->peek[i] = -1;
	}
	if (c->map)
		munmap((void *)c->map, c->info.mmap_len);
	c->map = NULL;
	free(c->buf);
	c->buf = NULL;
}

/* Position of the next packet to take. */
static __u64 rec_next_pos(const struct rec_cpu *c)
{
	return c->have_seq ? (c->last_seq + 1) * c->info.subbuf_size :
			     c->pos0.consumed;
}

/*
 * Stop requested: flush, then take every packet that completes up to the
 * flush (not the ones written after it), ending at a packet boundary.
 */
static void rec_drain(struct rec_cpu *c)
{
	__u64 sb = c->info.subbuf_size, target = ~0ULL, deadline;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	struct lrb_positions p;
	enum rec_step s;

	if (ioctl(c->fd, LRB_IOC_FLUSH, 0)) {
		if (errno != ENODEV)
			tool_err("cpu%u: LRB_IOC_FLUSH: %s: the packet being filled is not recorded",
				 c->cpu, strerror(errno));
	} else if (!ioctl(c->fd, LRB_IOC_GET_POSITIONS, &p)) {
		/* every packet before the one being filled is closed */
		target = p.produced & ~(sb - 1);
	}
	deadline = tool_now_ns() + REC_DRAIN_WAIT_NS;
	for (;;) {
		if (rec_at_boundary(c) && rec_next_pos(c) >= target)
			return;
		s = rec_step(c);
		if (s == REC_MORE)
			continue;
		if (s == REC_EOF)
			c->eof = true;
		if (s != REC_AGAIN)
			return;
		if (rec_at_boundary(c) &&
		    !ioctl(c->fd, LRB_IOC_GET_POSITIONS, &p) &&
		    p.consumed >= target)
			return;	/* overwrite mode: the rest was overwritten */
		if (tool_now_ns() > deadline) {
			tool_err("cpu%u: packets before position %llu still incomplete %llu s after the flush: stopped without them",
				 c->cpu, (unsigned long long)target,
				 REC_DRAIN_WAIT_NS / 1000000000ULL);
			return;
		}
		poll(&pfd, 1, 10);
	}
}

void *rec_consume_thread(void *arg)
{
	struct rec_cpu *c = arg;
	struct rec *r = c->r;
	struct pollfd pfd[2] = {
		{ .fd = c->fd, .events = POLLIN },
		{ .fd = r->wake[0], .events = POLLIN },
	};
	__u64 period = r->live * 1e9, tick = tool_now_ns() + period, now;
	enum rec_step s;
	int timeout;

	for (;;) {
		if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
			rec_drain(c);
			break;
		}
		if (rec_rotate_pending(c)) {
			/* what the flush closes still goes to the old chunk */
			rec_drain(c);
			if (c->eof || c->failed || rec_rotate_switch(c))
				break;
			continue;
		}
		s = rec_step(c);
		if (s == REC_MORE)
			continue;
		if (s == REC_EOF)
			c->eof = true;
		if (s != REC_AGAIN)
			break;
		timeout = r->rot.chunks ? REC_ROTATE_POLL_MS : -1;
		if (period) {
			/* live: packets close and quiet CPUs say so */
			now = tool_now_ns();
			if (now >= tick) {
				if (rec_relayd_tick(c))
					break;
				tick = now + period;
				continue;
			}
			timeout = (tick - now + 999999) / 1000000;
		}
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			rec_error(c, "poll");
			break;
		}
		if (pfd[0].revents & (POLLERR | POLLNVAL)) {
			tool_err("cpu%u: poll() on the cpu file reported an error (revents 0x%x)",
				 c->cpu, pfd[0].revents);
			c->failed = true;
			break;
		}
	}
	if (c->eof && !rec_at_boundary(c)) {
		tool_err("cpu%u: the stream ended inside a packet: its last packet is cut short",
			 c->cpu);
		c->failed = true;
	}
	if (ioctl(c->fd, LRB_IOC_GET_COUNTERS, &c->c1))
		rec_error(c, "LRB_IOC_GET_COUNTERS");
	else if (c->fr.bad)
		/* packets not followed: the buffer counted what it handed out */
		c->packets = c->c1.packets_read - c->c0.packets_read;
	c->t_end = tool_now_ns();
	__atomic_store_n(&c->ended, true, __ATOMIC_RELEASE);
	__atomic_add_fetch(&r->done, 1, __ATOMIC_RELEASE);
	pthread_kill(r->main_thread, SIGUSR1);
	return NULL;
}
