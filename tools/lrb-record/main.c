// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-record CHANNEL [-o DIR | --relayd URL [--live[=PERIOD]] [--session NAME]]
 *	[--consumer splice|mmap|read] [--duration SECONDS] [--snapshot]
 *	[--cpus LIST] [--quiet] [--max-size SIZE [--max-files N]]
 *	[--rotate-size SIZE] [--rotate-time S]
 *
 * Records every CPU of /dev/lrb/CHANNEL into a trace directory (metadata,
 * CHANNEL_<cpu> stream files, .lrb-record.json) or to lttng-relayd, one
 * thread per CPU, until the channel is destroyed, the duration is over or
 * a SIGINT/SIGTERM; then every buffer is flushed and drained. This file:
 * options, setup, the main thread (signals, timer, progress) and the end.
 * Documentation/tools/lrb-record.rst is the manual.
 */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define REC_PROGRESS_NS 500000000ULL
/* --live without a period: lttng's default live timer, 1 s */
#define REC_LIVE_PERIOD_S 1.0
/*
 * The bounds of --live: relayd takes the period in microseconds in 32
 * bits (4294 s at most); below 10 ms, flushing every CPU and sending
 * beacons would be most of the work.
 */
#define REC_LIVE_MIN_S 0.01
#define REC_LIVE_MAX_S 3600.0
/* The bounds of --duration: a millisecond, some 31 years. */
#define REC_DURATION_MIN_S 0.001
#define REC_DURATION_MAX_S 1e9

static void rec_usage(FILE *f)
{
	fputs("usage: lrb-record CHANNEL [-o DIR | --relayd URL [--live[=PERIOD]]\n"
	      "                  [--session NAME]] [--consumer splice|mmap|read]\n"
	      "                  [--duration SECONDS] [--snapshot] [--cpus LIST] [--quiet]\n"
	      "                  [--max-size SIZE [--max-files N]] [--rotate-size SIZE]\n"
	      "                  [--rotate-time SECONDS]\n"
	      "Record every CPU of the lrb channel /dev/lrb/CHANNEL into a CTF trace directory.\n"
	      "  -o, --output DIR     trace directory (default: CHANNEL-YYYYMMDD-HHMMSS)\n"
	      "  -r, --relayd URL     send the trace to lttng-relayd instead:\n"
	      "                       net://HOST[:CONTROL_PORT[:DATA_PORT]] (ports 5342, 5343)\n"
	      "  -l, --live[=PERIOD]  with --relayd: a live session, packets closed and quiet\n"
	      "                       CPUs announced every PERIOD seconds (default 1,\n"
	      "                       0.01 to 3600)\n"
	      "  -S, --session NAME   with --relayd: the session name (default\n"
	      "                       CHANNEL-YYYYMMDD-HHMMSS)\n"
	      "  -c, --consumer HOW   splice (default, zero copy), mmap or read; with\n"
	      "                       --relayd mmap (default) or read\n"
	      "  -d, --duration SECS  stop after SECS seconds (default: when the channel is\n"
	      "                       destroyed, or on SIGINT/SIGTERM)\n"
	      "  -s, --snapshot       take a flight recorder's current contents once, without\n"
	      "                       consuming them, and exit\n"
	      "  -C, --cpus LIST      record these CPUs only, e.g. 0,2-3\n"
	      "  -q, --quiet          no progress line or messages: errors and the summary\n"
	      "      --max-size SIZE  cut each CPU's stream into files CHANNEL_CPU_I of at most\n"
	      "                       SIZE bytes of whole packets (k, M, G: powers of 1024)\n"
	      "      --max-files N    keep each CPU's newest N files: the oldest is replaced\n"
	      "      --rotate-size SIZE, --rotate-time SECONDS\n"
	      "                       trace chunks as lttng rotate makes them: a new one when\n"
	      "                       this much is written or this long has passed; finished\n"
	      "                       ones in DIR/archives/BEGIN-END-ID, each a trace\n"
	      "  -h, --help           this help\n"
	      "Exit status: 0 success, 1 error, 2 usage error.\n", f);
}

