// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-vmcheck timer and watermark: when poll() wakes a reader.
 *
 * timer: a slow writer never fills a packet; the channel's switch timer
 * (period P) must close packets so that poll() (watermark 1) reports them
 * and each packet is closed at most P (plus slack) after its first record.
 * A CPU that stalls delays its timer and its writer alike (a vCPU that a
 * loaded host does not run for a while): the stall shows as a gap in the
 * packet's records, or between its last record and its close, and a
 * packet closed late by no more than that gap is not the timer's fault. A
 * timer late by itself leaves no such gap: the writer goes on meanwhile.
 *
 * watermark: with SET_WATERMARK(3) poll() must not report readable while
 * fewer than 3 packets are complete. Packets are completed one by one with
 * LRB_IOC_FLUSH while a very slow writer (no switch timer) keeps exactly
 * one record or more in the open packet, so the count is known.
 */
#include "vmcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/**
 * struct vc_timer - the timer watcher of one cpu file
 * @o: options
 * @fd: the cpu file
 * @st: verification
 * @polls: poll() calls
 * @late_polls: poll() waits longer than 3 * period + 1 s
 * @max_wait_ns: longest poll() wait
 * @late_packets: packets closed later than period + slack + their
 *	longest record gap after their first record
 * @stalled_packets: packets closed later than period + slack, but within
 *	their longest record gap more (their CPU stalled)
 * @empty_packets: packets without a record
 * @max_lat_ns: longest delay from a packet's first record to its close
 * @max_gap_ns: longest gap in a packet (see struct vc_packet)
 */
struct vc_timer {
	const struct vc_opts *o;
	int fd;
	struct vc_stream st;
	u64 polls;
	u64 late_polls;
	u64 max_wait_ns;
	u64 late_packets;
	u64 stalled_packets;
	u64 empty_packets;
	u64 max_lat_ns;
	u64 max_gap_ns;
};

/* Read every packet complete now; returns -1 on end of file or error. */
static int vc_timer_drain(struct vc_timer *t, struct vc_framer *f)
{
	u64 limit = (t->o->period_us + (u64)t->o->slack_us) * 1000, lat, k;
	const struct vc_packet *c = &t->st.cur;

	for (;;) {
		u64 before = t->st.packets;
		ssize_t n = vc_framer_read(f, &t->st, t->fd);

		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			vc_err(&t->st, VC_FRAMING, "read: %s",
			       n ? strerror(errno) : "end of file while the channel should be live");
			return -1;
		}
		if (t->st.packets == before)
			continue;
		if (!c->records) {
			t->empty_packets++;
			continue;
		}
		lat = c->h.timestamp_end - c->first_ts;
		if (lat > t->max_lat_ns)
			t->max_lat_ns = lat;
		if (c->max_gap > t->max_gap_ns)
			t->max_gap_ns = c->max_gap;
		if (lat <= limit)
			continue;
		if (lat <= limit + c->max_gap)
			k = t->stalled_packets++;
		else
			k = t->late_packets++;
		if (k < 3)
			vc_info("cpu%u: packet %llu closed %llu us after its first record, period %u us; %s: longest gap in its records %llu us",
				t->st.cpu, (ull)c->h.packet_seq_num,
				(ull)lat / 1000, t->o->period_us,
				lat <= limit + c->max_gap ? "its CPU stalled" : "late",
				(ull)c->max_gap / 1000);
	}
}

static void *vc_timer_worker(void *arg)
{
	struct vc_timer *t = arg;
	u64 max_wait = (3ULL * t->o->period_us + 1000000) * 1000;
	u64 end = vc_now_ns() + t->o->duration_s * 1000000000ULL;
	struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
	struct vc_framer f;

	if (vc_framer_init(&f, t->st.g.subbuf_size))
		return NULL;
	for (;;) {
		u64 now = vc_now_ns(), waited;
		int timeout = (max_wait + 500000000ULL) / 1000000, r;

		if (now >= end)
			break;
		if ((end - now) / 1000000 < (u64)timeout)
			timeout = (end - now) / 1000000 + 1;
		r = poll(&pfd, 1, timeout);
		waited = vc_now_ns() - now;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			vc_err(&t->st, VC_FRAMING, "poll: %s", strerror(errno));
			break;
		}
		t->polls++;
		if (waited > t->max_wait_ns)
			t->max_wait_ns = waited;
		if (waited > max_wait)
			t->late_polls++;
		if (r && vc_timer_drain(t, &f))
			break;
	}
	vc_framer_free(&f);
	return NULL;
}

