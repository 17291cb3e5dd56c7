// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-fuzz: open(), close(), read(), splice(), poll(), fcntl(), lseek()
 * and pread() on the channel files, each result checked against
 * Documentation/abi.rst.
 */
#include "fuzz.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* The file being replaced or opened anew may be gone for a moment. */
#define FZ_GONE ENOENT, ENXIO, ENODEV

static void fz_open_cpu(struct fz_worker *w, struct fz_file *f, u32 cpu)
{
	/* mostly what works, to keep the table full */
	static const int refused[] = { O_WRONLY, O_RDWR, O_RDONLY | O_DIRECT };
	int fl = O_RDONLY, fd, r;
	bool exists = cpu < w->nr_cpus;

	if (fz_one_in(w, 16))
		fl = refused[fz_below(w, ARRAY_SIZE(refused))];
	else if (fz_one_in(w, 3))
		fl |= O_NONBLOCK;
	snprintf(f->path, sizeof(f->path), "/dev/lrb/%s/cpu%u", w->chan, cpu);
	fz_begin(w, FZ_OPEN, "open(%s, 0%o)", f->path, fl);
	fz_refuse(w, !exists || fl != (fl & (O_RDONLY | O_NONBLOCK)));
	fd = open(f->path, fl);
	if (fd < 0) {
		if (!exists)
			fz_errno_ok(w, FZ_OPEN, errno, FZ_ERRS(ENOENT));
		else if ((fl & O_ACCMODE) != O_RDONLY)
			fz_errno_ok(w, FZ_OPEN, errno, FZ_ERRS(EACCES, FZ_GONE));
		else if (fl & O_DIRECT)	/* lrb's open() runs first: EBUSY */
			fz_errno_ok(w, FZ_OPEN, errno,
				    FZ_ERRS(EINVAL, EBUSY, FZ_GONE));
		else
			fz_errno_ok(w, FZ_OPEN, errno, FZ_ERRS(EBUSY, FZ_GONE));
		/* the channel is being recreated: give the controller time */
		if (errno == ENOENT && exists)
			usleep(20000);
		return;
	}
	if (!exists || fl != (fl & (O_RDONLY | O_NONBLOCK))) {
		fz_finding(w, "succeeded: the ABI refuses it");
		close(fd);
		return;
	}
	r = fz_new_reader(w, cpu, fd);
	if (r < 0) {
		close(fd);
		return;
	}
	f->fd = fd;
	f->kind = FZ_CPU;
	f->reader = r;
	f->nonblock = fl & O_NONBLOCK;
}

static void fz_open_chan_file(struct fz_worker *w, struct fz_file *f,
			      enum fz_kind kind)
{
	int fl = fz_one_in(w, 4) ? O_WRONLY : O_RDONLY, fd;

	snprintf(f->path, sizeof(f->path), "/dev/lrb/%s/%s", w->chan,
		 kind == FZ_META ? "metadata" : "stats");
	fz_begin(w, FZ_OPEN, "open(%s, 0%o)", f->path, fl);
	fz_refuse(w, fl != O_RDONLY);
	fd = open(f->path, fl);
	if (fd < 0) {
		fz_errno_ok(w, FZ_OPEN, errno,
			    fl == O_RDONLY ? FZ_ERRS(FZ_GONE) :
					     FZ_ERRS(EACCES, FZ_GONE));
		return;
	}
	if (fl != O_RDONLY) {
		fz_finding(w, "succeeded: the ABI refuses it");
		close(fd);
		return;
	}
	f->fd = fd;
	f->kind = kind;
	f->reader = -1;
	f->nonblock = false;
}

/*
 * A CPU for an open: one of this worker's share that it does not hold
 * yet; else one of its own that it does hold, whose descriptors and
 * mappings it puts away first (so open and release race the writers
 * over and over); once in 8 times any CPU (likely another worker's:
 * EBUSY), and once in 32 one past the last (ENOENT).
 */
