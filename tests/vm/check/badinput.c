// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-vmcheck badinput: every way of misusing a cpu file must fail with the
 * documented error and change nothing: opens, ioctl numbers, pointers and
 * arguments, splice lengths and cursor, mmap protections, lengths and
 * offsets, accesses to pages of the mapping not held (SIGBUS). The channel
 * files stats and metadata must parse.
 *
 * Needs at least 3 complete packets on the CPU's buffer and the writers
 * stopped (ctl "stop"), so that counters do not move under the checks.
 */
#include "vmcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *vc_signame(int sig)
{
	return !sig ? "readable" : sig == SIGBUS ? "SIGBUS" :
	       sig == SIGSEGV ? "SIGSEGV" : "signal";
}

static void vc_bad_open(const char *path)
{
	int fd = open(path, O_RDONLY);

	vc_check_err(fd, errno, EBUSY, 0, "second open O_RDONLY while open");
	if (fd >= 0)
		close(fd);
	fd = open(path, O_WRONLY);
	vc_check_err(fd, errno, EACCES, EPERM, "open O_WRONLY");
	if (fd >= 0)
		close(fd);
	fd = open(path, O_RDWR);
	vc_check_err(fd, errno, EACCES, EPERM, "open O_RDWR");
	if (fd >= 0)
		close(fd);
}

static void vc_bad_ioctl(int fd, const struct lrb_buf_info *info, u8 *ro,
			 u8 *none)
{
	struct lrb_subbuf_desc d;
	void *kaddr = (void *)0xffff888000000000UL;
	u32 wm;
	long r;

	r = ioctl(fd, _IO(LRB_IOC_MAGIC, 0x7f), 0);
	vc_check_err(r, errno, ENOTTY, 0, "unknown ioctl number 0x7f");
	r = ioctl(fd, _IOR('x', 0x01, int), &wm);
	vc_check_err(r, errno, ENOTTY, 0, "ioctl of another magic");
	r = ioctl(fd, _IOR(LRB_IOC_MAGIC, 0x00, __u32), &wm);
	vc_check_err(r, errno, ENOTTY, 0, "GET_INFO number with a wrong size");
	r = ioctl(fd, _IOW(LRB_IOC_MAGIC, 0x00, struct lrb_buf_info), ro);
	vc_check_err(r, errno, ENOTTY, 0, "GET_INFO number with a wrong direction");

	r = ioctl(fd, LRB_IOC_GET_INFO, NULL);
	vc_check_err(r, errno, EFAULT, 0, "GET_INFO(NULL)");
	r = ioctl(fd, LRB_IOC_GET_INFO, kaddr);
	vc_check_err(r, errno, EFAULT, 0, "GET_INFO(kernel address)");
	r = ioctl(fd, LRB_IOC_GET_INFO, ro);
	vc_check_err(r, errno, EFAULT, 0, "GET_INFO(read-only page)");
	r = ioctl(fd, LRB_IOC_GET_POSITIONS, none);
	vc_check_err(r, errno, EFAULT, 0, "GET_POSITIONS(PROT_NONE page)");
	r = ioctl(fd, LRB_IOC_GET_COUNTERS, NULL);
	vc_check_err(r, errno, EFAULT, 0, "GET_COUNTERS(NULL)");
	r = ioctl(fd, LRB_IOC_SET_WATERMARK, NULL);
	vc_check_err(r, errno, EFAULT, 0, "SET_WATERMARK(NULL)");
	r = ioctl(fd, LRB_IOC_GET_SUBBUF, NULL);
	vc_check_err(r, errno, EFAULT, 0, "GET_SUBBUF(NULL)");
	r = ioctl(fd, LRB_IOC_GET_SUBBUF, none);
	vc_check_err(r, errno, EFAULT, 0, "GET_SUBBUF(PROT_NONE page)");
	r = ioctl(fd, LRB_IOC_GET_NEXT_SUBBUF, NULL);
	vc_check_err(r, errno, EFAULT, 0, "GET_NEXT_SUBBUF(NULL)");
	r = ioctl(fd, LRB_IOC_GET_NEXT_SUBBUF, ro);
	vc_check_err(r, errno, EFAULT, 0, "GET_NEXT_SUBBUF(read-only page)");
	/* a packet the caller could not learn of must not stay held */
	r = ioctl(fd, LRB_IOC_GET_HELD, &d);
	vc_check_err(r, errno, EINVAL, 0,
		     "GET_HELD after GET_NEXT_SUBBUF failed with EFAULT (nothing may be held)");

	r = ioctl(fd, LRB_IOC_PUT_SUBBUF, 1);
	vc_check_err(r, errno, EINVAL, 0, "PUT_SUBBUF with argument 1");
	r = ioctl(fd, LRB_IOC_FLUSH, 1);
	vc_check_err(r, errno, EINVAL, 0, "FLUSH with argument 1");
	r = ioctl(fd, LRB_IOC_PUT_SUBBUF, 0);
	vc_check_err(r, errno, EINVAL, 0, "PUT_SUBBUF with nothing held");
	r = ioctl(fd, LRB_IOC_GET_HELD, &d);
	vc_check_err(r, errno, EINVAL, 0, "GET_HELD with nothing held");

	wm = 0;
	r = ioctl(fd, LRB_IOC_SET_WATERMARK, &wm);
	vc_check_err(r, errno, EINVAL, 0, "SET_WATERMARK(0)");
	wm = info->num_subbuf + 1;
	r = ioctl(fd, LRB_IOC_SET_WATERMARK, &wm);
	vc_check_err(r, errno, EINVAL, 0, "SET_WATERMARK(num_subbuf + 1)");
	wm = 0xffffffffU;
	r = ioctl(fd, LRB_IOC_SET_WATERMARK, &wm);
	vc_check_err(r, errno, EINVAL, 0, "SET_WATERMARK(0xffffffff)");
	wm = info->num_subbuf;
	vc_check(!ioctl(fd, LRB_IOC_SET_WATERMARK, &wm),
		 "SET_WATERMARK(num_subbuf): %s", strerror(errno));
	wm = 1;
	vc_check(!ioctl(fd, LRB_IOC_SET_WATERMARK, &wm),
		 "SET_WATERMARK(1): %s", strerror(errno));
}