static void rec_parse(struct rec *r, int argc, char **argv, bool *cpus,
		      bool *have_cpus, const char **session)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "relayd", required_argument, NULL, 'r' },
		{ "live", optional_argument, NULL, 'l' },
		{ "session", required_argument, NULL, 'S' },
		{ "consumer", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "snapshot", no_argument, NULL, 's' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "max-size", required_argument, NULL, REC_OPT_MAX_SIZE },
		{ "max-files", required_argument, NULL, REC_OPT_MAX_FILES },
		{ "rotate-size", required_argument, NULL, REC_OPT_ROTATE_SIZE },
		{ "rotate-time", required_argument, NULL, REC_OPT_ROTATE_TIME },
		{ NULL, 0, NULL, 0 },
	};
	bool have_consumer = false;
	unsigned int i;
	int opt;

	while ((opt = getopt_long(argc, argv, "o:r:l::S:c:d:sC:qh", opts,
				  NULL)) != -1) {
		switch (opt) {
		case 'o':
			r->dir = optarg;
			break;
		case 'r':
			r->relayd = optarg;
			break;
		case 'l':
			r->live = REC_LIVE_PERIOD_S;
			if (optarg && tool_parse_seconds(optarg, REC_LIVE_MIN_S,
							 REC_LIVE_MAX_S,
							 &r->live))
				tool_usage_error("--live=%s: want a period in seconds from %g to %g, e.g. --live=0.5",
						 optarg, REC_LIVE_MIN_S,
						 REC_LIVE_MAX_S);
			break;
		case 'S':
			*session = optarg;
			break;
		case 'c':
			for (i = 0; i < TOOL_ARRAY_SIZE(rec_consumer_names); i++)
				if (!strcmp(optarg, rec_consumer_names[i]))
					break;
			if (i == TOOL_ARRAY_SIZE(rec_consumer_names))
				tool_usage_error("--consumer %s: use splice, mmap or read",
						 optarg);
			r->consumer = i;
			have_consumer = true;
			break;
		case 'd':
			if (tool_parse_seconds(optarg, REC_DURATION_MIN_S,
					       REC_DURATION_MAX_S, &r->duration))
				tool_usage_error("--duration %s: want seconds from %g to %g, e.g. 10 or 0.5",
						 optarg, REC_DURATION_MIN_S,
						 REC_DURATION_MAX_S);
			break;
		case 's':
			r->snapshot = true;
			break;
		case 'C':
			if (tool_parse_cpus(optarg, cpus, TOOL_MAX_CPUS) <= 0)
				tool_usage_error("--cpus %s: want a list of CPUs below %u such as 0,2-3",
						 optarg, TOOL_MAX_CPUS);
			*have_cpus = true;
			break;
		case 'q':
			r->quiet = true;
			break;
		case 'h':
			rec_usage(stdout);
			exit(TOOL_EXIT_OK);
		default:
			if (!rec_rotate_option(r, opt, optarg))
				break;
			fprintf(stderr, "Try 'lrb-record --help' for more information.\n");
			exit(TOOL_EXIT_USAGE);
		}
	}
	if (optind == argc)
		tool_usage_error("give the CHANNEL to record (a directory of /dev/lrb)");
	if (optind != argc - 1)
		tool_usage_error("one CHANNEL only, options before or after it");
	r->chan = argv[optind];
	if (r->dir && r->relayd)
		tool_usage_error("-o DIR and --relayd URL exclude each other: record to a directory or send to lttng-relayd");
	if ((r->live || *session) && !r->relayd)
		tool_usage_error("--live and --session are for a recording sent to lttng-relayd: add --relayd URL");
	if (r->relayd && r->consumer == REC_SPLICE && have_consumer)
		tool_usage_error("--relayd takes each packet whole (its index follows it): use --consumer mmap or read");
	if (r->relayd && !have_consumer)
		r->consumer = REC_MMAP;
	if (r->live && r->snapshot)
		tool_usage_error("--snapshot takes the contents once: it is not a live session");
	/* a bad URL is a usage error, found before anything is opened */
	if (r->relayd && rec_relayd_parse(r->relayd, false))
		exit(TOOL_EXIT_USAGE);
	if (r->snapshot && r->duration)
		tool_usage_error("--snapshot takes the contents once: it has no --duration");
	if (r->snapshot && have_consumer)
		tool_usage_error("--snapshot always reads through mmap(): no --consumer");
	rec_rotate_check(r);
}

