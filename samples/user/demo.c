// SPDX-License-Identifier: GPL-2.0
/*
 * lrb user-space demo: one writer thread per CPU logs "I/O completion"
 * events into a per-CPU channel while a consumer thread drains every
 * buffer, decodes each packet and counts records. At the end it prints,
 * per CPU, records written, read and lost, and the throughput, and checks
 * that every record is accounted for: written = read + lost.
 *
 *   demo [--seconds N] [--mode discard|overwrite] [--subbuf-size BYTES]
 *        [--subbufs N]
 */
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <lrb/event.h>
#include <lrb/decode.h>

/* The one event: lrb_write_io_done() and its description. */
LRB_EVENT(io_done, 1,
	  LRB_INTEGER(uint64_t, seq),
	  LRB_INTEGER(uint32_t, cpu),
	  LRB_INTEGER(uint32_t, bytes),
	  LRB_INTEGER(uint64_t, latency_ns));

/* Its payload, as the consumer decodes it. */
struct io_done {
	uint64_t seq;
	uint32_t cpu;
	uint32_t bytes;
	uint64_t latency_ns;
};

/*
 * One constant configuration per mode, so that each lrb_write_io_done()
 * call gets a fast path specialised for its mode.
 */
#define DEMO_CONFIG(m)							\
	{								\
		.mode = LRB_MODE_##m,					\
		.alloc = LRB_ALLOC_PER_CPU,				\
		.wakeup = LRB_WAKEUP_BY_WRITER,				\
		.header = LRB_HEADER_COMPACT,				\
		.tsc_bits = 27,						\
		.cb.clock_read = lrb_clock_default,			\
	}

static const struct lrb_config discard_cfg = DEMO_CONFIG(DISCARD);
static const struct lrb_config overwrite_cfg = DEMO_CONFIG(OVERWRITE);

struct writer {
	pthread_t thread;
	struct lrb_chan *chan;
	unsigned int cpu;
	bool overwrite;
	unsigned long written;
	unsigned long dropped;
};

struct per_cpu_count {
	unsigned long read;
	unsigned long bytes;
	unsigned long lost_packets;
	uint64_t last_seq;
};

static volatile int stop;
static volatile int writers_done;

static long payload_size(const struct lrb_decoder *dec, uint32_t id,
			 const uint8_t *payload, unsigned long avail)
{
	return id == lrb_event_io_done.id ? (long)sizeof(struct io_done) : -1;
}

static const struct lrb_decoder decoder = {
	.header = LRB_HEADER_COMPACT,
	.tsc_bits = 27,
	.payload_size = payload_size,
};

static int log_io(struct writer *w, const struct io_done *ev)
{
	if (w->overwrite)
		return lrb_write_io_done(&overwrite_cfg, w->chan, ev->seq,
					 ev->cpu, ev->bytes, ev->latency_ns);
	return lrb_write_io_done(&discard_cfg, w->chan, ev->seq, ev->cpu,
				 ev->bytes, ev->latency_ns);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct io_done ev = { .cpu = w->cpu };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	lrb_thread_init();
	while (!stop) {
		ev.seq++;
		ev.bytes = 512 << (ev.seq & 7);
		ev.latency_ns = 20000 + (ev.seq * 7919) % 50000;
		if (log_io(w, &ev))
			w->dropped++;
		else
			w->written++;
	}
	return NULL;
}

static int drain_packet(struct lrb_chan *chan, struct lrb_subbuf *sb,
			uint8_t *packet, struct per_cpu_count *count)
{
	struct lrb_packet_iter it;
	struct lrb_record rec;
	struct io_done ev;
	int ret;

	lrb_subbuf_copy(chan, sb, 0, packet, sb->packet_size);
	ret = lrb_packet_open(&it, &decoder, packet, sb->packet_size);
	while (!ret && (ret = lrb_packet_next(&it, &rec)) > 0) {
		memcpy(&ev, rec.payload, sizeof(ev));
		count->read++;
		count->last_seq = ev.seq;
		ret = 0;
	}
	if (ret < 0) {
		fprintf(stderr, "demo: corrupt packet %llu: %s at offset %lu\n",
			(unsigned long long)sb->seq, it.error, it.error_offset);
		return ret;
	}
	count->bytes += sb->content_size;
	return 0;
}

/* Take every complete packet of every buffer; returns packets taken. */
static long drain_all(struct lrb_chan *chan, unsigned int nr_cpus, uint8_t *packet,
		      struct per_cpu_count *counts, uint64_t *next_seq)
{
	struct lrb_subbuf sb;
	unsigned int cpu;
	long taken = 0;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		struct lrb_buf *buf = lrb_channel_nth_buf(chan, cpu);