/* GET_SUBBUF with each field of the descriptor wrong in turn. */
static void vc_bad_get_subbuf(int fd, const struct lrb_buf_info *info,
			      const struct lrb_positions *p)
{
	static const char *const what[] = {
		"pos not a multiple of subbuf_size (+1)",
		"pos in the middle of a packet", "nonzero seq",
		"nonzero content_size", "nonzero packet_size",
		"nonzero mmap_offset",
	};
	u64 sb = info->subbuf_size;
	struct lrb_subbuf_desc d;
	unsigned int i;
	long r;

	for (i = 0; i < ARRAY_SIZE(what); i++) {
		memset(&d, 0, sizeof(d));
		d.pos = p->consumed;
		switch (i) {
		case 0:
			d.pos += 1;
			break;
		case 1:
			d.pos += sb / 2;
			break;
		case 2:
			d.seq = 1;
			break;
		case 3:
			d.content_size = 1;
			break;
		case 4:
			d.packet_size = 1;
			break;
		case 5:
			d.mmap_offset = VC_PAGE;
			break;
		}
		r = ioctl(fd, LRB_IOC_GET_SUBBUF, &d);
		vc_check_err(r, errno, EINVAL, 0, what[i]);
		if (!r)
			ioctl(fd, LRB_IOC_PUT_SUBBUF, 0);
	}
	memset(&d, 0, sizeof(d));
	d.pos = (p->produced & ~(sb - 1)) + 4 * sb;
	r = ioctl(fd, LRB_IOC_GET_SUBBUF, &d);
	vc_check_err(r, errno, EAGAIN, 0, "GET_SUBBUF 4 packets ahead of produced");
	if (!r)
		ioctl(fd, LRB_IOC_PUT_SUBBUF, 0);
}

