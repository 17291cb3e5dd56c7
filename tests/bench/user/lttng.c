// SPDX-License-Identifier: GPL-2.0
/*
 * The LTTng-UST writer of the user-space benchmark: the same records as
 * liblrb's, through the lrb_bench:record tracepoint, into the session
 * tests/bench/user/run.sh sets up (a snapshot session, overwrite channel).
 */
#include <stdio.h>
#include <time.h>

#include "tp.h"

unsigned long bench_lttng_loop(unsigned long first, unsigned long n)
{
	struct bench_payload p = BENCH_PAYLOAD_INIT;
	unsigned long i;

	for (i = first; i < first + n; i++) {
		p.seq = i;
		lttng_ust_tracepoint(lrb_bench, record, &p);
	}
	return 0;
}

/**
 * bench_lttng_wait_enabled() - wait until a session records our tracepoint
 * @timeout_s: how long to wait
 *
 * liblttng-ust registers with the session daemon from its constructor,
 * which waits for the daemon's reply for LTTNG_UST_REGISTER_TIMEOUT ms, and
 * the daemon enables the tracepoint when its session holds the event. If
 * that wait timed out, registration still completes later: poll for it.
 *
 * Return: 0 once the tracepoint is enabled, -1 after @timeout_s seconds
 * (0: check once).
 */
int bench_lttng_wait_enabled(int timeout_s)
{
	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int i;

	for (i = 0;; i++) {
		if (lttng_ust_tracepoint_enabled(lrb_bench, record))
			return 0;
		if (i >= timeout_s * 100)
			return -1;
		nanosleep(&tick, NULL);
	}
}
