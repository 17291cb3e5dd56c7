// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-vmcheck consume: one consumer thread per cpu file of a discard
 * channel, by read(), splice() to a file, splice() to a TCP socket, or
 * mmap() with the GET_NEXT_SUBBUF/PUT_SUBBUF protocol, until end of file
 * (the channel destroyed and drained); every packet verified, then the
 * exact accounting of every CPU against the client and lrb's counters.
 */
#include "vmcheck.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes asked of one splice(): the default pipe holds 16 pages. */
#define VC_SPLICE_CHUNK (16 * VC_PAGE)

enum vc_via { VIA_READ, VIA_SPLICE_FILE, VIA_SPLICE_TCP, VIA_MMAP };

/**
 * struct vc_worker - the consumer of one cpu file
 * @o: options
 * @via: how it consumes
 * @cpu: its CPU
 * @fd: the cpu file
 * @info: its GET_INFO
 * @st: verification state (the TCP receiver's for splice-tcp)
 * @spliced: bytes splice() moved out of the cpu file, -1 if not spliced
 * @deadline: give up at this vc_now_ns()
 * @hup: poll() said EPOLLHUP last time
 * @path: splice-file: the file written
 * @lsock: splice-tcp: the receiver's listening socket
 * @port: its port
 * @rx: the receiver thread
 * @fault: with --fail-nth, this thread's injected allocation failures
 */
struct vc_worker {
	const struct vc_opts *o;
	enum vc_via via;
	unsigned int cpu;
	int fd;
	struct lrb_buf_info info;
	struct vc_stream st;
	long long spliced;
	u64 deadline;
	bool hup;
	char path[256];
	int lsock;
	u16 port;
	pthread_t rx;
	struct vc_fault fault;
};

/*
 * Nothing to consume now: wait for the file to become readable. Returns
 * -1 (failure reported) when the deadline passed, or when poll() said the
 * channel was destroyed and drained but @what still returned -EAGAIN.
 */
static int vc_wait(struct vc_worker *w, const char *what)
{
	struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
	int r;

	if (w->hup) {
		vc_err(&w->st, VC_FRAMING,
		       "poll() reported EPOLLHUP (destroyed and drained) but %s still returns EAGAIN",
		       what);
		return -1;
	}
	if (vc_now_ns() > w->deadline) {
		vc_err(&w->st, VC_FRAMING,
		       "no end of file within %u s: was the channel destroyed (ctl \"destroy\" or client unloaded)?",
		       w->o->timeout_s);
		return -1;
	}
	r = poll(&pfd, 1, 1000);
	if (r < 0 && errno != EINTR) {
		vc_err(&w->st, VC_FRAMING, "poll: %s", strerror(errno));
		return -1;
	}
	w->hup = r > 0 && (pfd.revents & POLLHUP) &&
		 !(pfd.revents & POLLIN);
	if (r > 0 && (pfd.revents & (POLLERR | POLLNVAL))) {
		vc_err(&w->st, VC_FRAMING, "poll: revents 0x%x", pfd.revents);
		return -1;
	}
	return 0;
}

/*
 * With --fail-nth, the calls of this thread on its cpu file are armed to
 * fail an allocation (vc_arm()), and one that fails from it is repeated
 * (vc_fault_retry()): the exact accounting at the end shows that the
 * failure lost nothing.
 */
static int vc_faults_start(struct vc_worker *w)
{
	w->fault.fd = -1;
	return w->o->fail_nth ? vc_fault_open(&w->fault, w->o->fail_nth) : 0;
}

static void vc_arm(struct vc_worker *w)
{
	if (w->fault.fd >= 0)
		vc_fault_arm_next(&w->fault);
}

static void *vc_read_worker(void *arg)
{
	struct vc_worker *w = arg;
	struct vc_framer f;
	ssize_t n;

	if (vc_faults_start(w) || vc_framer_init(&f, w->info.subbuf_size))
		return NULL;
	for (;;) {
		vc_arm(w);
		n = vc_framer_read(&f, &w->st, w->fd);
		if (vc_fault_retry(&w->fault, n, "read()"))
			continue;
		if (n > 0) {
			w->hup = false;
			continue;
		}
		if (!n)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			vc_err(&w->st, VC_FRAMING, "read: %s", strerror(errno));
			break;
		}
		if (vc_wait(w, "read()"))
			break;
	}
	if (!n)
		vc_framer_end(&f, &w->st);
	vc_framer_free(&f);
	return NULL;
}

