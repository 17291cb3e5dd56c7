// SPDX-License-Identifier: GPL-2.0
/*
 * test-relayd URL DIR [--stop-after K | --live]: the sending side of lrb-record
 * --relayd (tools/lrb-record/relayd.c, linked in) without lrb.ko. liblrb
 * writes four streams as lrb.ko's per-CPU buffers would (test-dump-gen.h:
 * a small discard buffer drained late, so that records are lost), the
 * packets go to the lttng-relayd at URL as lrb-record sends them, and
 * the same trace is written to DIR (metadata, test_<cpu>) for
 * tests/tools/test-relayd.sh to compare with relayd's, byte for byte.
 *
 * Prints per stream "stream CPU packets P bytes B records R discarded D"
 * and, at the end, "confirmed CPU PACKETS BYTES" for the packets relayd
 * confirmed writing and "sent CPU PACKETS BYTES" for those sent whole,
 * confirmed or not. --stop-after K: after K packets, create DIR/paused and wait
 * (up to 60 s) for DIR/go before sending the rest (the test kills relayd
 * meanwhile). --live: a live session (period 0.2 s) named
 * test-relayd-live; once it is open, DIR/paused and wait for DIR/go (a
 * viewer attaches meanwhile); then a round every 50 ms sends a packet of
 * each stream, but stream 3 goes quiet after a third of the rounds and
 * sends a beacon every fourth round instead, as lrb-record does for a
 * CPU that writes nothing (and never sends its other packets; a stream
 * that has sent all its packets does the same). Two thirds through, and
 * at the end before the session is closed, DIR/paused2 (DIR/paused3) and
 * wait for DIR/go2 (DIR/go3): the test counts what the viewer showed.
 * Exit status 0, or 1 if relayd was not reached or failed.
 */
#include "record.h"
#include "test-dump-gen.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NCPU 4

static int write_file(const char *dir, const char *name, const void *p,
		      size_t len)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || tool_write_full(fd, p, len) || close(fd)) {
		perror(path);
		return -1;
	}
	return 0;
}

/* Create DIR/@paused, wait (60 s at most) for DIR/@go. */
static void wait_go(const char *dir, const char *paused, const char *go)
{
	char path[4096];
	int i;

	write_file(dir, paused, "", 0);
	snprintf(path, sizeof(path), "%s/%s", dir, go);
	for (i = 0; i < 600 && access(path, F_OK); i++)
		usleep(100000);
}

/* --live: rounds of one packet per stream; stream 3 goes quiet. */
static int live_rounds(struct rec *r, struct gen_stream *g, const char *dir)
{
	unsigned long round, rounds = 0, quiet;
	unsigned int i;

	for (i = 0; i < NCPU - 1; i++)
		if (g[i].packets > rounds)
			rounds = g[i].packets;
	quiet = rounds / 3;
	for (round = 0; round < rounds; round++) {
		for (i = 0; i < NCPU; i++) {
			struct rec_cpu *c = &r->cpus[i];

			/* quiet: stream 3 after a third, the others at their end */
			if ((i == NCPU - 1 && round >= quiet) ||
			    round >= g[i].packets) {
				if (round % 4 == 0 &&
				    rec_relayd_beacon(c, tool_now_ns()))
					return -1;
				continue;
			}
			if (rec_relayd_write(c, g[i].data + round * 4096, 4096))
				return -1;
		}
		if (round == rounds * 2 / 3)
			wait_go(dir, "paused2", "go2");
		usleep(50000);
	}
	/* stream 3's other packets are never sent: its beacons said so */
	wait_go(dir, "paused3", "go3");
	return 0;
}