/* The status page: one page, read-only, at offset mmap_len only. */
static void vc_bad_status_mmap(int fd, const struct lrb_buf_info *info)
{
	off_t off = info->mmap_len;
	void *m;

	m = mmap(NULL, VC_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, off);
	vc_check_err(m == MAP_FAILED ? -1 : 0, errno, EPERM, 0,
		     "mmap of the status page PROT_READ|PROT_WRITE MAP_PRIVATE");
	if (m != MAP_FAILED)
		munmap(m, VC_PAGE);
	m = mmap(NULL, VC_PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, fd, off);
	vc_check_err(m == MAP_FAILED ? -1 : 0, errno, EPERM, 0,
		     "mmap of the status page PROT_READ|PROT_EXEC");
	if (m != MAP_FAILED)
		munmap(m, VC_PAGE);
	m = mmap(NULL, 2 * VC_PAGE, PROT_READ, MAP_SHARED, fd, off);
	vc_check_err(m == MAP_FAILED ? -1 : 0, errno, EINVAL, 0,
		     "mmap of two pages at the status page");
	if (m != MAP_FAILED)
		munmap(m, 2 * VC_PAGE);
	m = mmap(NULL, VC_PAGE, PROT_READ, MAP_SHARED, fd, off + VC_PAGE);
	vc_check_err(m == MAP_FAILED ? -1 : 0, errno, EINVAL, 0,
		     "mmap of a page after the status page");
	if (m != MAP_FAILED)
		munmap(m, VC_PAGE);
	m = mmap(NULL, VC_PAGE, PROT_READ, MAP_SHARED, fd, off);
	if (vc_check(m != MAP_FAILED, "mmap of the status page: %s",
		     strerror(errno))) {
		long r = mprotect(m, VC_PAGE, PROT_READ | PROT_WRITE);

		vc_check_err(r, errno, EACCES, 0,
			     "mprotect PROT_WRITE on the status page");
		vc_check(((const struct lrb_status *)m)->size ==
			 sizeof(struct lrb_status),
			 "status page: size %u, want %zu",
			 ((const struct lrb_status *)m)->size,
			 sizeof(struct lrb_status));
		munmap(m, VC_PAGE);
	}
}

static void vc_bad_mmap(int fd, const struct lrb_buf_info *info)
{
	u64 len = info->mmap_len;
	void *m;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	/* the core refuses a writable shared mapping of a read-only fd */
	vc_check_err(m == MAP_FAILED ? -1 : 0, errno, EPERM, EACCES,
		     "mmap PROT_READ|PROT_WRITE MAP_SHARED");
	if (m != MAP_FAILED)
		munmap(m, len);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	vc_check_err(m == MAP_FAILED ? -1 : 0, errno, EPERM, 0,
		     "mmap PROT_READ|PROT_WRITE MAP_PRIVATE");
	if (m != MAP_FAILED)
		munmap(m, len);
	/* trace pages are never executable */
	m = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	vc_check_err(m == MAP_FAILED ? -1 : 0, errno, EPERM, 0,
		     "mmap PROT_READ|PROT_EXEC MAP_SHARED");
	if (m != MAP_FAILED)
		munmap(m, len);
	m = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	vc_check_err(m == MAP_FAILED ? -1 : 0, errno, EPERM, 0,
		     "mmap PROT_READ|PROT_EXEC MAP_PRIVATE");
	if (m != MAP_FAILED)
		munmap(m, len);
	m = mmap(NULL, len - VC_PAGE, PROT_READ, MAP_SHARED, fd, 0);
	vc_check_err(m == MAP_FAILED ? -1 : 0, errno, EINVAL, 0,
		     "mmap of mmap_len less a page");
	if (m != MAP_FAILED)
		munmap(m, len - VC_PAGE);
	m = mmap(NULL, len + VC_PAGE, PROT_READ, MAP_SHARED, fd, 0);
	vc_check_err(m == MAP_FAILED ? -1 : 0, errno, EINVAL, 0,
		     "mmap of mmap_len and a page");
	if (m != MAP_FAILED)
		munmap(m, len + VC_PAGE);
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, VC_PAGE);
	vc_check_err(m == MAP_FAILED ? -1 : 0, errno, EINVAL, 0,
		     "mmap at offset of a page");
	if (m != MAP_FAILED)
		munmap(m, len);
	m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (vc_check(m != MAP_FAILED, "mmap PROT_READ MAP_PRIVATE: %s",
		     strerror(errno))) {
		long r = mprotect(m, len, PROT_READ | PROT_WRITE);

		vc_check_err(r, errno, EACCES, EPERM,
			     "mprotect PROT_WRITE on a private mapping");
		r = mprotect(m, len, PROT_READ | PROT_EXEC);
		vc_check_err(r, errno, EACCES, 0,
			     "mprotect PROT_EXEC on a private mapping");
		munmap(m, len);
	}
	vc_bad_status_mmap(fd, info);
}