/* Write all of @len bytes waiting in the pipe @in to @out by splice(). */
static int vc_pipe_drain(struct vc_worker *w, int in, int out, u64 len)
{
	while (len) {
		ssize_t m = splice(in, NULL, out, NULL, len, SPLICE_F_MOVE);

		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0) {
			vc_err(&w->st, VC_FRAMING,
			       "splice from the pipe to %s: %s",
			       w->via == VIA_SPLICE_TCP ? "the socket" : w->path,
			       m ? strerror(errno) : "returned 0");
			return -1;
		}
		len -= m;
	}
	return 0;
}

/*
 * Splice the cpu file into a pipe, and the pipe into @out, until end of
 * file. Every splice() from the cpu file must move whole pages.
 */
static void vc_splice_loop(struct vc_worker *w, int out)
{
	int p[2];
	ssize_t n;

	if (pipe(p)) {
		vc_err(&w->st, VC_FRAMING, "pipe: %s", strerror(errno));
		return;
	}
	w->spliced = 0;
	for (;;) {
		vc_arm(w);
		n = splice(w->fd, NULL, p[1], NULL, VC_SPLICE_CHUNK,
			   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (vc_fault_retry(&w->fault, n, "splice()"))
			continue;
		if (n > 0) {
			w->hup = false;
			if (n % VC_PAGE)
				vc_err(&w->st, VC_FRAMING,
				       "splice from the cpu file moved %zd bytes at offset %lld: not whole pages",
				       n, w->spliced);
			w->spliced += n;
			if (vc_pipe_drain(w, p[0], out, n))
				break;
			continue;
		}
		if (!n)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			vc_err(&w->st, VC_FRAMING,
			       "splice from the cpu file at offset %lld: %s",
			       w->spliced, strerror(errno));
			break;
		}
		if (vc_wait(w, "splice()"))
			break;
	}
	close(p[0]);
	close(p[1]);
}

static void *vc_splice_file_worker(void *arg)
{
	struct vc_worker *w = arg;
	int out;

	if (vc_faults_start(w))
		return NULL;
	snprintf(w->path, sizeof(w->path), "%s/cpu%u", w->o->out, w->cpu);
	out = open(w->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		vc_err(&w->st, VC_FRAMING, "create %s: %s", w->path,
		       strerror(errno));
		return NULL;
	}
	vc_splice_loop(w, out);
	close(out);
	vc_verify_file(&w->st, w->path);
	/* the guest's /tmp is RAM */
	unlink(w->path);
	return NULL;
}

static void *vc_tcp_receiver(void *arg)
{
	struct vc_worker *w = arg;
	struct vc_framer f;
	ssize_t n;
	int s;

	s = accept(w->lsock, NULL, NULL);
	if (s < 0) {
		vc_err(&w->st, VC_FRAMING, "accept: %s", strerror(errno));
		return NULL;
	}
	if (vc_framer_init(&f, w->info.subbuf_size)) {
		close(s);
		return NULL;
	}
	while ((n = vc_framer_read(&f, &w->st, s)) > 0 ||
	       (n < 0 && errno == EINTR))
		;
	if (n < 0)
		vc_err(&w->st, VC_FRAMING, "receive from the socket: %s",
		       strerror(errno));
	else
		vc_framer_end(&f, &w->st);
	vc_framer_free(&f);
	close(s);
	return NULL;
}

static int vc_tcp_listen(struct vc_worker *w)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	w->lsock = socket(AF_INET, SOCK_STREAM, 0);
	if (w->lsock < 0 || bind(w->lsock, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(w->lsock, 1) ||
	    getsockname(w->lsock, (struct sockaddr *)&a, &len)) {
		vc_fail("cpu%u: TCP listener on 127.0.0.1: %s (is lo up?)",
			w->cpu, strerror(errno));
		return -1;
	}
	w->port = ntohs(a.sin_port);
	return 0;
}

static void *vc_splice_tcp_worker(void *arg)
{
	struct vc_worker *w = arg;
	struct sockaddr_in a = { .sin_family = AF_INET };
	int s;

	if (vc_faults_start(w)) {
		shutdown(w->lsock, SHUT_RDWR);
		return NULL;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(w->port);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a))) {
		vc_err(&w->st, VC_FRAMING, "connect to 127.0.0.1:%u: %s",
		       w->port, strerror(errno));
		if (s >= 0)
			close(s);
		/* wakes the receiver from accept() */
		shutdown(w->lsock, SHUT_RDWR);
		return NULL;
	}
	vc_splice_loop(w, s);
	/* end of stream for the receiver */
	close(s);
	return NULL;
}

