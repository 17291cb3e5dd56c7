// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-vmcheck destroyed: files and a mapping kept open across the
 * destruction of their channel. Handshake with the scenario through files
 * in --sync DIR:
 *
 *   checker: opens every cpu file, maps each, takes cpu0's oldest packet
 *            with GET_NEXT_SUBBUF and holds it;       creates DIR/ready
 *   script:  ctl "destroy" (unloads the client, checks rmmod lrb fails,
 *            saves the client's written file);        creates DIR/go
 *   checker: the held packet is still readable and unchanged, the device
 *            nodes are gone, FLUSH -> ENODEV, PUT_SUBBUF, then drains
 *            every CPU by read() to end of file (GET_NEXT -> ENODEV, poll
 *            -> EPOLLHUP), exact accounting; closes the files but keeps
 *            the mappings;                             creates DIR/closed
 *   script:  rmmod lrb must still fail (mappings);    creates DIR/go2
 *   checker: unmaps and exits; the script's rmmod lrb must then succeed.
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
#include <sys/stat.h>
#include <unistd.h>

/* Drain one cpu file by read() to end of file, then check the end. */
static void vc_drain(struct vc_chan *ch, unsigned int cpu,
		     struct vc_stream *s, u64 deadline)
{
	struct pollfd pfd = { .fd = ch->fd[cpu], .events = POLLIN };
	struct lrb_subbuf_desc d;
	struct vc_framer f;
	ssize_t n;
	long r;

	if (vc_framer_init(&f, ch->info[cpu].subbuf_size))
		return;
	for (;;) {
		n = vc_framer_read(&f, s, ch->fd[cpu]);
		if (n > 0 || (n < 0 && errno == EINTR))
			continue;
		if (!n)
			break;
		if (errno != EAGAIN) {
			vc_err(s, VC_FRAMING, "read: %s", strerror(errno));
			break;
		}
		/* the last packets were flushed at destroy: all complete */
		if (vc_now_ns() > deadline) {
			vc_err(s, VC_FRAMING,
			       "read still returns EAGAIN, no end of file after the channel was destroyed");
			break;
		}
		poll(&pfd, 1, 1000);
	}
	if (n)
		goto out;
	vc_framer_end(&f, s);
	n = read(ch->fd[cpu], f.buf, VC_PAGE);
	vc_check(!n, "cpu%u: read after end of file returned %zd (%s), want 0",
		 cpu, n, strerror(errno));
	r = ioctl(ch->fd[cpu], LRB_IOC_GET_NEXT_SUBBUF, &d);
	vc_check_err(r, errno, ENODEV, 0,
		     "GET_NEXT_SUBBUF after the destroyed channel was drained");
	r = ioctl(ch->fd[cpu], LRB_IOC_FLUSH, 0);
	vc_check_err(r, errno, ENODEV, 0, "FLUSH after destroy");
	pfd.revents = 0;
	vc_check(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP) &&
		 !(pfd.revents & POLLIN),
		 "cpu%u: poll after drain: revents 0x%x, want EPOLLHUP without EPOLLIN",
		 cpu, pfd.revents);
out:
	vc_framer_free(&f);
}

/* Wait until cpu0 has a complete packet and hold it; 0 or -1. */
static int vc_hold_first(struct vc_chan *ch, struct lrb_subbuf_desc *d,
			 unsigned int timeout_s)
{
	struct pollfd pfd = { .fd = ch->fd[0], .events = POLLIN };
	u64 end = vc_now_ns() + timeout_s * 1000000000ULL;

	while (ioctl(ch->fd[0], LRB_IOC_GET_NEXT_SUBBUF, d)) {
		if (errno != EAGAIN || vc_now_ns() > end) {
			vc_fail("cpu0: GET_NEXT_SUBBUF: %s: no complete packet to hold across destroy (is the client writing?)",
				strerror(errno));
			return -1;
		}
		poll(&pfd, 1, 200);
	}
	if (!vc_check(!(d->mmap_offset % VC_PAGE) &&
		      d->mmap_offset < ch->info[0].mmap_len &&
		      d->packet_size <= ch->info[0].mmap_len - d->mmap_offset,
		      "cpu0 GET_NEXT_SUBBUF: packet_size %llu mmap_offset %llu outside the mapping",
		      (ull)d->packet_size, (ull)d->mmap_offset))
		return -1;
	return 0;
}