static u32 fz_pick_cpu(struct fz_worker *w)
{
	u32 cpu, free = 0, own = 0, k;
	unsigned int i;

	if (fz_one_in(w, 32))
		return w->nr_cpus + fz_below(w, 2);
	if (fz_one_in(w, 8))
		return fz_below(w, w->nr_cpus);
	for (cpu = 0; cpu < w->nr_cpus; cpu++) {
		own += fz_own_cpu(w, cpu);
		free += fz_own_cpu(w, cpu) && !fz_cpu_in_use(w, cpu);
	}
	k = fz_below(w, free ?: own);
	for (cpu = 0; cpu < w->nr_cpus; cpu++)
		if (fz_own_cpu(w, cpu) &&
		    (!free || !fz_cpu_in_use(w, cpu)) && !k--)
			break;
	if (free)
		return cpu;
	for (i = 0; i < FZ_MAX_MAPS; i++)
		if (w->maps[i].addr && w->readers[w->maps[i].reader].cpu == cpu)
			fz_unmap(w, &w->maps[i]);
	for (i = 0; i < FZ_MAX_FDS; i++)
		if (w->files[i].fd >= 0 && w->files[i].kind == FZ_CPU &&
		    w->readers[w->files[i].reader].cpu == cpu)
			fz_close_file(w, &w->files[i]);
	return cpu;
}

void fz_op_open(struct fz_worker *w)
{
	struct fz_file *f = fz_free_file(w);
	u64 k;

	if (!f)
		return fz_op_close(w);
	/* one metadata or stats file at most: the cpu files matter more */
	k = fz_chan_files(w) < 1 ? fz_below(w, 10) : 0;
	if (k == 8)
		fz_open_chan_file(w, f, FZ_META);
	else if (k == 9)
		fz_open_chan_file(w, f, FZ_STATS);
	else
		fz_open_cpu(w, f, fz_pick_cpu(w));
}

/* Closes a slot at random: the fuller the table, the likelier a close. */
void fz_op_close(struct fz_worker *w)
{
	struct fz_file *f = &w->files[fz_below(w, FZ_MAX_FDS)];

	if (f->fd >= 0)
		fz_close_file(w, f);
}