/*
 * The ioctl protocol on a mapping: only the held packet is readable, until
 * it is put back. Returns the mapping, kept for later checks.
 */
static const u8 *vc_bad_held(int fd, const struct lrb_buf_info *info,
			     struct vc_stream *s)
{
	u64 len = info->mmap_len, sb = info->subbuf_size, off, i;
	struct lrb_subbuf_desc d, h;
	const u8 *m;
	int sig;
	long r;

	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (!vc_check(m != MAP_FAILED, "mmap PROT_READ MAP_SHARED of %llu bytes: %s",
		      (ull)len, strerror(errno)))
		return NULL;
	r = mprotect((void *)m, len, PROT_READ | PROT_WRITE);
	vc_check_err(r, errno, EACCES, EPERM,
		     "mprotect PROT_WRITE on a shared mapping");
	r = mprotect((void *)m, len, PROT_READ | PROT_EXEC);
	vc_check_err(r, errno, EACCES, 0,
		     "mprotect PROT_EXEC on a shared mapping");
	sig = vc_probe(m);
	vc_check(sig == SIGBUS, "first page of the mapping, nothing held: %s, want SIGBUS",
		 vc_signame(sig));
	sig = vc_probe(m + len - 1);
	vc_check(sig == SIGBUS, "last byte of the mapping, nothing held: %s, want SIGBUS",
		 vc_signame(sig));