int main(int argc, char **argv)
{
	static struct gen_stream g[NCPU];
	struct rec r = {
		.chan = "test", .consumer = REC_READ, .quiet = true,
	};
	unsigned long stop_after = 0, sent = 0;
	bool live = false;
	unsigned int i;
	size_t off, size;
	int ret = 0;

	tool_name = "test-relayd";
	if (argc == 5 && !strcmp(argv[3], "--stop-after")) {
		stop_after = strtoul(argv[4], NULL, 10);
	} else if (argc == 4 && !strcmp(argv[3], "--live")) {
		live = true;
		r.live = 0.2;
	} else if (argc != 3) {
		fprintf(stderr, "usage: test-relayd URL DIR [--stop-after K | --live]\n");
		return 2;
	}
	r.relayd = argv[1];
	r.start_realtime = time(NULL);
	r.ncpu = NCPU;
	r.cpus = calloc(NCPU, sizeof(*r.cpus));
	r.metadata = gen_metadata(&gen_compact_discard, &r.metadata_len);
	if (!r.cpus || write_file(argv[2], "metadata", r.metadata,
				  r.metadata_len))
		return 1;
	for (i = 0; i < NCPU; i++) {
		struct rec_cpu *c = &r.cpus[i];

		if (gen_stream(&gen_compact_discard, i, 3000 + 500 * i, 400 + 100 * i,
			       i & 1, 1000000 + i, 1000 + 7 * i, &g[i])) {
			fprintf(stderr, "test-relayd: liblrb failed writing stream %u\n",
				i);
			return 1;
		}
		c->r = &r;
		c->cpu = i;
		c->info.subbuf_size = 4096;
		/*
		 * The streams' clock runs some 7 times faster than the real
		 * time the live rounds take: a beacon turns real time into
		 * clock cycles at 100 times the rate, so that it is not
		 * behind the streams still sending (a quiet stream here
		 * never sends again, so it cannot be ahead of anything).
		 */
		c->info.clock_freq = 100 * FZ_CLOCK_FREQ;
		snprintf(c->name, sizeof(c->name), "test_%u", i);
		if (write_file(argv[2], c->name, g[i].data, g[i].len))
			return 1;
		printf("stream %u packets %lu bytes %zu records %lu discarded %lu\n",
		       i, g[i].packets, g[i].len, g[i].nr, g[i].discarded);
	}
	if (rec_relayd_open(&r, live ? "test-relayd-live" : "test-relayd",
			    true))
		return 1;
	if (live) {
		wait_go(argv[2], "paused", "go");
		ret = live_rounds(&r, g, argv[2]);
	}
	/* packet by packet, the CPUs in turn, as the consumer threads would */
	for (off = 0; !ret && !live; off += 4096) {
		bool any = false;

		for (i = 0; i < NCPU && !ret; i++) {
			if (off >= g[i].len)
				continue;
			any = true;
			memcpy(&size, g[i].data + off +
			       offsetof(struct lrb_packet_header, packet_size),
			       sizeof(size));
			/* gen writes whole 4096-byte packets */
			if (size != 4096 * 8) {
				fprintf(stderr, "test-relayd: unexpected packet size\n");
				return 1;
			}
			if (stop_after && sent++ == stop_after)
				wait_go(argv[2], "paused", "go");
			/* in two pieces: the read consumer's path */
			ret = rec_relayd_write(&r.cpus[i], g[i].data + off, 100) ||
			      rec_relayd_write(&r.cpus[i], g[i].data + off + 100,
					       4096 - 100);
		}
		if (!any)
			break;
	}
	if (rec_relayd_close(&r))
		ret = 1;
	for (i = 0; i < NCPU; i++) {
		__u64 bytes, n = rec_relayd_confirmed(&r.cpus[i], &bytes);

		printf("confirmed %u %llu %llu\n", i, (unsigned long long)n,
		       (unsigned long long)bytes);
		n = rec_relayd_sent(&r.cpus[i], &bytes);
		printf("sent %u %llu %llu\n", i, (unsigned long long)n,
		       (unsigned long long)bytes);
	}
	if (!ret)
		printf("output %s\n", rec_relayd_output());
	for (i = 0; i < NCPU; i++)
		gen_free(&g[i]);
	return ret ? 1 : 0;
}