/* A blocking call on @f gets SIGALRM (EINTR) after about a second. */
static void fz_arm(struct fz_file *f, bool on)
{
	struct itimerval it = { .it_value = { .tv_sec = on, .tv_usec = 0 } };

	if (!f->nonblock)
		setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * Bytes from read() or splice() are whole packets back to back: check
 * each packet header as the stream passes it.
 */
static void fz_stream(struct fz_worker *w, struct fz_reader *r,
		      const char *data, u64 n)
{
	struct lrb_packet_header h;
	u64 off = 0, size;

	while (off < n) {
		/* the header of the next packet, if it is whole in @data */
		u64 at = r->streamed + off;

		if (at != r->next_pkt) {
			off += r->next_pkt - at < n - off ? r->next_pkt - at : n - off;
			continue;
		}
		if (n - off < sizeof(h)) {
			/* split across calls: skip this packet's header */
			r->next_pkt = ~0ULL;
			break;
		}
		memcpy(&h, data + off, sizeof(h));
		size = h.packet_size / 8;
		if (h.magic != LRB_PACKET_MAGIC || h.cpu_id != r->cpu ||
		    size % FZ_PAGE || !size || size > r->info.subbuf_size ||
		    h.content_size > h.packet_size) {
			fz_finding(w, "packet at stream byte %llu: magic 0x%x cpu_id %u packet_size %llu content_size %llu bits (subbuf_size %llu)",
				   (ull)at, h.magic, h.cpu_id,
				   (ull)h.packet_size, (ull)h.content_size,
				   (ull)r->info.subbuf_size);
			r->next_pkt = ~0ULL;
			break;
		}
		r->next_pkt = at + size;
	}
	r->streamed += n;
}

static u64 fz_length(struct fz_worker *w, const struct fz_file *f)
{
	u64 sb = f->kind == FZ_CPU ? w->readers[f->reader].info.subbuf_size :
				     FZ_PAGE;
	const u64 lens[] = { 0, 1, 63, 64, 100, FZ_PAGE - 1, FZ_PAGE,
			     FZ_PAGE + 1, 2 * FZ_PAGE, sb, sb + 4 * FZ_PAGE,
			     16 * FZ_PAGE, 2 * sb + 13 };

	if (fz_one_in(w, 4))
		return fz_below(w, FZ_BUF_SIZE);
	return lens[fz_below(w, ARRAY_SIZE(lens))];
}

/* read() of @n bytes from @f, into a bad pointer at times unless @good */
static void fz_read_on(struct fz_worker *w, struct fz_file *f, u64 n,
		       bool good_ptr)
{
	struct fz_reader *r;
	bool bad = false, ro = false;
	char *good, *p;
	u64 room;
	ssize_t got;

	if (n > FZ_BUF_SIZE)
		n = FZ_BUF_SIZE;
	good = w->buf + fz_below(w, 8);		/* odd addresses too */
	p = good_ptr ? good : fz_pointer(w, good, &bad, &ro);
	bad |= ro;
	/* the bytes before the PROT_NONE page may be filled */
	room = p == w->none - FZ_STRADDLE ? FZ_STRADDLE : bad ? 0 : n;
	fz_begin(w, FZ_READ, "read(%s, %p, %llu)%s", f->path, p, (ull)n,
		 f->nonblock ? " O_NONBLOCK" : "");
	/* a bad address fails even for 0 bytes: the VFS checks it first */
	fz_refuse(w, bad ||
		  (f->kind == FZ_CPU && n && w->readers[f->reader].held));
	fz_arm(f, true);
	got = read(f->fd, p, n);
	fz_arm(f, false);
	if (f->kind != FZ_CPU) {
		if (got < 0)
			fz_errno_ok(w, FZ_READ, errno, FZ_ERRS(EFAULT));
		else if ((u64)got > room)
			fz_finding(w, "read %zd bytes into %llu bytes", got, (ull)room);
		return;
	}
	r = &w->readers[f->reader];
	if (got < 0) {
		/* the VFS refuses what is not a user address before lrb */
		if (r->held && errno != EBUSY && n && !bad)
			fz_finding(w, "%s with a packet held by the ioctls: want EBUSY",
				   strerrorname_np(errno));
		fz_errno_ok(w, FZ_READ, errno,
			    bad ? FZ_ERRS(EAGAIN, EBUSY, EINTR, EFAULT) :
				  FZ_ERRS(EAGAIN, EBUSY, EINTR));
		return;
	}
	if ((u64)got > room || (r->held && got))
		fz_finding(w, "returned %zd into %llu bytes%s", got, (ull)room,
			   r->held ? ", with a packet held by the ioctls" : "");
	else
		fz_stream(w, r, p, got);
	/* end of file: the channel is destroyed and drained */
	if (!got && n && !r->held)
		r->ended = true;
}

/*
 * A packet held through the ioctls makes read() and splice() fail with
 * EBUSY: put it back first, 3 times in 4.
 */
static void fz_unhold(struct fz_worker *w, struct fz_file *f)
{
	if (f->kind == FZ_CPU && w->readers[f->reader].held && !fz_one_in(w, 4))
		fz_put_back(w, f);
}

void fz_op_read(struct fz_worker *w)
{
	struct fz_file *f = fz_any_file(w);

	if (!f)
		return;
	fz_unhold(w, f);
	fz_read_on(w, f, fz_length(w, f), false);
}

void fz_op_splice(struct fz_worker *w)
{
	struct fz_file *f = fz_any_file(w);
	bool nb = fz_one_in(w, 2), with_off = fz_one_in(w, 16);
	u64 len, eff, pipe_room = 16 * FZ_PAGE;
	struct fz_reader *r;
	loff_t off = 0;
	ssize_t got, m, k;

	if (!f)
		return;
	fz_unhold(w, f);
	/* splice() starts on a page boundary: read up to one, 3 times in 4 */
	if (f->kind == FZ_CPU && w->readers[f->reader].streamed % FZ_PAGE &&
	    !fz_one_in(w, 4))
		fz_read_on(w, f, FZ_PAGE - w->readers[f->reader].streamed % FZ_PAGE,
			   true);
	/* whole pages mostly: anything else is refused */
	len = fz_one_in(w, 4) ? fz_length(w, f) :
				(1 + fz_below(w, 16)) * FZ_PAGE;
	fz_begin(w, FZ_SPLICE, "splice(%s, %s, pipe, %llu, %s)%s", f->path,
		 with_off ? "&0" : "NULL", (ull)len,
		 nb ? "SPLICE_F_NONBLOCK" : "0",
		 f->nonblock ? " O_NONBLOCK" : "");
	r = f->kind == FZ_CPU ? &w->readers[f->reader] : NULL;
	eff = len < pipe_room ? len : pipe_room;
	fz_refuse(w, !r || (len && (with_off || eff % FZ_PAGE || r->held ||
				    r->streamed % FZ_PAGE)));
	fz_arm(f, !nb);
	got = splice(f->fd, with_off ? &off : NULL, w->pipe[1], NULL, len,
		     nb ? SPLICE_F_NONBLOCK : 0);
	fz_arm(f, false);
	/* the pipe is drained after each call: its room is whole again */
	for (m = got; m > 0; m -= k) {
		k = read(w->pipe[0], w->buf, m);
		if (k <= 0) {
			fz_finding(w, "the pipe holds %zd bytes of the %zd spliced",
				   got - m, got);
			break;
		}
	}
	if (!r) {
		if (got < 0)
			fz_errno_ok(w, FZ_SPLICE, errno, FZ_ERRS(EINVAL, ESPIPE));
		return;
	}
	/* the kernel lowers the length to the pipe's room first (eff) */
	if (got < 0) {
		if (with_off)	/* do_splice(): EINVAL for an offset on a stream */
			fz_errno_ok(w, FZ_SPLICE, errno, FZ_ERRS(ESPIPE, EINVAL));
		else if (eff % FZ_PAGE)
			fz_errno_ok(w, FZ_SPLICE, errno, FZ_ERRS(EINVAL));
		else if (r->held)
			fz_errno_ok(w, FZ_SPLICE, errno, FZ_ERRS(EBUSY));
		else if (r->streamed % FZ_PAGE)
			fz_errno_ok(w, FZ_SPLICE, errno,
				    FZ_ERRS(EINVAL, EAGAIN, EINTR, ENOMEM));
		else
			fz_errno_ok(w, FZ_SPLICE, errno,
				    FZ_ERRS(EAGAIN, EBUSY, EINTR, ENOMEM));
		return;
	}
	/* a length of 0 returns 0 before anything is checked */
	if ((with_off && len) || (eff % FZ_PAGE && len) || (r->held && got) ||
	    (r->streamed % FZ_PAGE && got) || got % FZ_PAGE || (u64)got > eff)
		fz_finding(w, "returned %zd (cursor %llu bytes into the stream%s)",
			   got, (ull)r->streamed,
			   r->held ? ", a packet held by the ioctls" : "");
	else
		r->streamed += got;	/* the data went to the pipe, unchecked */
	if (!got && len && !r->held)
		r->ended = true;
}

void fz_op_poll(struct fz_worker *w)
{
	struct fz_file *f = fz_any_file(w);
	struct pollfd p;
	int t = fz_below(w, 4) * 10, n;

	if (!f)
		return;
	p.fd = f->fd;
	p.events = POLLIN | POLLRDNORM | (fz_one_in(w, 4) ? POLLOUT : 0);
	fz_begin(w, FZ_POLL, "poll(%s, 0x%x, %d ms)", f->path, p.events, t);
	n = poll(&p, 1, t);
	if (n < 0) {
		fz_errno_ok(w, FZ_POLL, errno, FZ_ERRS(EINTR));
		return;
	}
	if (f->kind != FZ_CPU || !n)
		return;
	/* POLLIN | POLLRDNORM, or POLLHUP alone */
	if ((p.revents & ~(POLLIN | POLLRDNORM | POLLHUP)) ||
	    ((p.revents & POLLHUP) && p.revents != POLLHUP) ||
	    ((p.revents & POLLIN) && !(p.revents & POLLRDNORM)))
		fz_finding(w, "revents 0x%x", p.revents);
	else if (p.revents == POLLHUP)
		w->readers[f->reader].ended = true;
}

void fz_op_fcntl(struct fz_worker *w)
{
	struct fz_file *f = fz_any_file(w);
	int fl;

	if (!f)
		return;
	fz_begin(w, FZ_FCNTL, "fcntl(%s, F_SETFL, %sO_NONBLOCK)", f->path,
		 f->nonblock ? "~" : "");
	fl = fcntl(f->fd, F_GETFL);
	if (fl < 0 || fcntl(f->fd, F_SETFL, fl ^ O_NONBLOCK)) {
		fz_errno_ok(w, FZ_FCNTL, errno, FZ_ERRS(-1));
		return;
	}
	f->nonblock = !f->nonblock;
}

void fz_op_seek(struct fz_worker *w)
{
	struct fz_file *f = fz_any_file(w);
	off_t to = fz_below(w, 3) * 100;
	bool pr = fz_one_in(w, 2);
	ssize_t ret;

	if (!f)
		return;
	fz_begin(w, FZ_SEEK, "%s(%s, %lld)", pr ? "pread" : "lseek", f->path,
		 (long long)to);
	fz_refuse(w, f->kind == FZ_CPU);
	ret = pr ? pread(f->fd, w->buf, 64, to) : lseek(f->fd, to, SEEK_SET);
	if (f->kind == FZ_CPU) {
		if (ret >= 0)
			fz_finding(w, "succeeded on a stream: want ESPIPE");
		else
			fz_errno_ok(w, FZ_SEEK, errno, FZ_ERRS(ESPIPE));
	} else if (ret < 0) {
		fz_errno_ok(w, FZ_SEEK, errno, FZ_ERRS(-1));
	}
}