	r = ioctl(fd, LRB_IOC_GET_NEXT_SUBBUF, &d);
	if (!vc_check(!r, "GET_NEXT_SUBBUF with complete packets waiting: %s",
		      strerror(errno)))
		return m;
	if (!vc_check(!(d.mmap_offset % VC_PAGE) && d.mmap_offset < len &&
		      d.packet_size <= len - d.mmap_offset &&
		      d.packet_size >= VC_PAGE,
		      "GET_NEXT_SUBBUF: packet_size %llu at mmap_offset %llu: outside the mapping of %llu bytes",
		      (ull)d.packet_size, (ull)d.mmap_offset, (ull)len)) {
		ioctl(fd, LRB_IOC_PUT_SUBBUF, 0);
		return m;
	}
	for (off = 0; off < d.packet_size; off += VC_PAGE) {
		sig = vc_probe(m + d.mmap_offset + off);
		if (sig)
			break;
	}
	vc_check(!sig, "held packet: page at +%llu: %s, want readable",
		 (ull)off, vc_signame(sig));
	if (!sig)
		vc_verify_packet(s, m + d.mmap_offset, d.packet_size, d.pos);
	if (d.mmap_offset + sb < len) {
		sig = vc_probe(m + d.mmap_offset + sb);
		vc_check(sig == SIGBUS, "page after the held sub-buffer: %s, want SIGBUS",
			 vc_signame(sig));
	}
	if (d.mmap_offset >= VC_PAGE) {
		sig = vc_probe(m + d.mmap_offset - VC_PAGE);
		vc_check(sig == SIGBUS, "page before the held packet: %s, want SIGBUS",
			 vc_signame(sig));
	}
	r = ioctl(fd, LRB_IOC_GET_NEXT_SUBBUF, &h);
	vc_check_err(r, errno, EBUSY, 0, "GET_NEXT_SUBBUF while holding");
	memset(&h, 0, sizeof(h));
	h.pos = d.pos + sb;
	r = ioctl(fd, LRB_IOC_GET_SUBBUF, &h);
	vc_check_err(r, errno, EBUSY, 0, "GET_SUBBUF while holding");
	memset(&h, 0, sizeof(h));
	vc_check(!ioctl(fd, LRB_IOC_GET_HELD, &h) && !memcmp(&h, &d, sizeof(d)),
		 "GET_HELD: %s; pos %llu seq %llu, GET_NEXT said %llu %llu",
		 strerror(errno), (ull)h.pos, (ull)h.seq, (ull)d.pos,
		 (ull)d.seq);
	r = ioctl(fd, LRB_IOC_PUT_SUBBUF, 1);
	vc_check_err(r, errno, EINVAL, 0, "PUT_SUBBUF(1) while holding");
	vc_check(!ioctl(fd, LRB_IOC_GET_HELD, &h),
		 "still held after PUT_SUBBUF(1) failed: GET_HELD: %s",
		 strerror(errno));
	vc_check(!ioctl(fd, LRB_IOC_PUT_SUBBUF, 0), "PUT_SUBBUF: %s",
		 strerror(errno));
	for (i = 0; i < d.packet_size; i += VC_PAGE) {
		sig = vc_probe(m + d.mmap_offset + i);
		if (sig != SIGBUS)
			break;
	}
	vc_check(sig == SIGBUS,
		 "released packet: page at +%llu: %s, want SIGBUS",
		 (ull)i, vc_signame(sig));
	r = ioctl(fd, LRB_IOC_PUT_SUBBUF, 0);
	vc_check_err(r, errno, EINVAL, 0, "second PUT_SUBBUF");
	return m;
}

/* Non-consuming GET_SUBBUF: ENODATA behind, and consumed unchanged. */
static void vc_bad_peek(int fd, const struct lrb_buf_info *info,
			const u8 *m)
{
	struct lrb_positions p0, p1;
	struct lrb_subbuf_desc d = {};
	struct vc_stream s;
	struct vc_geom g;
	long r;

	if (!vc_check(!ioctl(fd, LRB_IOC_GET_POSITIONS, &p0) &&
		      p0.consumed >= info->subbuf_size,
		      "GET_POSITIONS: consumed %llu after a packet was put: %s",
		      (ull)p0.consumed, strerror(errno)))
		return;
	d.pos = p0.consumed - info->subbuf_size;
	r = ioctl(fd, LRB_IOC_GET_SUBBUF, &d);
	vc_check_err(r, errno, ENODATA, 0, "GET_SUBBUF behind consumed");
	if (!r)
		ioctl(fd, LRB_IOC_PUT_SUBBUF, 0);
	memset(&d, 0, sizeof(d));
	d.pos = p0.consumed;
	r = ioctl(fd, LRB_IOC_GET_SUBBUF, &d);
	if (!vc_check(!r, "GET_SUBBUF(consumed %llu): %s", (ull)p0.consumed,
		      strerror(errno)))
		return;
	vc_geom_from_info(&g, info, false);
	vc_stream_init(&s, info->cpu, &g);
	if (m && vc_check(d.pos == p0.consumed && d.mmap_offset < info->mmap_len &&
			  d.packet_size <= info->mmap_len - d.mmap_offset,
			  "GET_SUBBUF: pos %llu packet_size %llu mmap_offset %llu",
			  (ull)d.pos, (ull)d.packet_size, (ull)d.mmap_offset)) {
		vc_verify_packet(&s, m + d.mmap_offset, d.packet_size, d.pos);
		vc_check(!vc_stream_errors(&s),
			 "packet taken by GET_SUBBUF does not verify");
	}
	vc_check(!ioctl(fd, LRB_IOC_PUT_SUBBUF, 0), "PUT_SUBBUF after GET_SUBBUF: %s",
		 strerror(errno));
	vc_check(!ioctl(fd, LRB_IOC_GET_POSITIONS, &p1) &&
		 p1.consumed == p0.consumed,
		 "GET_SUBBUF + PUT_SUBBUF moved consumed from %llu to %llu",
		 (ull)p0.consumed, (ull)p1.consumed);
}

