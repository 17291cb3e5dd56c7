// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-fuzz: the ioctls, valid and invalid: every command with good and bad
 * pointers and arguments, numbers of the 0xB9 magic that lrb does not
 * define, and valid numbers with the wrong size or direction. What each
 * must return is in Documentation/abi.rst, "ioctls" and its "Errors".
 */
#include "fuzz.h"

#include <string.h>
#include <sys/ioctl.h>

static const unsigned int fz_cmds[] = {
	LRB_IOC_GET_INFO, LRB_IOC_GET_NEXT_SUBBUF, LRB_IOC_GET_SUBBUF,
	LRB_IOC_PUT_SUBBUF, LRB_IOC_GET_HELD, LRB_IOC_GET_POSITIONS,
	LRB_IOC_FLUSH, LRB_IOC_GET_COUNTERS, LRB_IOC_SET_WATERMARK,
};

/*
 * A valid command: 3 times in 4 one that the reader's state allows (take
 * a packet when none is held, describe or put back the one held), else
 * any.
 */
static unsigned int fz_good_cmd(struct fz_worker *w, const struct fz_reader *r)
{
	static const unsigned int idle[] = {
		LRB_IOC_GET_NEXT_SUBBUF, LRB_IOC_GET_NEXT_SUBBUF,
		LRB_IOC_GET_SUBBUF, LRB_IOC_GET_POSITIONS, LRB_IOC_GET_INFO,
		LRB_IOC_GET_COUNTERS, LRB_IOC_SET_WATERMARK, LRB_IOC_FLUSH,
	};
	static const unsigned int held[] = {
		LRB_IOC_PUT_SUBBUF, LRB_IOC_PUT_SUBBUF, LRB_IOC_GET_HELD,
		LRB_IOC_GET_POSITIONS, LRB_IOC_GET_INFO, LRB_IOC_GET_COUNTERS,
		LRB_IOC_SET_WATERMARK, LRB_IOC_FLUSH,
	};

	if (!r || fz_one_in(w, 4))
		return fz_cmds[fz_below(w, ARRAY_SIZE(fz_cmds))];
	if (r->held)
		return held[fz_below(w, ARRAY_SIZE(held))];
	return idle[fz_below(w, ARRAY_SIZE(idle))];
}

/* A command number lrb does not define (ENOTTY). */
static unsigned int fz_bad_cmd(struct fz_worker *w)
{
	unsigned int cmd, i;

	for (;;) {
		switch (fz_below(w, 3)) {
		case 0:		/* another number of lrb's magic */
			cmd = _IOC(fz_below(w, 4), LRB_IOC_MAGIC,
				   fz_below(w, 256), fz_below(w, 256));
			break;
		case 1:		/* a valid number, another size or direction */
			cmd = fz_cmds[fz_below(w, ARRAY_SIZE(fz_cmds))];
			cmd ^= fz_one_in(w, 2) ? _IOC(0, 0, 0, 1 + fz_below(w, 255)) :
						 _IOC(1 + fz_below(w, 3), 0, 0, 0);
			break;
		default:	/* anything */
			cmd = fz_rand(w);
		}
		for (i = 0; i < ARRAY_SIZE(fz_cmds); i++)
			if (cmd == fz_cmds[i])
				break;
		if (i == ARRAY_SIZE(fz_cmds))
			return cmd;
	}
}

/* The descriptor of GET_SUBBUF: mostly a packet between the positions. */
static void fz_subbuf_arg(struct fz_worker *w, int fd, struct fz_reader *r,
			  struct lrb_subbuf_desc *d)
{
	u64 sb = r->info.subbuf_size;
	struct lrb_positions p = {};

	memset(d, 0, sizeof(*d));
	ioctl(fd, LRB_IOC_GET_POSITIONS, &p);
	d->pos = (p.consumed + fz_below(w, (p.produced - p.consumed) / sb + 2) * sb);
	switch (fz_below(w, 8)) {
	case 0:
		d->pos += 1 + fz_below(w, sb - 1);
		break;
	case 1:
		d->seq = 1 + fz_below(w, 100);
		break;
	case 2:
		d->mmap_offset = FZ_PAGE;
		break;
	case 3:
		d->pos = p.consumed >= sb ? p.consumed - sb : 0;
		break;
	}
}

/* A description of a held packet that does not fit the reader's buffer. */
static bool fz_bad_desc(const struct fz_reader *r,
			const struct lrb_subbuf_desc *d)
{
	u64 sb = r->info.subbuf_size;

	return d->pos != d->seq * sb || d->mmap_offset % sb ||
	       d->mmap_offset + sb > r->info.mmap_len ||
	       d->packet_size % FZ_PAGE || !d->packet_size ||
	       d->packet_size > sb || d->content_size > d->packet_size ||
	       d->content_size < sizeof(struct lrb_packet_header);
}

