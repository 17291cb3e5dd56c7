// SPDX-License-Identifier: GPL-2.0
/*
 * live-lag: how late a live viewer shows events. Reads the output of
 * "babeltrace2 --clock-seconds --input-format=lttng-live ..." on stdin as
 * it comes, copies it to --out FILE, and takes for every event line the
 * lag: CLOCK_REALTIME when the line was read minus the event's timestamp
 * (babeltrace2 prints it in seconds since the epoch, from the trace's
 * clock and its offset). Every event must arrive within --slack-us; the
 * maximum and the mean are reported. Ends at end of input (babeltrace2
 * exits when the session ends).
 */
#include "vmcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "[SECONDS.NANOSECONDS]" at the start of @line, in ns; 0 if none. */
static u64 live_ts(const char *line)
{
	unsigned long long s, ns;
	int n = 0;

	if (sscanf(line, "[%llu.%9llu]%n", &s, &ns, &n) != 2 || !n)
		return 0;
	return s * 1000000000ULL + ns;
}

int vc_cmd_live_lag(const struct vc_opts *o)
{
	u64 bound = (u64)o->slack_us * 1000, max = 0, sum = 0, events = 0;
	u64 late = 0, ts, now;
	char line[4096];
	struct timespec t;
	FILE *out = fopen(o->out, "w");

	if (!vc_check(out, "open %s", o->out))
		return vc_report();
	/* the scenario counts the lines while babeltrace2 runs */
	setvbuf(out, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		clock_gettime(CLOCK_REALTIME, &t);
		now = t.tv_sec * 1000000000ULL + t.tv_nsec;
		fputs(line, out);
		ts = live_ts(line);
		if (!ts)
			continue;
		events++;
		if (now > ts) {
			sum += now - ts;
			if (now - ts > max)
				max = now - ts;
			if (now - ts > bound)
				late++;
		}
	}
	vc_check(!fclose(out), "write %s", o->out);
	vc_info("%llu events, lag max %.3f s, mean %.3f s; %llu later than %.3f s",
		(ull)events, max / 1e9, events ? sum / 1e9 / events : 0,
		(ull)late, bound / 1e9);
	vc_check(events, "babeltrace2 showed events");
	vc_check(!late, "%llu events arrived later than %.3f s (max %.3f s)",
		 (ull)late, bound / 1e9, max / 1e9);
	return vc_report();
}