/* splice() length and cursor rules; the stream continues in @s. */
static void vc_bad_splice(int fd, struct vc_stream *s, struct vc_framer *f)
{
	u8 buf[100];
	ssize_t r;
	int p[2];
	u64 n;

	if (!vc_check(!pipe(p), "pipe: %s", strerror(errno)))
		return;
	r = splice(fd, NULL, p[1], NULL, 100, SPLICE_F_NONBLOCK);
	vc_check_err(r, errno, EINVAL, 0, "splice of 100 bytes");
	r = splice(fd, NULL, p[1], NULL, VC_PAGE + 1, SPLICE_F_NONBLOCK);
	vc_check_err(r, errno, EINVAL, 0, "splice of 4097 bytes");
	/*
	 * Read 100 bytes (the cursor is then in the middle of a page) into
	 * the framer's buffer, which has room for a whole packet.
	 */
	r = read(fd, vc_framer_space(f, &n), sizeof(buf));
	if (!vc_check(r == sizeof(buf), "read of 100 bytes: %zd: %s", r,
		      strerror(errno)))
		goto out;
	vc_framer_commit(f, s, r);
	r = splice(fd, NULL, p[1], NULL, VC_PAGE, SPLICE_F_NONBLOCK);
	vc_check_err(r, errno, EINVAL, 0, "splice after a read that stopped mid-page");
	r = ioctl(fd, LRB_IOC_GET_NEXT_SUBBUF, buf);
	vc_check_err(r, errno, EBUSY, 0, "GET_NEXT_SUBBUF with a packet partly read");
	/* the rest of that packet by read(), then one page by splice() */
	while (f->have)
		if (vc_framer_read(f, s, fd) <= 0)
			break;
	vc_check(!f->have, "reading the rest of a packet: %s", strerror(errno));
	r = splice(fd, NULL, p[1], NULL, VC_PAGE, SPLICE_F_NONBLOCK);
	if (vc_check(r == (ssize_t)VC_PAGE,
		     "splice of one page at a packet start: %zd: %s",
		     r, strerror(errno))) {
		/* the framer's buffer holds a whole packet */
		u8 *dst = vc_framer_space(f, &n);

		vc_check(read(p[0], dst, VC_PAGE) == (ssize_t)VC_PAGE,
			 "reading the spliced page from the pipe: %s",
			 strerror(errno));
		/* the header says how much more there is */
		vc_framer_commit(f, s, VC_HEADER_SIZE);
		vc_framer_commit(f, s, VC_PAGE - VC_HEADER_SIZE);
		/* a read continues where splice stopped */
		while (f->have)
			if (vc_framer_read(f, s, fd) <= 0)
				break;
		vc_check(!f->have, "read after splice, rest of the packet: %s",
			 strerror(errno));
	}
out:
	close(p[0]);
	close(p[1]);
}

