// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-stats: print a channel's live counters (/dev/lrb/<channel>/stats)
 * as a table, once or refreshed every few seconds with rates.
 */
#include "stats.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"Usage: lrb-stats [OPTIONS] CHANNEL\n"
	"Print the counters of an lrb channel (/dev/lrb/CHANNEL/stats): per CPU\n"
	"and in total, records written and lost by cause, packets lost, MB\n"
	"produced and consumed, packets and MB read, pages spliced.\n"
	"\n"
	"  -w, --watch SECONDS  refresh every SECONDS, with rates, until Ctrl-C\n"
	"  -n, --count N        with --watch: stop after N refreshes\n"
	"  -j, --json           JSON instead of a table (one document per refresh)\n"
	"  -h, --help           this help\n"
	"\n"
	"$LRB_DEV_DIR replaces /dev/lrb. See Documentation/tools/lrb-stats.rst.\n";

/* The bounds of --watch: 10 ms, a day. */
#define STATS_WATCH_MIN_S 0.01
#define STATS_WATCH_MAX_S 86400.0

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Sleep @seconds unless a signal comes first. */
static void nap(double seconds)
{
	struct timespec ts = {
		.tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (time_t)seconds) * 1e9),
	};

	while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "watch", required_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct stats_sample samples[2];
	struct stats_sample *cur = &samples[0], *prev = NULL;
	bool json = false, tty = isatty(STDOUT_FILENO);
	__u64 count = 0, done = 0;
	char path[4096], dir[4096];
	double watch = 0;
	const char *chan;
	struct stat st;
	bool cpus[1];
	int c;

	tool_name = "lrb-stats";
	while ((c = getopt_long(argc, argv, "w:n:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (tool_parse_seconds(optarg, STATS_WATCH_MIN_S,
					       STATS_WATCH_MAX_S, &watch))
				tool_usage_error("--watch %s: expected seconds from %g to %g, such as 1 or 0.5",
						 optarg, STATS_WATCH_MIN_S,
						 STATS_WATCH_MAX_S);
			break;
		case 'n':
			if (tool_parse_u64(optarg, &count) || !count)
				tool_usage_error("--count %s: expected a number of refreshes",
						 optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return TOOL_EXIT_OK;
		default:
			tool_usage_error("unknown option");
		}
	}
	if (optind != argc - 1)
		tool_usage_error("expected one channel name (a directory of %s)",
				 lrb_dev_dir());
	chan = argv[optind];
	if (count && !watch)
		tool_usage_error("--count goes with --watch");
	if (!lrb_chan_path(dir, sizeof(dir), chan, NULL) ||
	    !lrb_chan_path(path, sizeof(path), chan, "stats"))
		tool_usage_error("channel name too long");
	if (strchr(chan, '/') || stat(dir, &st)) {
		/* says why, and lists the channels there are */
		lrb_chan_cpus(chan, cpus, 1);
		return TOOL_EXIT_ERROR;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (;;) {
		memset(cur, 0, sizeof(*cur));
		if (stats_read(path, cur)) {
			if (errno != ENOENT)
				return TOOL_EXIT_ERROR;
			if (!done) {
				tool_err("%s: No such file: is %s an lrb channel, and lrb.ko of the version of these tools?",
					 path, dir);
				return TOOL_EXIT_ERROR;
			}
			tool_err("channel %s is gone (destroyed, or its module unloaded)",
				 chan);
			return TOOL_EXIT_OK;
		}
		if (json) {
			stats_print_json(stdout, chan, cur, prev);
		} else {
			if (watch && tty)
				fputs("\033[H\033[2J", stdout);
			else if (done)
				fputc('\n', stdout);
			if (watch)
				printf("lrb-stats: %s, every %g s (Ctrl-C to stop)\n",
				       chan, watch);
			stats_print_table(stdout, cur, prev, watch > 0);
		}
		fflush(stdout);
		done++;
		if (!watch || stop || (count && done >= count))
			break;
		prev = cur;
		cur = &samples[done % 2];
		nap(watch);
		if (stop)
			break;
	}
	return ferror(stdout) ? TOOL_EXIT_ERROR : TOOL_EXIT_OK;
}