/* The CPUs to record, their files opened, their counters sampled. */
static void rec_open_cpus(struct rec *r, const bool *want, bool have_want)
{
	static bool present[TOOL_MAX_CPUS];
	unsigned int cpu, i = 0;
	int n = lrb_chan_cpus(r->chan, present, TOOL_MAX_CPUS);

	if (n < 0)
		exit(TOOL_EXIT_ERROR);
	for (cpu = 0; have_want && cpu < TOOL_MAX_CPUS; cpu++)
		if (want[cpu] && (cpu >= (unsigned int)n || !present[cpu]))
			tool_die("--cpus: channel %s has no cpu%u (its cpu files: cpu0 to cpu%d)",
				 r->chan, cpu, n - 1);
	r->cpus = calloc(n, sizeof(*r->cpus));
	if (!r->cpus)
		tool_die("out of memory");
	for (cpu = 0; cpu < (unsigned int)n; cpu++) {
		struct rec_cpu *c = &r->cpus[i];

		if (!present[cpu] || (have_want && !want[cpu]))
			continue;
		c->r = r;
		c->cpu = cpu;
		c->out = -1;
		memset(c->pipe, -1, sizeof(c->pipe));
		memset(c->peek, -1, sizeof(c->peek));
		trace_stream_name(c->name, sizeof(c->name), r->chan, cpu);
		c->fd = lrb_cpu_open(r->chan, cpu, O_NONBLOCK, &c->info);
		if (c->fd < 0)
			exit(TOOL_EXIT_ERROR);
		if (ioctl(c->fd, LRB_IOC_GET_COUNTERS, &c->c0) ||
		    ioctl(c->fd, LRB_IOC_GET_POSITIONS, &c->pos0))
			tool_die("cpu%u: LRB_IOC_GET_COUNTERS/GET_POSITIONS: %s",
				 cpu, strerror(errno));
		if (c->info.subbuf_size < TOOL_PAGE_SIZE ||
		    c->info.subbuf_size & (c->info.subbuf_size - 1))
			tool_die("cpu%u: subbuf_size %llu is not a power of two of at least a page: lrb.ko and these tools disagree on the ABI",
				 cpu, (unsigned long long)c->info.subbuf_size);
		i++;
	}
	r->ncpu = i;
}

static void rec_stop(struct rec *r, const char *reason)
{
	if (r->stop)
		return;
	r->stop_reason = reason;
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	/* never read: stays readable, so every poll() returns */
	if (write(r->wake[1], "s", 1) != 1)
		tool_err("cannot wake the consumers: %s", strerror(errno));
}

/* Wait for the consumers, stopping them on a signal or at the end. */
static void rec_wait(struct rec *r)
{
	__u64 now, wait, deadline = 0, next = r->t_start + REC_PROGRESS_NS;
	sigset_t set;
	unsigned int i;
	int sig;

	if (r->duration)
		deadline = r->t_start + (__u64)(r->duration * 1e9);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	while (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) < r->ncpu) {
		struct timespec ts;

		now = tool_now_ns();
		wait = next > now ? next - now : 0;
		if (r->rot.chunks && wait > REC_ROTATE_POLL_MS * 1000000ULL)
			wait = REC_ROTATE_POLL_MS * 1000000ULL;
		if (deadline && !r->stop && deadline < now + wait)
			wait = deadline > now ? deadline - now : 0;
		ts.tv_sec = wait / 1000000000ULL;
		ts.tv_nsec = wait % 1000000000ULL;
		sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM) {
			if (r->stop) {
				rec_progress(r, true);
				tool_die("%s again while draining: exiting at once; the last packets of the stream files may be cut short",
					 sig == SIGINT ? "SIGINT" : "SIGTERM");
			}
			rec_stop(r, sig == SIGINT ? "SIGINT" : "SIGTERM");
			if (!r->quiet) {
				rec_progress(r, true);
				tool_err("%s: flushing and draining every CPU (again to abort)",
					 r->stop_reason);
			}
		}
		now = tool_now_ns();
		if (deadline && now >= deadline)
			rec_stop(r, "duration");
		for (i = 0; i < r->ncpu; i++)
			if (__atomic_load_n(&r->cpus[i].failed,
					    __ATOMIC_RELAXED))
				rec_stop(r, "error");
		rec_rotate_tick(r);
		if (r->failed)
			rec_stop(r, "error");
		if (now >= next) {
			rec_progress(r, false);
			next = now + REC_PROGRESS_NS;
		}
	}
}

static void rec_run(struct rec *r)
{
	sigset_t set;
	unsigned int i;

	for (i = 0; i < r->ncpu; i++)
		if (rec_consumer_setup(&r->cpus[i]))
			exit(TOOL_EXIT_ERROR);
	if (pipe2(r->wake, O_CLOEXEC))
		tool_die("pipe: %s", strerror(errno));
	/*
	 * A shell without job control starts background commands with
	 * SIGINT ignored, so that a kill -INT would be lost: take it back.
	 * The consumers inherit the mask: only this thread takes signals.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	r->main_thread = pthread_self();
	r->t_start = tool_now_ns();
	for (i = 0; i < r->ncpu; i++) {
		r->cpus[i].t_start = r->t_start;
		errno = pthread_create(&r->cpus[i].tid, NULL,
				       rec_consume_thread, &r->cpus[i]);
		if (errno)
			tool_die("cannot start a thread: %s", strerror(errno));
	}
	if (!r->quiet && r->duration)
		tool_err("recording %u CPU%s of %s by %s %s %s for %g s; Ctrl-C stops",
			 r->ncpu, r->ncpu == 1 ? "" : "s", r->chan,
			 rec_consumer_names[r->consumer],
			 r->relayd ? "to" : "into",
			 r->relayd ? rec_relayd_peer() : r->dir, r->duration);
	else if (!r->quiet)
		tool_err("recording %u CPU%s of %s by %s %s %s until the channel is destroyed; Ctrl-C stops",
			 r->ncpu, r->ncpu == 1 ? "" : "s", r->chan,
			 rec_consumer_names[r->consumer],
			 r->relayd ? "to" : "into",
			 r->relayd ? rec_relayd_peer() : r->dir);
	rec_wait(r);
	for (i = 0; i < r->ncpu; i++)
		pthread_join(r->cpus[i].tid, NULL);
	r->t_end = tool_now_ns();
	/* interruptible again (relayd may take long to answer) */
	signal(SIGUSR1, SIG_IGN);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (!r->stop_reason)
		r->stop_reason = "end of channel";
	rec_progress(r, true);
	for (i = 0; i < r->ncpu; i++)
		rec_consumer_cleanup(&r->cpus[i]);
}