/* Drained: nothing to read, take or splice; poll times out. */
static void vc_bad_empty(int fd, struct vc_stream *s, struct vc_framer *f)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct lrb_subbuf_desc d;
	ssize_t r;
	int p[2];

	while ((r = vc_framer_read(f, s, fd)) > 0)
		;
	vc_check_err(r, errno, EAGAIN, 0, "O_NONBLOCK read of a drained buffer");
	r = ioctl(fd, LRB_IOC_GET_NEXT_SUBBUF, &d);
	vc_check_err(r, errno, EAGAIN, 0, "GET_NEXT_SUBBUF on a drained buffer");
	if (!r)
		ioctl(fd, LRB_IOC_PUT_SUBBUF, 0);
	if (vc_check(!pipe(p), "pipe: %s", strerror(errno))) {
		r = splice(fd, NULL, p[1], NULL, VC_PAGE, SPLICE_F_NONBLOCK);
		vc_check_err(r, errno, EAGAIN, 0, "splice SPLICE_F_NONBLOCK of a drained buffer");
		close(p[0]);
		close(p[1]);
	}
	vc_check(poll(&pfd, 1, 300) == 0,
		 "poll of a drained buffer: revents 0x%x, want a timeout",
		 pfd.revents);
}

static bool vc_counters_equal(const struct lrb_buf_counters *a,
			      const struct lrb_buf_counters *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* The stats file: one line per CPU and a total, equal to GET_COUNTERS. */
static void vc_bad_stats(struct vc_chan *ch)
{
	struct lrb_buf_counters c[VC_MAX_CPUS], sum = {}, line, total;
	char path[256], *text, *l, *save;
	unsigned int cpu, lines = 0, i;
	bool have_total = false, ok = true;

	for (cpu = 0; cpu < ch->ncpu; cpu++)
		if (ioctl(ch->fd[cpu], LRB_IOC_GET_COUNTERS, &c[cpu]))
			vc_fail("cpu%u GET_COUNTERS: %s", cpu, strerror(errno));
	text = vc_read_file(vc_chan_path(path, sizeof(path), ch->name, "stats"),
			    NULL);
	if (!vc_check(text && *text, "read %s: %s", path,
		      text ? "empty" : strerror(errno))) {
		free(text);
		return;
	}
	for (l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "total ", 6)) {
			ok &= vc_check(!vc_parse_stats_line(l, &total),
				       "%s: total line lacks keys: %s", path, l);
			have_total = true;
			continue;
		}
		if (sscanf(l, "cpu%u ", &cpu) != 1 || cpu >= ch->ncpu) {
			vc_fail("%s: unexpected line: %s", path, l);
			continue;
		}
		lines++;
		if (!vc_check(!vc_parse_stats_line(l, &line),
			      "%s: line lacks keys: %s", path, l))
			continue;
		vc_check(vc_counters_equal(&line, &c[cpu]),
			 "%s: cpu%u line differs from GET_COUNTERS (records_written %llu vs %llu, consumed %llu vs %llu)",
			 path, cpu, (ull)line.records_written,
			 (ull)c[cpu].records_written, (ull)line.consumed,
			 (ull)c[cpu].consumed);
	}
	for (cpu = 0; cpu < ch->ncpu; cpu++)
		for (i = 0; i < sizeof(sum) / sizeof(u64); i++)
			((u64 *)&sum)[i] += ((u64 *)&c[cpu])[i];
	vc_check(lines == ch->ncpu && have_total,
		 "%s: %u cpu lines%s, want %u and a total line", path, lines,
		 have_total ? "" : ", no total", ch->ncpu);
	if (have_total && ok)
		vc_check(vc_counters_equal(&total, &sum),
			 "%s: total line is not the sum of the cpu lines (records_written %llu vs %llu)",
			 path, (ull)total.records_written,
			 (ull)sum.records_written);
	free(text);
}