static void *vc_mmap_worker(void *arg)
{
	struct vc_worker *w = arg;
	struct lrb_subbuf_desc d;
	const u8 *map;
	int r;

	if (vc_faults_start(w))
		return NULL;
	do {
		vc_arm(w);
		map = mmap(NULL, w->info.mmap_len, PROT_READ, MAP_SHARED,
			   w->fd, 0);
	} while (vc_fault_retry(&w->fault, map == MAP_FAILED ? -1 : 0,
				"mmap()"));
	if (map == MAP_FAILED) {
		vc_err(&w->st, VC_FRAMING, "mmap of %llu bytes: %s",
		       (ull)w->info.mmap_len, strerror(errno));
		return NULL;
	}
	for (;;) {
		vc_arm(w);
		r = ioctl(w->fd, LRB_IOC_GET_NEXT_SUBBUF, &d);
		if (vc_fault_retry(&w->fault, r, "GET_NEXT_SUBBUF"))
			continue;
		if (!r) {
			w->hup = false;
			if (d.mmap_offset % VC_PAGE ||
			    d.mmap_offset > w->info.mmap_len ||
			    d.packet_size > w->info.mmap_len - d.mmap_offset ||
			    d.pos % w->info.subbuf_size ||
			    d.seq != d.pos / w->info.subbuf_size) {
				vc_err(&w->st, VC_FRAMING,
				       "GET_NEXT_SUBBUF: pos %llu seq %llu packet_size %llu mmap_offset %llu: outside the mapping of %llu bytes or inconsistent",
				       (ull)d.pos, (ull)d.seq,
				       (ull)d.packet_size, (ull)d.mmap_offset,
				       (ull)w->info.mmap_len);
			} else {
				vc_verify_packet(&w->st, map + d.mmap_offset,
						 d.packet_size, d.pos);
				if (w->st.cur.h.packet_seq_num != d.seq ||
				    w->st.cur.h.content_size / 8 !=
				    d.content_size)
					vc_err(&w->st, VC_HEADER,
					       "packet at %llu: desc seq %llu content %llu, header says %llu and %llu",
					       (ull)d.pos, (ull)d.seq,
					       (ull)d.content_size,
					       (ull)w->st.cur.h.packet_seq_num,
					       (ull)w->st.cur.h.content_size / 8);
			}
			do {
				vc_arm(w);
				r = ioctl(w->fd, LRB_IOC_PUT_SUBBUF, 0);
			} while (vc_fault_retry(&w->fault, r, "PUT_SUBBUF"));
			if (r) {
				vc_err(&w->st, VC_FRAMING,
				       "PUT_SUBBUF of packet at %llu: %s",
				       (ull)d.pos, strerror(errno));
				break;
			}
			continue;
		}
		if (errno == ENODEV)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			vc_err(&w->st, VC_FRAMING, "GET_NEXT_SUBBUF: %s",
			       strerror(errno));
			break;
		}
		if (vc_wait(w, "GET_NEXT_SUBBUF"))
			break;
	}
	munmap((void *)map, w->info.mmap_len);
	return NULL;
}

/*
 * With --fail-nth: what was injected. splice() allocates a page for each
 * page it moves until the pipe gives pages back to recycle, and the cycle
 * of failures starts with the first allocation of its first call, so at
 * least one splice() must have failed.
 */
static void vc_faults_report(struct vc_worker *w)
{
	if (!w->o->fail_nth)
		return;
	vc_info("cpu%u: %llu calls armed to fail an allocation, %llu failed, %llu calls retried after ENOMEM",
		w->cpu, (ull)w->fault.armed, (ull)w->fault.fired,
		(ull)w->fault.enomem);
	if (w->spliced > 0)
		vc_check(w->fault.enomem > 0,
			 "cpu%u: no splice() failed with an injected allocation failure: are failslab and fail_page_alloc set up (65-faults.sh)?",
			 w->cpu);
	vc_fault_close(&w->fault);
}

/*
 * splice(): the pages moved come back from the pipe, drained after each
 * call, and replace the next ones: only those of the first call (and of
 * calls whose bookkeeping an injected failure prevented) are allocated.
 * The count is on the status page, refreshed by every splice().
 */