int vc_cmd_destroyed(const struct vc_opts *o)
{
	static struct vc_stream st[VC_MAX_CPUS];
	long long spliced[VC_MAX_CPUS];
	const u8 *map[VC_MAX_CPUS] = {};
	struct lrb_subbuf_desc d;
	struct vc_chan ch;
	char path[256];
	struct stat sb;
	unsigned int cpu;
	u32 hash;
	u64 deadline;
	long r;

	if (!o->sync) {
		fprintf(stderr, "lrb-vmcheck destroyed: give --sync DIR for the handshake with the scenario\n");
		return 2;
	}
	vc_load_layout(o->chan);
	if (vc_chan_open(&ch, o->chan, O_RDONLY | O_NONBLOCK))
		return vc_report();
	vc_catch_fatal_signals();
	for (cpu = 0; cpu < ch.ncpu; cpu++) {
		struct vc_geom g;

		vc_geom_from_info(&g, &ch.info[cpu], true);
		vc_stream_init(&st[cpu], cpu, &g);
		spliced[cpu] = -1;
		map[cpu] = mmap(NULL, ch.info[cpu].mmap_len, PROT_READ,
				MAP_SHARED, ch.fd[cpu], 0);
		if (!vc_check(map[cpu] != MAP_FAILED,
			      "cpu%u: mmap of %llu bytes: %s", cpu,
			      (ull)ch.info[cpu].mmap_len, strerror(errno)))
			goto out;
	}
	if (vc_hold_first(&ch, &d, o->timeout_s))
		goto out;
	vc_verify_packet(&st[0], map[0] + d.mmap_offset, d.packet_size, d.pos);
	hash = st[0].cur.hash;

	if (vc_sync_touch(o->sync, "ready") ||
	    vc_sync_wait(o->sync, "go", o->timeout_s))
		goto out;
	deadline = vc_now_ns() + o->timeout_s * 1000000000ULL;

	vc_check(stat(vc_chan_path(path, sizeof(path), o->chan, ""), &sb) &&
		 errno == ENOENT,
		 "%s still exists after destroy: the device nodes must go",
		 path);
	{
		/* the held packet, read again through the live mapping */
		struct vc_stream again;

		vc_stream_init(&again, 0, &st[0].g);
		vc_verify_packet(&again, map[0] + d.mmap_offset,
				 d.packet_size, d.pos);
		vc_check(again.cur.hash == hash && !vc_stream_errors(&again),
			 "cpu0: the packet held across destroy changed (or does not verify) in the mapping");
	}
	r = ioctl(ch.fd[0], LRB_IOC_GET_NEXT_SUBBUF, &d);
	vc_check_err(r, errno, EBUSY, 0, "GET_NEXT_SUBBUF while holding, after destroy");
	r = ioctl(ch.fd[0], LRB_IOC_FLUSH, 0);
	vc_check_err(r, errno, ENODEV, 0, "FLUSH after destroy");
	vc_check(!ioctl(ch.fd[0], LRB_IOC_PUT_SUBBUF, 0),
		 "cpu0: PUT_SUBBUF of the packet held across destroy: %s",
		 strerror(errno));
	r = vc_probe(map[0] + d.mmap_offset);
	vc_check(r == SIGBUS,
		 "cpu0: packet put after destroy still %s through the mapping, want SIGBUS",
		 r ? "raises another signal" : "readable");
	for (cpu = 0; cpu < ch.ncpu; cpu++)
		vc_drain(&ch, cpu, &st[cpu], deadline);
	vc_account_all(&ch, st, spliced, o->written);
	for (cpu = 0; cpu < ch.ncpu; cpu++)
		vc_stream_report(&st[cpu], true);

	/* only the mappings keep the files (and lrb.ko) now */
	vc_chan_close(&ch);
	if (!vc_sync_touch(o->sync, "closed"))
		vc_sync_wait(o->sync, "go2", o->timeout_s);
unmap:
	for (cpu = 0; cpu < VC_MAX_CPUS; cpu++)
		if (map[cpu] && map[cpu] != MAP_FAILED)
			munmap((void *)map[cpu], ch.info[cpu].mmap_len);
	return vc_report();
out:
	/* let the scenario go on to its own checks */
	vc_chan_close(&ch);
	vc_sync_touch(o->sync, "ready");
	vc_sync_touch(o->sync, "closed");
	goto unmap;
}