static void rec_snapshot(struct rec *r)
{
	unsigned int i;

	r->stop_reason = "snapshot";
	r->t_start = tool_now_ns();
	for (i = 0; i < r->ncpu; i++) {
		rec_snapshot_cpu(&r->cpus[i]);
	}
	r->t_end = tool_now_ns();
}

/* .lrb-record.json beside the trace; relayd takes stream files only. */
static void rec_finish(struct rec *r)
{
	size_t len = 0;
	char *json;
	int fd;

	if (r->relayd) {
		if (rec_relayd_close(r))
			r->failed = true;
		return;
	}
	json = rec_json(r, &len);
	if (!json)
		tool_die("out of memory for the summary");
	fd = trace_file_create(r->dirfd, TRACE_SUMMARY);
	if (fd < 0 || tool_write_full(fd, json, len) || close(fd)) {
		tool_err("cannot write %s/%s: %s", r->dir, TRACE_SUMMARY,
			 strerror(errno));
		r->failed = true;
	}
	free(json);
	close(r->dirfd);
}

int main(int argc, char **argv)
{
	static bool want[TOOL_MAX_CPUS];
	struct rec r = { .consumer = REC_SPLICE, .dirfd = -1 };
	char path[4096], defdir[256];
	const char *session = NULL;
	bool have_want = false;
	struct timespec now;
	unsigned int i;

	tool_name = "lrb-record";
	rec_parse(&r, argc, argv, want, &have_want, &session);
	r.progress = !r.quiet && !r.snapshot && isatty(STDERR_FILENO);
	clock_gettime(CLOCK_REALTIME, &now);
	r.start_realtime = now.tv_sec + now.tv_nsec / 1e9;
	if (!r.dir && !session) {
		struct tm tm;

		localtime_r(&now.tv_sec, &tm);
		snprintf(defdir, sizeof(defdir), "%s-", r.chan);
		strftime(defdir + strlen(defdir),
			 sizeof(defdir) - strlen(defdir), "%Y%m%d-%H%M%S",
			 &tm);
		r.dir = defdir;
	}
	/* a relayd that goes away is an error to report, not a signal */
	signal(SIGPIPE, SIG_IGN);

	rec_open_cpus(&r, want, have_want);
	if (!lrb_chan_path(path, sizeof(path), r.chan, TRACE_METADATA))
		tool_die("channel name '%s' is too long", r.chan);
	r.metadata = tool_read_file(path, &r.metadata_len);
	if (!r.metadata)
		tool_die("%s: %s: the channel's CTF metadata is needed to read the trace",
			 path, strerror(errno));
	if (r.relayd) {
		if (rec_relayd_open(&r, session ? session : r.dir, session))
			exit(TOOL_EXIT_ERROR);
		r.dir = NULL;
	} else {
		rec_open_dir(&r);
	}

	if (r.snapshot)
		rec_snapshot(&r);
	else
		rec_run(&r);
	for (i = 0; i < r.ncpu; i++) {
		if (r.cpus[i].failed)
			r.failed = true;
		if (r.cpus[i].out >= 0 && close(r.cpus[i].out)) {
			tool_err("writing %s/%s: %s", r.dir, r.cpus[i].name,
				 strerror(errno));
			r.failed = true;
		}
	}
	if (!r.relayd && rec_rotate_finish(&r))
		r.failed = true;
	rec_finish(&r);
	for (i = 0; i < r.ncpu; i++)
		close(r.cpus[i].fd);
	rec_summary(&r, stdout);
	if (r.failed)
		tool_err("the recording is incomplete: see the errors above");
	return r.failed ? TOOL_EXIT_ERROR : TOOL_EXIT_OK;
}