static void vc_recycled_report(struct vc_worker *w)
{
	long long pages = w->spliced / (long long)VC_PAGE;
	const long long first = VC_SPLICE_CHUNK / VC_PAGE;
	const struct lrb_status *map;
	struct lrb_status s;
	__u32 s1, s2;

	if (w->spliced < 0)
		return;
	map = mmap(NULL, VC_PAGE, PROT_READ, MAP_SHARED, w->fd,
		   w->info.mmap_len);
	if (!vc_check(map != MAP_FAILED, "cpu%u: mmap of the status page: %s",
		      w->cpu, strerror(errno)))
		return;
	do {
		s1 = __atomic_load_n(&map->seq, __ATOMIC_ACQUIRE);
		memcpy(&s, (const void *)map, sizeof(s));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&map->seq, __ATOMIC_RELAXED);
	} while ((s1 & 1) || s1 != s2);
	munmap((void *)map, VC_PAGE);
	vc_info("cpu%u: %lld pages spliced, %llu of them replaced by recycled pages",
		w->cpu, pages, (ull)s.pages_recycled);
	vc_check(s.counters.pages_spliced == (u64)pages &&
		 s.pages_recycled <= (u64)pages,
		 "cpu%u: status page: pages_spliced %llu pages_recycled %llu, %lld pages spliced",
		 w->cpu, (ull)s.counters.pages_spliced, (ull)s.pages_recycled,
		 pages);
	if (w->via == VIA_SPLICE_FILE && !w->o->fail_nth)
		vc_check(pages - (long long)s.pages_recycled <= first,
			 "cpu%u: %lld of %lld pages spliced were replaced by new pages, want at most the %lld of the first splice()",
			 w->cpu, pages - (long long)s.pages_recycled, pages,
			 first);
}

void vc_account_all(struct vc_chan *ch, struct vc_stream *st,
		    const long long *spliced, const char *written)
{
	struct vc_client_cpu cl[VC_MAX_CPUS];
	char *text = vc_read_file(written, NULL);
	unsigned int cpu;
	int found;

	if (!vc_check(text, "read %s: %s: is lrb_vm_client loaded and debugfs mounted?",
		      written, strerror(errno)))
		return;
	vc_check(strstr(text, "running=0"),
		 "%s does not say running=0: the client's counts are not final",
		 written);
	free(text);
	found = vc_read_written(written, cl, ch->ncpu);
	vc_check(found == (int)ch->ncpu,
		 "%s has %d cpu lines, want %u", written, found, ch->ncpu);
	for (cpu = 0; cpu < ch->ncpu; cpu++) {
		struct vc_acct a = { .cl = cl[cpu], .spliced = spliced[cpu] };
		struct vc_stream *s = &st[cpu];

		if (!vc_check(!ioctl(ch->fd[cpu], LRB_IOC_GET_COUNTERS,
				     &a.cnt) &&
			      !ioctl(ch->fd[cpu], LRB_IOC_GET_POSITIONS,
				     &a.pos),
			      "cpu%u: GET_COUNTERS/GET_POSITIONS after end of file: %s",
			      cpu, strerror(errno)))
			continue;
		vc_account(s, &a);
		vc_info("cpu%u: %llu packets, %llu records (task %llu, irq %llu), client attempts %llu+%llu lost %llu, lrb lost full %llu wrap %llu big %llu nest %llu, spliced %lld",
			cpu, (ull)s->packets, (ull)s->records,
			(ull)s->received[0], (ull)s->received[1],
			(ull)cl[cpu].task, (ull)cl[cpu].irq,
			(ull)cl[cpu].lost, (ull)a.cnt.lost_full,
			(ull)a.cnt.lost_wrap, (ull)a.cnt.lost_big,
			(ull)a.cnt.lost_nest, spliced[cpu]);
	}
}