static void fz_took(struct fz_worker *w, struct fz_reader *r,
		    const struct lrb_subbuf_desc *d)
{
	if (fz_bad_desc(r, d))
		fz_finding(w, "packet description: pos %llu seq %llu content_size %llu packet_size %llu mmap_offset %llu",
			   (ull)d->pos, (ull)d->seq, (ull)d->content_size,
			   (ull)d->packet_size, (ull)d->mmap_offset);
	r->held = true;
	r->desc = *d;
}

/* Check a result of valid command @cmd on reader @r. */
static void fz_check_ok(struct fz_worker *w, struct fz_reader *r,
			unsigned int cmd, const void *res, u64 req_pos, u32 wm)
{
	const struct lrb_buf_info *info = res;
	const struct lrb_subbuf_desc *d = res;
	const struct lrb_positions *p = res;

	switch (cmd) {
	case LRB_IOC_GET_INFO:
		if (info->cpu != r->cpu || info->mmap_len != r->info.mmap_len ||
		    info->watermark != r->watermark)
			fz_finding(w, "cpu %u mmap_len %llu watermark %u; at open: cpu %u mmap_len %llu, watermark set %u",
				   info->cpu, (ull)info->mmap_len, info->watermark,
				   r->cpu, (ull)r->info.mmap_len, r->watermark);
		break;
	case LRB_IOC_GET_NEXT_SUBBUF:
		fz_took(w, r, d);
		break;
	case LRB_IOC_GET_SUBBUF:
		if (d->pos != req_pos)
			fz_finding(w, "took the packet at %llu", (ull)d->pos);
		fz_took(w, r, d);
		break;
	case LRB_IOC_GET_HELD:
		if (memcmp(d, &r->desc, sizeof(*d)))
			fz_finding(w, "describes pos %llu seq %llu, the get said %llu %llu",
				   (ull)d->pos, (ull)d->seq, (ull)r->desc.pos,
				   (ull)r->desc.seq);
		break;
	case LRB_IOC_GET_POSITIONS:
		if (p->consumed % r->info.subbuf_size)
			fz_finding(w, "consumed %llu is not a multiple of subbuf_size",
				   (ull)p->consumed);
		break;
	case LRB_IOC_PUT_SUBBUF:
		r->held = false;
		break;
	case LRB_IOC_SET_WATERMARK:
		r->watermark = wm;
		break;
	}
}

/* No error allowed: the call must succeed. */
#define FZ_NONE FZ_ERRS(-1)

/*
 * Which errors valid command @cmd may return, and whether it must fail:
 * from the reader's state as this worker knows it, the pointer (@bad: not
 * usable; @ro: readable zeros, not writable) and the argument.
 */
static const int *fz_allowed(const struct fz_reader *r, unsigned int cmd,
			     bool bad, bool ro, unsigned long arg, u32 wm,
			     const struct lrb_subbuf_desc *req, bool *must_fail)
{
	u64 sb = r->info.subbuf_size;

	*must_fail = bad || ro;
	switch (cmd) {
	case LRB_IOC_PUT_SUBBUF:
		*must_fail = arg || !r->held;
		return *must_fail ? FZ_ERRS(EINVAL) : FZ_NONE;
	case LRB_IOC_FLUSH:
		*must_fail = arg;
		return arg ? FZ_ERRS(EINVAL) : FZ_ERRS(ENODEV);
	case LRB_IOC_SET_WATERMARK:
		if (bad)
			return FZ_ERRS(EFAULT);
		*must_fail = ro || !wm || wm > r->info.num_subbuf;
		return *must_fail ? FZ_ERRS(EINVAL) : FZ_NONE;
	case LRB_IOC_GET_NEXT_SUBBUF:
		if (bad || ro)
			return FZ_ERRS(EFAULT);
		*must_fail = r->held;
		return r->held ? FZ_ERRS(EBUSY) :
				 FZ_ERRS(EBUSY, EAGAIN, ENODEV);
	case LRB_IOC_GET_SUBBUF:
		if (bad)
			return FZ_ERRS(EFAULT);
		if (ro)		/* the request, in a read-only page */
			return FZ_ERRS(EFAULT, EINVAL, EBUSY, EAGAIN, ENODATA);
		if (req->seq || req->content_size || req->packet_size ||
		    req->mmap_offset || req->pos % sb) {
			*must_fail = true;
			return FZ_ERRS(EINVAL);
		}
		*must_fail = r->held;
		return r->held ? FZ_ERRS(EBUSY) :
				 FZ_ERRS(EBUSY, EAGAIN, ENODATA);
	case LRB_IOC_GET_HELD:
		/* the state is checked before the result is written */
		if (bad || ro)
			return r->held ? FZ_ERRS(EFAULT) : FZ_ERRS(EINVAL);
		*must_fail = !r->held;
		return *must_fail ? FZ_ERRS(EINVAL) : FZ_NONE;
	}
	/* GET_INFO, GET_POSITIONS, GET_COUNTERS */
	return *must_fail ? FZ_ERRS(EFAULT) : FZ_NONE;
}