		while (!lrb_get_next_subbuf(buf, &sb)) {
			counts[cpu].lost_packets += sb.seq - next_seq[cpu];
			next_seq[cpu] = sb.seq + 1;
			if (drain_packet(chan, &sb, packet, &counts[cpu]))
				exit(1);
			lrb_put_subbuf(buf, &sb);
			taken++;
		}
	}
	return taken;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: demo [--seconds N] [--mode discard|overwrite] [--subbuf-size BYTES] [--subbufs N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'm' },
		{ "subbuf-size", required_argument, NULL, 'b' },
		{ "subbufs", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct lrb_chan_attr attr = {
		.subbuf_size = 64 * 1024,
		.num_subbuf = 16,
		.nr_cpus = lrb_possible_cpus(),
	};
	unsigned long total_w = 0, total_r = 0, total_l = 0, total_p = 0;
	unsigned long total_d = 0, total_o = 0;
	unsigned int cpu, nr_cpus = attr.nr_cpus, seconds = 5;
	struct per_cpu_count *counts;
	struct timespec t0, t1;
	struct writer *writers;
	bool overwrite = false;
	struct lrb_chan *chan;
	uint64_t *next_seq;
	double elapsed;
	uint8_t *packet;
	int c, ret;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = atoi(optarg);
			break;
		case 'm':
			if (strcmp(optarg, "overwrite") && strcmp(optarg, "discard"))
				usage();
			overwrite = !strcmp(optarg, "overwrite");
			break;
		case 'b':
			attr.subbuf_size = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			attr.num_subbuf = strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}

	ret = lrb_channel_create(overwrite ? &overwrite_cfg : &discard_cfg,
				 &attr, &chan);
	if (ret) {
		fprintf(stderr,
			"demo: cannot create the channel: %s (sub-buffer size and count must be powers of two, size >= 4096)\n",
			strerror(-ret));
		return 1;
	}
	writers = calloc(nr_cpus, sizeof(*writers));
	counts = calloc(nr_cpus, sizeof(*counts));
	next_seq = calloc(nr_cpus, sizeof(*next_seq));
	packet = malloc(attr.subbuf_size);
	if (!writers || !counts || !next_seq || !packet)
		return 1;
	for (cpu = 0; cpu < nr_cpus; cpu++)
		lrb_reader_open(lrb_channel_nth_buf(chan, cpu));

	printf("lrb demo: %u writer threads (one per CPU), %s mode, %u x %lu KiB sub-buffers per CPU, %u s\n",
	       nr_cpus, overwrite ? "overwrite" : "discard",
	       (unsigned int)attr.num_subbuf, attr.subbuf_size / 1024,
	       seconds);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		writers[cpu] = (struct writer){ .chan = chan, .cpu = cpu,
						.overwrite = overwrite };
		pthread_create(&writers[cpu].thread, NULL, writer_main,
			       &writers[cpu]);
	}
	do {
		/* a flight recorder is read once, at the end */
		if (overwrite)
			usleep(100000);
		else if (!drain_all(chan, nr_cpus, packet, counts, next_seq))
			usleep(1000);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (t1.tv_sec - t0.tv_sec < seconds);
	stop = 1;
	for (cpu = 0; cpu < nr_cpus; cpu++)
		pthread_join(writers[cpu].thread, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	lrb_channel_flush(chan);
	drain_all(chan, nr_cpus, packet, counts, next_seq);
	elapsed = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;

	printf("\n%4s %14s %14s %12s %10s %10s %9s\n", "cpu", "written",
	       "read", "lost", "lost pkts", "Mrec/s", "MB/s");
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		struct lrb_buf *buf = lrb_channel_nth_buf(chan, cpu);
		struct lrb_buf_counters st;

		lrb_buf_stats(buf, &st);
		printf("%4u %14lu %14lu %12lu %10llu %10.2f %9.1f\n", cpu,
		       writers[cpu].written, counts[cpu].read, lrb_buf_lost(buf),
		       (unsigned long long)st.lost_packets, writers[cpu].written / elapsed / 1e6,
		       counts[cpu].bytes / elapsed / 1e6);
		total_w += writers[cpu].written;
		total_r += counts[cpu].read;
		total_l += lrb_buf_lost(buf);
		total_p += st.lost_packets;
		total_o += st.lost_overwrite;
		total_d += writers[cpu].dropped;
		/* the buffer's own count: right even if a writer migrated */
		if (st.records_written != counts[cpu].read + st.lost_overwrite) {
			printf("demo: cpu %u: ACCOUNTING MISMATCH: %llu records written != %lu read + %llu overwritten\n",
			       cpu, (unsigned long long)st.records_written,
			       counts[cpu].read,
			       (unsigned long long)st.lost_overwrite);
			return 1;
		}
		if (st.lost_packets != counts[cpu].lost_packets) {
			printf("demo: cpu %u: %lu packets missing from the sequence, %llu counted lost\n",
			       cpu, counts[cpu].lost_packets,
			       (unsigned long long)st.lost_packets);
			return 1;
		}
		lrb_reader_close(buf);
	}
	printf("%4s %14lu %14lu %12lu %10lu %10.2f\n", "all", total_w, total_r,
	       total_l, total_p, total_w / elapsed / 1e6);
	if (total_d != total_l - total_o) {
		printf("\ndemo: ACCOUNTING MISMATCH: writers saw %lu drops, buffers counted %lu\n",
		       total_d, total_l - total_o);
		return 1;
	}
	if (overwrite && total_w != total_r + total_o) {
		printf("\ndemo: ACCOUNTING MISMATCH: written %lu != read %lu + overwritten %lu\n",
		       total_w, total_r, total_o);
		return 1;
	} else if (overwrite) {
		printf("\nflight recorder: the newest %lu records survived; %lu older packets holding %lu records were overwritten, as counted: written = read + lost\n",
		       total_r, total_p, total_o);
	} else if (total_w != total_r) {
		printf("\ndemo: ACCOUNTING MISMATCH: written %lu != read %lu\n",
		       total_w, total_r);
		return 1;
	} else {
		printf("\nexact accounting: every record written was read (%lu); %lu records were dropped and counted while the consumer lagged\n",
		       total_r, total_l);
	}
	lrb_channel_destroy(chan);
	free(packet);
	free(next_seq);
	free(counts);
	free(writers);
	return 0;
}
