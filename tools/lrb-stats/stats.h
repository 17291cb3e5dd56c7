/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb-stats: a channel's counters (/dev/lrb/<channel>/stats, one line per
 * CPU and a total; Documentation/abi.rst) read into a sample, printed as
 * a table or JSON, with rates between two samples.
 */
#ifndef _LRB_STATS_H
#define _LRB_STATS_H

#include "tool.h"

/**
 * struct stats_sample - one read of a stats file
 * @nr: CPU lines
 * @cpu: their CPU numbers
 * @c: their counters
 * @total: the total line
 * @ns: when it was read (CLOCK_MONOTONIC)
 */
struct stats_sample {
	unsigned int nr;
	int cpu[TOOL_MAX_CPUS];
	struct lrb_buf_counters c[TOOL_MAX_CPUS];
	struct lrb_buf_counters total;
	__u64 ns;
};

/*
 * Read @path into @s. 0; -1 with errno ENOENT if the file is gone (the
 * channel was destroyed); -1 after printing why otherwise.
 */
int stats_read(const char *path, struct stats_sample *s);
/* The table; with rate columns if @rates (since @prev, "-" if NULL). */
void stats_print_table(FILE *f, const struct stats_sample *s,
		       const struct stats_sample *prev, bool rates);
/* One JSON document; with rates since @prev if not NULL. */
void stats_print_json(FILE *f, const char *chan, const struct stats_sample *s,
		      const struct stats_sample *prev);

#endif /* _LRB_STATS_H */
