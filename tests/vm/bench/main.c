// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-consumer-bench: consumer throughput of lrb.ko's per-CPU files, run in
 * the VM by tests/vm/bench/10-consumer.sh with the test client loaded
 * (mode=discard autostart=0, task writers only).
 *
 *   lrb-consumer-bench [--chan NAME] [--rounds N] [--dir DIR] [--out FILE]
 *                      [--timeout S]
 *
 * Each fill: the client's writers fill every CPU's ring, then stop, and the
 * packet each was filling is closed (fill.c). Then each CPU's ring is
 * drained by one consumer into one destination, one CPU after the other,
 * by this thread pinned to that CPU; only the drain is timed, from the
 * first consuming call to the return of the call that finds no packet
 * left, every byte then delivered to the destination (drain.c). A round is
 * one fill for each (consumer, destination) pair in turn, so that drifts of
 * a shared host reach them all alike; the first CPU drained turns with
 * every fill. A CPU's figure is the best MB/s of its --rounds drains
 * (default 20) for the pair, after a round not counted (report.c says
 * why the best).
 *
 * The table and BENCH lines go to --out (default stdout); the checks and
 * "vmtest consumer-bench: N passed, M failed" to stdout; the exit status
 * is non-zero on a failure, and then no figure is printed.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/**
 * struct cb_opts - command line
 * @chan: the client's channel
 * @rounds: fills per (consumer, destination)
 * @dir: a tmpfs directory for the file destination
 * @out: where the table and BENCH lines go, NULL for stdout
 * @timeout_s: longest wait for a fill
 */
struct cb_opts {
	const char *chan;
	unsigned int rounds;
	const char *dir;
	const char *out;
	unsigned int timeout_s;
};

static struct cb_cpu cb_cpus[VC_MAX_CPUS];
static struct cb_total cb_totals[CB_NR_VIA][CB_NR_DEST][VC_MAX_CPUS];

static void cb_usage(FILE *f)
{
	fprintf(f, "usage: lrb-consumer-bench [--chan NAME] [--rounds N] [--dir DIR] [--out FILE] [--timeout S]\n");
}

static void cb_parse(int argc, char **argv, struct cb_opts *o)
{
	static const struct option longopts[] = {
		{ "chan", required_argument, NULL, 'c' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "dir", required_argument, NULL, 'd' },
		{ "out", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int opt;

	*o = (struct cb_opts){ .chan = "vmtest", .rounds = 20, .dir = "/tmp",
			       .timeout_s = 60 };
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			o->chan = optarg;
			break;
		case 'r':
			o->rounds = strtoul(optarg, NULL, 10);
			break;
		case 'd':
			o->dir = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 't':
			o->timeout_s = strtoul(optarg, NULL, 10);
			break;
		case 'h':
			cb_usage(stdout);
			exit(0);
		default:
			cb_usage(stderr);
			exit(2);
		}
	}
	if (optind < argc || !o->rounds || !o->timeout_s) {
		fprintf(stderr, "lrb-consumer-bench: --rounds and --timeout must be positive numbers; no other arguments\n");
		cb_usage(stderr);
		exit(2);
	}
}

/* One fill, every CPU's ring drained by @via into @dest, into @t. */
static int cb_fill_drain(struct vc_chan *ch, const struct cb_opts *o,
			 const struct cb_sinks *s, unsigned int fill,
			 enum cb_via via, enum cb_dest dest,
			 struct cb_total t[VC_MAX_CPUS])
{
	unsigned int k, cpu;

	if (cb_fill(ch, o->timeout_s))
		return -1;
	for (k = 0; k < ch->ncpu; k++) {
		cpu = (fill + k) % ch->ncpu;
		if (cb_drain_timed(&cb_cpus[cpu], via, dest, s, &t[cpu]))
			return -1;
	}
	return 0;
}

/* Room for every drain's figure: @fills per CPU in each of @t. */
static int cb_alloc(struct cb_total *t, unsigned int n, unsigned int fills)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		t[i].mbps = calloc(fills, sizeof(*t[i].mbps));
		if (!t[i].mbps) {
			vc_fail("out of memory for %u figures", fills);
			return -1;
		}
	}
	return 0;
}

/*
 * Round 0, the first use of the rings, pipes, mappings and file, is not
 * counted: its figures are dropped when round 1 starts.
 */
static int cb_run(struct vc_chan *ch, const struct cb_opts *o,
		  const struct cb_sinks *s)
{
	unsigned int r, via, dest, cpu, fill = 0;
	struct cb_total *t;

	for (dest = 0; dest < CB_NR_DEST; dest++)
		for (via = 0; via < CB_NR_VIA; via++)
			if (cb_alloc(cb_totals[via][dest], ch->ncpu, o->rounds))
				return -1;
	for (r = 0; r <= o->rounds; r++) {
		for (dest = 0; dest < CB_NR_DEST; dest++) {
			for (via = 0; via < CB_NR_VIA; via++) {
				t = cb_totals[via][dest];
				for (cpu = 0; r == 1 && cpu < ch->ncpu; cpu++) {
					t[cpu].bytes = 0;
					t[cpu].fills = 0;
				}
				if (cb_fill_drain(ch, o, s, fill++, via, dest, t))
					return -1;
			}
		}
		vc_info("round %u of %u done (round 0 not counted)", r,
			o->rounds);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cb_sinks sinks;
	struct cb_opts o;
	struct vc_chan ch;
	unsigned int cpu;
	FILE *out = stdout;

	cb_parse(argc, argv, &o);
	vc_test = "consumer-bench";
	vc_load_layout(o.chan);
	if (vc_chan_open(&ch, o.chan, O_RDONLY | O_NONBLOCK))
		return vc_report();
	if (!vc_check(ch.info[0].mode == LRB_ABI_MODE_DISCARD,
		      "channel %s is in mode %u: load the client with mode=discard",
		      o.chan, ch.info[0].mode) ||
	    cb_sinks_open(&sinks, o.dir))
		return vc_report();
	for (cpu = 0; cpu < ch.ncpu; cpu++)
		if (cb_cpu_setup(&cb_cpus[cpu], cpu, ch.fd[cpu], &ch.info[cpu]))
			return vc_report();
	if (o.out) {
		out = fopen(o.out, "w");
		if (!out) {
			vc_fail("cannot write %s: %s", o.out, strerror(errno));
			return vc_report();
		}
	}
	vc_info("%u rounds of %u fills on %u CPUs", o.rounds,
		CB_NR_VIA * CB_NR_DEST, ch.ncpu);
	cb_run(&ch, &o, &sinks);
	for (cpu = 0; cpu < ch.ncpu; cpu++) {
		vc_info("cpu%u: %llu packets, %llu records drained to tmpfs verified",
			cpu, (ull)cb_cpus[cpu].st.packets,
			(ull)cb_cpus[cpu].st.records);
		vc_stream_report(&cb_cpus[cpu].st, false);
	}
	if (!vc_failed())
		cb_report(out, cb_totals, ch.ncpu, &ch.info[0]);
	if (out != stdout && fclose(out))
		vc_fail("writing %s: %s", o.out, strerror(errno));
	unlink(sinks.tmpfs_path);
	return vc_report();
}