int vc_cmd_consume(const struct vc_opts *o)
{
	static struct vc_worker w[VC_MAX_CPUS];
	static struct vc_stream st[VC_MAX_CPUS];
	long long spliced[VC_MAX_CPUS];
	pthread_t tid[VC_MAX_CPUS];
	void *(*fn)(void *arg);
	struct vc_chan ch;
	enum vc_via via;
	unsigned int cpu;
	u64 deadline;

	if (!strcmp(o->via, "read")) {
		via = VIA_READ;
		fn = vc_read_worker;
	} else if (!strcmp(o->via, "splice-file")) {
		via = VIA_SPLICE_FILE;
		fn = vc_splice_file_worker;
	} else if (!strcmp(o->via, "splice-tcp")) {
		via = VIA_SPLICE_TCP;
		fn = vc_splice_tcp_worker;
	} else if (!strcmp(o->via, "mmap")) {
		via = VIA_MMAP;
		fn = vc_mmap_worker;
		vc_catch_fatal_signals();
	} else {
		fprintf(stderr, "lrb-vmcheck consume: --via %s: use read, splice-file, splice-tcp or mmap\n",
			o->via);
		return 2;
	}
	if (via == VIA_SPLICE_FILE && mkdir(o->out, 0755) && errno != EEXIST) {
		vc_fail("mkdir %s: %s: give a writable --out DIR", o->out,
			strerror(errno));
		return vc_report();
	}
	vc_load_layout(o->chan);
	if (vc_chan_open(&ch, o->chan, O_RDONLY | O_NONBLOCK))
		return vc_report();
	vc_check(ch.info[0].mode == LRB_ABI_MODE_DISCARD,
		 "channel %s is in mode %u: consume needs discard mode (load the client with mode=discard)",
		 o->chan, ch.info[0].mode);
	deadline = vc_now_ns() + o->timeout_s * 1000000000ULL;
	for (cpu = 0; cpu < ch.ncpu; cpu++) {
		struct vc_geom g;

		vc_geom_from_info(&g, &ch.info[cpu], true);
		w[cpu] = (struct vc_worker){
			.o = o, .via = via, .cpu = cpu, .fd = ch.fd[cpu],
			.info = ch.info[cpu], .spliced = -1,
			.deadline = deadline, .lsock = -1,
		};
		vc_stream_init(&w[cpu].st, cpu, &g);
	}
	for (cpu = 0; cpu < ch.ncpu; cpu++) {
		if (via == VIA_SPLICE_TCP &&
		    (vc_tcp_listen(&w[cpu]) ||
		     pthread_create(&w[cpu].rx, NULL, vc_tcp_receiver,
				    &w[cpu]))) {
			vc_fail("cpu%u: cannot start the TCP receiver", cpu);
			exit(vc_report());
		}
		if (pthread_create(&tid[cpu], NULL, fn, &w[cpu])) {
			vc_fail("pthread_create: %s", strerror(errno));
			exit(vc_report());
		}
	}
	/* scenarios wait for this line before they start the writers */
	vc_info("consuming %u cpu files by %s", ch.ncpu, o->via);
	for (cpu = 0; cpu < ch.ncpu; cpu++) {
		pthread_join(tid[cpu], NULL);
		/* the sender closed its socket: the receiver sees the end */
		if (via == VIA_SPLICE_TCP) {
			pthread_join(w[cpu].rx, NULL);
			close(w[cpu].lsock);
		}
	}
	for (cpu = 0; cpu < ch.ncpu; cpu++) {
		st[cpu] = w[cpu].st;
		spliced[cpu] = w[cpu].spliced;
		vc_faults_report(&w[cpu]);
		vc_recycled_report(&w[cpu]);
	}
	vc_account_all(&ch, st, spliced, o->written);
	for (cpu = 0; cpu < ch.ncpu; cpu++)
		vc_stream_report(&st[cpu], true);
	vc_chan_close(&ch);
	return vc_report();
}

/*
 * For the selftest: run one consumer on @fd, a regular file holding a
 * packet stream in place of a cpu file (read and splice behave alike on
 * it, up to end of file). @st is verified in place.
 */
int vc_consume_selftest(const char *via, const char *dir, int fd,
			struct vc_stream *st, long long *spliced)
{
	struct vc_opts o = { .via = via, .out = dir, .timeout_s = 10 };
	static struct vc_worker w;

	w = (struct vc_worker){
		.o = &o, .cpu = st->cpu, .fd = fd,
		.info = { .subbuf_size = st->g.subbuf_size },
		.spliced = -1, .deadline = vc_now_ns() + 10000000000ULL,
		.lsock = -1, .st = *st,
	};
	if (!strcmp(via, "read")) {
		vc_read_worker(&w);
	} else if (!strcmp(via, "splice-file")) {
		w.via = VIA_SPLICE_FILE;
		vc_splice_file_worker(&w);
	} else if (!strcmp(via, "splice-tcp")) {
		w.via = VIA_SPLICE_TCP;
		if (vc_tcp_listen(&w) ||
		    pthread_create(&w.rx, NULL, vc_tcp_receiver, &w))
			return -1;
		vc_splice_tcp_worker(&w);
		pthread_join(w.rx, NULL);
		close(w.lsock);
	} else {
		return -1;
	}
	*st = w.st;
	*spliced = w.spliced;
	return 0;
}