int vc_cmd_timer(const struct vc_opts *o)
{
	static struct vc_timer t[VC_MAX_CPUS];
	pthread_t tid[VC_MAX_CPUS];
	struct vc_chan ch;
	unsigned int cpu;

	if (!o->period_us) {
		fprintf(stderr, "lrb-vmcheck timer: give --period-us, the channel's switch_timer_us\n");
		return 2;
	}
	vc_load_layout(o->chan);
	if (vc_chan_open(&ch, o->chan, O_RDONLY | O_NONBLOCK))
		return vc_report();
	for (cpu = 0; cpu < ch.ncpu; cpu++) {
		struct vc_geom g;

		vc_check(ch.info[cpu].switch_timer_us == o->period_us &&
			 ch.info[cpu].watermark == 1,
			 "cpu%u: GET_INFO switch_timer_us %u watermark %u: want %u and 1 (load the client with switch_timer_us=%u)",
			 cpu, ch.info[cpu].switch_timer_us,
			 ch.info[cpu].watermark, o->period_us, o->period_us);
		vc_geom_from_info(&g, &ch.info[cpu], true);
		t[cpu] = (struct vc_timer){ .o = o, .fd = ch.fd[cpu] };
		vc_stream_init(&t[cpu].st, cpu, &g);
		if (pthread_create(&tid[cpu], NULL, vc_timer_worker, &t[cpu])) {
			vc_fail("pthread_create: %s", strerror(errno));
			exit(vc_report());
		}
	}
	for (cpu = 0; cpu < ch.ncpu; cpu++) {
		struct vc_timer *c = &t[cpu];

		pthread_join(tid[cpu], NULL);
		vc_info("cpu%u: %llu polls, longest wait %llu ms; %llu packets, %llu records, longest first record to close %llu us, longest gap %llu us, %llu closed late after a stall",
			cpu, (ull)c->polls, (ull)c->max_wait_ns / 1000000,
			(ull)c->st.packets, (ull)c->st.records,
			(ull)c->max_lat_ns / 1000, (ull)c->max_gap_ns / 1000,
			(ull)c->stalled_packets);
		vc_check(!c->late_polls,
			 "cpu%u: %llu poll() waits longer than 3 * %u us + 1 s (longest %llu ms) while the writer was active",
			 cpu, (ull)c->late_polls, o->period_us,
			 (ull)c->max_wait_ns / 1000000);
		vc_check(!c->late_packets,
			 "cpu%u: %llu packets closed more than %u + %u us + their longest gap between records after their first record (longest %llu us)",
			 cpu, (ull)c->late_packets, o->period_us, o->slack_us,
			 (ull)c->max_lat_ns / 1000);
		vc_check(!c->empty_packets,
			 "cpu%u: %llu packets without a record: the switch timer must not close an empty packet",
			 cpu, (ull)c->empty_packets);
		vc_check(c->st.packets >= 2 && c->st.records >= 2,
			 "cpu%u: %llu packets, %llu records in %u s: the switch timer did not deliver the slow writer's records",
			 cpu, (ull)c->st.packets, (ull)c->st.records,
			 o->duration_s);
		vc_stream_report(&c->st, false);
	}
	vc_chan_close(&ch);
	return vc_report();
}

/* --- watermark --- */

/* poll() @fd for @ms: 1 if readable, 0 if it timed out. */
static int vc_poll_in(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&pfd, 1, ms);
	while (r < 0 && errno == EINTR);
	return r > 0 && (pfd.revents & POLLIN);
}

static u64 vc_complete(int fd, u64 sb)
{
	struct lrb_positions p = {};

	ioctl(fd, LRB_IOC_GET_POSITIONS, &p);
	return ((p.produced & ~(sb - 1)) - p.consumed) / sb;
}

/*
 * Complete one more packet: wait until the slow writer has put a record in
 * the open packet (a flush leaves an empty packet open), then flush it.
 */
static int vc_wm_add(int fd, u64 sb, unsigned int timeout_s)
{
	u64 end = vc_now_ns() + timeout_s * 1000000000ULL;
	struct lrb_positions p;

	for (;;) {
		if (ioctl(fd, LRB_IOC_GET_POSITIONS, &p)) {
			vc_fail("GET_POSITIONS: %s", strerror(errno));
			return -1;
		}
		if (p.produced % sb > VC_HEADER_SIZE)
			break;
		if (vc_now_ns() > end) {
			vc_fail("no record written within %u s (produced %llu): is the client's task writer running?",
				timeout_s, (ull)p.produced);
			return -1;
		}
		vc_sleep_ms(5);
	}
	return vc_check(!ioctl(fd, LRB_IOC_FLUSH, 0), "FLUSH: %s",
			strerror(errno)) ? 0 : -1;
}

