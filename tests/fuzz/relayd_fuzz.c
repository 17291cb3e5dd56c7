// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of lrb-record's side of lttng-relayd's protocol
 * (tools/lrb-record/relayd.c, and the summary of report.c): the input is
 * everything relayd answers on the control connection, whatever lrb-record
 * asks. A thread of this harness plays relayd on 127.0.0.1: it accepts
 * the control connection, writes the input to it, then reads until
 * lrb-record hangs up; the data connection is accepted at the end and
 * dropped. lrb-record meanwhile does what a recording of two CPUs does:
 * rec_relayd_open() (VERSION, CREATE_SESSION with its output path,
 * CREATE_TRACE_CHUNK, ADD_STREAM for the metadata and each CPU,
 * SEND_METADATA, STREAMS_SENT), two packets per CPU by
 * rec_relayd_write() (SEND_INDEX, DATA_PENDING), a beacon of CPU 0, then
 * rec_relayd_close() (the data pending rounds, CLOSE_STREAM) and the
 * summary. A first input byte that is odd takes the read consumer's path
 * (packets written in pieces), else the mmap consumer's; the rest are the
 * answers, which end where the input does: lrb-record then sees relayd
 * hang up.
 *
 * Built by tests/fuzz/run.sh with the reply timeout at 2 s and no wait
 * between data pending rounds; seeds: tests/fuzz/mkrelayd.py.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "record.h"

#define FZ_NCPU 2
#define FZ_PACKETS 2
#define FZ_SUBBUF 4096

static int ctrl_listen = -1, data_listen = -1;
static char url[64];
static FILE *devnull;
static unsigned char packets[FZ_NCPU][FZ_PACKETS][FZ_SUBBUF];

struct relayd {
	const uint8_t *data;
	size_t len;
};

static int listen_local(unsigned int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 16) || getsockname(fd, (struct sockaddr *)&a, &len))
		abort();
	*port = ntohs(a.sin_port);
	return fd;
}

/* Valid lrb packets: what a cpu file hands out. */
static void setup(void)
{
	struct lrb_packet_header h = {
		.magic = LRB_PACKET_MAGIC, .header_size = sizeof(h),
		.packet_size = FZ_SUBBUF * 8, .content_size = sizeof(h) * 8,
	};
	unsigned int ctrl, data, c, k;

	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	/* tool_err()'s messages; the sanitizers write to the descriptor */
	stderr = devnull;
	ctrl_listen = listen_local(&ctrl);
	data_listen = listen_local(&data);
	snprintf(url, sizeof(url), "net://127.0.0.1:%u:%u", ctrl, data);
	for (c = 0; c < FZ_NCPU; c++)
		for (k = 0; k < FZ_PACKETS; k++) {
			h.cpu_id = c;
			h.packet_seq_num = k;
			h.timestamp_begin = 1000 * k;
			h.timestamp_end = 1000 * k + 999;
			memcpy(packets[c][k], &h, sizeof(h));
		}
}

/* relayd: the input as its answers, then whatever lrb-record says. */
static void *relayd_thread(void *arg)
{
	const struct relayd *rd = arg;
	char buf[4096];
	int fd = accept4(ctrl_listen, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		abort();
	if (rd->len)
		send(fd, rd->data, rd->len, MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	return NULL;
}

/* The data connections lrb-record made, dropped. */
static void drop_data(void)
{
	int fd, flags = fcntl(data_listen, F_GETFL);

	fcntl(data_listen, F_SETFL, flags | O_NONBLOCK);
	while ((fd = accept4(data_listen, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(fd);
	fcntl(data_listen, F_SETFL, flags);
}

/* One packet to relayd, whole (mmap) or in pieces (read). */
static int send_packet(struct rec_cpu *c, const unsigned char *p, bool pieces)
{
	if (!pieces)
		return rec_relayd_write(c, p, FZ_SUBBUF);
	return rec_relayd_write(c, p, 40) ||
	       rec_relayd_write(c, p + 40, 100) ||
	       rec_relayd_write(c, p + 140, FZ_SUBBUF - 140);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char metadata[] = "/* CTF 1.8 */\n";
	struct rec_cpu cpus[FZ_NCPU] = { 0 };
	struct rec r = {
		.chan = "fz", .relayd = url, .quiet = true, .ncpu = FZ_NCPU,
		.cpus = cpus, .metadata = metadata,
		.metadata_len = sizeof(metadata) - 1,
		.start_realtime = 1700000000, .stop_reason = "fuzz",
	};
	struct relayd rd;
	pthread_t tid;
	unsigned int c, k;
	bool pieces;

	if (!devnull)
		setup();
	if (!size)
		return 0;
	pieces = data[0] & 1;
	r.consumer = pieces ? REC_READ : REC_MMAP;
	rd.data = data + 1;
	rd.len = size - 1;
	for (c = 0; c < FZ_NCPU; c++) {
		cpus[c].r = &r;
		cpus[c].cpu = c;
		cpus[c].fd = -1;
		cpus[c].out = -1;
		cpus[c].info.subbuf_size = FZ_SUBBUF;
		cpus[c].info.clock_freq = 1000000000ULL;
		snprintf(cpus[c].name, sizeof(cpus[c].name), "fz_%u", c);
	}
	if (pthread_create(&tid, NULL, relayd_thread, &rd))
		abort();
	if (!rec_relayd_open(&r, "fz", true)) {
		for (k = 0; k < FZ_PACKETS; k++)
			for (c = 0; c < FZ_NCPU; c++)
				if (send_packet(&cpus[c], packets[c][k], pieces))
					goto close;
		rec_relayd_beacon(&cpus[0], 2000000000ULL);
	}
close:
	rec_relayd_close(&r);
	rec_summary(&r, devnull);
	pthread_join(tid, NULL);
	drop_data();
	return 0;
}