/*
 * ioctl @cmd (@valid: one of lrb's) on @f, with an argument chosen at
 * random, or with a good one if @good, and its result checked.
 */
static void fz_ioctl_on(struct fz_worker *w, struct fz_file *f,
			unsigned int cmd, bool valid, bool good)
{
	union {
		struct lrb_buf_info info;
		struct lrb_subbuf_desc desc;
		struct lrb_positions pos;
		struct lrb_buf_counters counters;
		u32 wm;
	} u;
	struct lrb_subbuf_desc req = {};
	bool bad = false, ro = false, must_fail = false, filled = false;
	struct fz_reader *r = NULL;
	const int *allowed = NULL;
	unsigned long arg = 0;
	u32 wm = 0;
	long ret;

	if (f->kind == FZ_CPU)
		r = &w->readers[f->reader];
	memset(&u, 0, sizeof(u));
	if (good) {
		arg = _IOC_DIR(cmd) == _IOC_NONE ? 0 : (unsigned long)&u;
	} else if (_IOC_DIR(cmd) == _IOC_NONE && valid) {
		arg = fz_one_in(w, 6) ? 1 + fz_below(w, 1000) : 0;
	} else {
		if (cmd == LRB_IOC_SET_WATERMARK && r) {
			/* 0 .. num_subbuf + 1, or anything */
			wm = fz_one_in(w, 8) ? (u32)fz_rand(w) :
					       fz_below(w, r->info.num_subbuf + 2);
			u.wm = wm;
		} else if (cmd == LRB_IOC_GET_SUBBUF && r) {
			fz_subbuf_arg(w, f->fd, r, &req);
			u.desc = req;
		}
		arg = (unsigned long)fz_pointer(w, &u, &bad, &ro);
		/*
		 * GET_SUBBUF from a read-only copy of the request: the packet
		 * may be taken, then the result cannot be written back
		 */
		filled = ro && cmd == LRB_IOC_GET_SUBBUF && r;
		if (filled)
			fz_ro_fill(w, &req, sizeof(req));
	}
	fz_begin(w, FZ_IOCTL, "ioctl(%s, 0x%08x, 0x%lx) wm %u pos %llu seq %llu mmap_offset %llu%s",
		 f->path, cmd, arg, wm, (ull)req.pos, (ull)req.seq,
		 (ull)req.mmap_offset, r && r->held ? ", holding" : "");
	if (r && valid) {
		allowed = fz_allowed(r, cmd, bad, ro, arg, wm, &req, &must_fail);
		fz_refuse(w, must_fail);
	} else {
		fz_refuse(w, true);
	}
	ret = ioctl(f->fd, cmd, arg);
	if (filled)
		fz_ro_fill(w, NULL, 0);
	if (!r || !valid) {
		if (!ret)
			fz_finding(w, "succeeded: want ENOTTY");
		else
			fz_errno_ok(w, FZ_IOCTL, errno, FZ_ERRS(ENOTTY));
		return;
	}
	if (ret) {
		fz_errno_ok(w, FZ_IOCTL, errno, allowed);
		/* GET_NEXT_SUBBUF: the channel is destroyed and drained */
		if (errno == ENODEV && cmd == LRB_IOC_GET_NEXT_SUBBUF)
			r->ended = true;
		return;
	}
	if (must_fail) {
		fz_finding(w, "succeeded: the ABI says it fails");
		/* keep the table true to the kernel's state */
		if (cmd == LRB_IOC_GET_NEXT_SUBBUF || cmd == LRB_IOC_GET_SUBBUF)
			ioctl(f->fd, LRB_IOC_GET_HELD, &r->desc);
		if (cmd == LRB_IOC_PUT_SUBBUF)
			r->held = false;
		return;
	}
	fz_check_ok(w, r, cmd, (void *)arg, req.pos, wm);
}

void fz_op_ioctl(struct fz_worker *w)
{
	struct fz_file *f = fz_any_file(w);
	bool valid = !fz_one_in(w, 8);

	if (f)
		fz_ioctl_on(w, f, valid ? fz_good_cmd(w, f->kind == FZ_CPU ?
						      &w->readers[f->reader] : NULL) :
					  fz_bad_cmd(w),
			    valid, false);
}

void fz_take(struct fz_worker *w, struct fz_file *f)
{
	fz_ioctl_on(w, f, LRB_IOC_GET_NEXT_SUBBUF, true, true);
}

void fz_put_back(struct fz_worker *w, struct fz_file *f)
{
	fz_ioctl_on(w, f, LRB_IOC_PUT_SUBBUF, true, true);
}