/* Read complete packets until EAGAIN; returns how many, -1 on error. */
static int vc_wm_read(struct vc_stream *s, struct vc_framer *f, int fd,
		      int max)
{
	u64 before = s->packets;
	ssize_t n;

	while ((int)(s->packets - before) < max) {
		n = vc_framer_read(f, s, fd);
		if (n > 0)
			continue;
		if (n < 0 && errno == EAGAIN && !f->have)
			break;
		vc_fail("cpu%u read: %s", s->cpu,
			n ? strerror(errno) : "unexpected end of file");
		return -1;
	}
	return s->packets - before;
}

int vc_cmd_watermark(const struct vc_opts *o)
{
	const int no = 300, yes = 3000;	/* ms: must time out, may wait */
	struct lrb_buf_info info;
	struct vc_framer f;
	struct vc_stream s;
	struct vc_chan ch;
	struct vc_geom g;
	u32 wm;
	u64 sb;
	int fd, k, n;

	vc_load_layout(o->chan);
	if (vc_chan_open(&ch, o->chan, O_RDONLY | O_NONBLOCK))
		return vc_report();
	if (!vc_check(o->cpu < ch.ncpu, "--cpu %u: channel has %u CPUs",
		      o->cpu, ch.ncpu))
		goto out;
	fd = ch.fd[o->cpu];
	info = ch.info[o->cpu];
	sb = info.subbuf_size;
	if (!vc_check(info.num_subbuf >= 4 && !info.switch_timer_us &&
		      info.watermark == 1,
		      "GET_INFO: num_subbuf %llu switch_timer_us %u watermark %u: want at least 4, 0 (no timer), and 1 by default",
		      (ull)info.num_subbuf, info.switch_timer_us,
		      info.watermark))
		goto out;
	vc_geom_from_info(&g, &info, true);
	vc_stream_init(&s, o->cpu, &g);
	if (vc_framer_init(&f, sb))
		goto out;
	n = vc_wm_read(&s, &f, fd, 1 << 30);
	vc_info("cpu%u: %d packets waiting at start", o->cpu, n);

	wm = 3;
	vc_check(!ioctl(fd, LRB_IOC_SET_WATERMARK, &wm) &&
		 !ioctl(fd, LRB_IOC_GET_INFO, &info) && info.watermark == 3,
		 "SET_WATERMARK(3), then GET_INFO watermark %u: %s",
		 info.watermark, strerror(errno));
	vc_check(!vc_poll_in(fd, no),
		 "poll readable with %llu complete packets, watermark 3",
		 (ull)vc_complete(fd, sb));
	for (k = 1; k <= 3; k++) {
		if (vc_wm_add(fd, sb, o->timeout_s))
			goto out_free;
		if (k < 3)
			vc_check(!vc_poll_in(fd, no),
				 "poll readable after %d flushes (%llu complete packets), watermark 3",
				 k, (ull)vc_complete(fd, sb));
		else
			vc_check(vc_poll_in(fd, yes),
				 "poll not readable within %d ms with 3 complete packets (positions say %llu), watermark 3",
				 yes, (ull)vc_complete(fd, sb));
	}
	n = vc_wm_read(&s, &f, fd, 1);
	vc_check(n == 1, "reading one packet: got %d", n);
	vc_check(!vc_poll_in(fd, no),
		 "poll readable with 2 complete packets left (positions say %llu), watermark 3",
		 (ull)vc_complete(fd, sb));
	if (vc_wm_add(fd, sb, o->timeout_s))
		goto out_free;
	vc_check(vc_poll_in(fd, yes),
		 "poll not readable within %d ms with 3 complete packets again, watermark 3",
		 yes);
	wm = info.num_subbuf;
	vc_check(!ioctl(fd, LRB_IOC_SET_WATERMARK, &wm),
		 "SET_WATERMARK(num_subbuf %u): %s", wm, strerror(errno));
	vc_check(!vc_poll_in(fd, no),
		 "poll readable with 3 complete packets, watermark num_subbuf %u",
		 wm);
	wm = 1;
	vc_check(!ioctl(fd, LRB_IOC_SET_WATERMARK, &wm) && vc_poll_in(fd, yes),
		 "SET_WATERMARK(1) with 3 complete packets: poll not readable");
	n = vc_wm_read(&s, &f, fd, 1 << 30);
	vc_check(n == 3, "read %d packets at watermark 1, want the 3 flushed",
		 n);
	vc_check(!vc_poll_in(fd, no), "poll readable with no complete packet");
	vc_stream_report(&s, false);
out_free:
	vc_framer_free(&f);
out:
	vc_chan_close(&ch);
	return vc_report();
}