/* The metadata: CTF 1.8 TSDL, byte-aligned integers, the test event. */
static void vc_bad_metadata(const char *chan)
{
	static const char *const types[] = {
		"uint8_t", "uint16_t", "uint32_t", "uint64_t",
	};
	char path[256], *text, want[64], *p, *q;
	struct vc_layout l;
	unsigned int i;

	text = vc_read_file(vc_chan_path(path, sizeof(path), chan, "metadata"),
			    NULL);
	if (!vc_check(text, "read %s: %s", path, strerror(errno)))
		return;
	vc_check(!strncmp(text, "/* CTF 1.8", 10),
		 "%s does not start with the CTF 1.8 signature \"/* CTF 1.8\"",
		 path);
	vc_check(strstr(text, "trace {") && strstr(text, "stream {") &&
		 strstr(text, "packet.header") &&
		 strstr(text, "packet.context") && strstr(text, "clock {"),
		 "%s lacks a trace, stream, clock block or packet header/context",
		 path);
	vc_check(strstr(text, "name = \"lrb_vm_record\";") &&
		 strstr(text, "uint8_t data[data_len];"),
		 "%s lacks the client's event lrb_vm_record", path);
	vc_check(!vc_layout_from_metadata(text, &l),
		 "%s: record header layout not recognised", path);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		snprintf(want, sizeof(want), "} := %s;", types[i]);
		p = strstr(text, want);
		q = p;
		while (q && q > text && strncmp(q, "typealias", 9))
			q--;
		vc_check(p && q && memmem(q, p - q, "align = 8;", 10),
			 "%s: %s is not declared byte aligned (align = 8)",
			 path, types[i]);
	}
	free(text);
}

int vc_cmd_badinput(const struct vc_opts *o)
{
	struct lrb_buf_info info;
	struct lrb_positions pos;
	struct vc_framer f;
	struct vc_stream s;
	struct vc_chan ch;
	struct vc_geom g;
	char path[256], file[32];
	const u8 *m;
	u8 *ro, *none;
	int fd;

	vc_load_layout(o->chan);
	if (vc_chan_open(&ch, o->chan, O_RDONLY | O_NONBLOCK))
		return vc_report();
	if (!vc_check(o->cpu < ch.ncpu, "--cpu %u: channel has %u CPUs",
		      o->cpu, ch.ncpu))
		goto out;
	fd = ch.fd[o->cpu];
	info = ch.info[o->cpu];
	snprintf(file, sizeof(file), "cpu%u", o->cpu);
	vc_chan_path(path, sizeof(path), o->chan, file);
	ro = mmap(NULL, VC_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none = mmap(NULL, VC_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED || none == MAP_FAILED) {
		vc_fail("anonymous mmap: %s", strerror(errno));
		goto out;
	}
	if (!vc_check(!ioctl(fd, LRB_IOC_GET_POSITIONS, &pos) &&
		      (pos.produced & ~(info.subbuf_size - 1)) >=
		      pos.consumed + 3 * info.subbuf_size,
		      "%s: consumed %llu produced %llu: want 3 complete packets (let the client write more before badinput)",
		      path, (ull)pos.consumed, (ull)pos.produced))
		goto out;
	vc_geom_from_info(&g, &info, !pos.consumed &&
			  info.mode == LRB_ABI_MODE_DISCARD);
	vc_stream_init(&s, o->cpu, &g);
	if (vc_framer_init(&f, info.subbuf_size))
		goto out;

	vc_bad_open(path);
	vc_bad_ioctl(fd, &info, ro, none);
	vc_bad_get_subbuf(fd, &info, &pos);
	vc_bad_mmap(fd, &info);
	m = vc_bad_held(fd, &info, &s);
	vc_bad_peek(fd, &info, m);
	vc_bad_splice(fd, &s, &f);
	vc_bad_stats(&ch);
	vc_bad_empty(fd, &s, &f);
	vc_stream_report(&s, false);
	vc_bad_metadata(o->chan);
	if (m)
		munmap((void *)m, info.mmap_len);
	vc_framer_free(&f);
	vc_chan_close(&ch);
	/* released on close: the file can be opened again */
	fd = open(path, O_RDONLY);
	vc_check(fd >= 0, "open %s again after close: %s", path,
		 strerror(errno));
	if (fd >= 0)
		close(fd);
	return vc_report();
out:
	vc_chan_close(&ch);
	return vc_report();
}
