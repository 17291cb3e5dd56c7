// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a stats file and printing it: a table with one row per CPU and
 * the total (records written, lost by cause, packets lost, MB produced
 * and consumed, packets and MB read, pages spliced), rates per second
 * between two samples, or JSON.
 */
#include "stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MB 1e6

int stats_read(const char *path, struct stats_sample *s)
{
	char *text = tool_read_file(path, NULL), *line, *save;
	unsigned int n = 0;
	bool total = false;
	int cpu;

	if (!text) {
		if (errno != ENOENT)
			tool_err("%s: %s", path, strerror(errno));
		return -1;
	}
	s->ns = tool_now_ns();
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		struct lrb_buf_counters c;

		/* a previous run's channel: what recovery kept, not counters */
		if (!strncmp(line, "recovery ", 9))
			continue;
		if (lrb_parse_stats_line(line, &cpu, &c)) {
			tool_err("%s: line %u is not a stats line ('%.60s'): are lrb.ko and lrb-stats of the same version?",
				 path, n + 1, line);
			goto fail;
		}
		if (cpu < 0) {
			s->total = c;
			total = true;
			continue;
		}
		if (s->nr == TOOL_MAX_CPUS) {
			tool_err("%s: more than %d CPU lines: only the first are shown",
				 path, TOOL_MAX_CPUS);
			continue;
		}
		s->cpu[s->nr] = cpu;
		s->c[s->nr++] = c;
	}
	if (!total) {
		tool_err("%s: no total line: are lrb.ko and lrb-stats of the same version?",
			 path);
		goto fail;
	}
	free(text);
	return 0;
fail:
	free(text);
	errno = EINVAL;
	return -1;
}

/* The same CPU in the previous sample, or NULL. */
static const struct lrb_buf_counters *prev_of(const struct stats_sample *prev,
					      int cpu)
{
	unsigned int i;

	if (!prev)
		return NULL;
	if (cpu < 0)
		return &prev->total;
	for (i = 0; i < prev->nr; i++)
		if (prev->cpu[i] == cpu)
			return &prev->c[i];
	return NULL;
}

/* Per second from @a to @b over @ns; counters never go down. */
static double rate(__u64 a, __u64 b, __u64 ns)
{
	return ns && b >= a ? (b - a) * 1e9 / ns : 0;
}

static void row(FILE *f, const char *label, const struct lrb_buf_counters *c,
		const struct lrb_buf_counters *p, __u64 ns, bool rates)
{
	fprintf(f, "%5s %12llu %8llu %7llu %7llu %7llu %8llu %10.2f %10.2f %9llu %9.2f %9llu",
		label, c->records_written, c->lost_full, c->lost_wrap,
		c->lost_big, c->lost_nest, c->lost_packets, c->produced / MB,
		c->consumed / MB, c->packets_read, c->bytes_read / MB,
		c->pages_spliced);
	if (rates && p)
		fprintf(f, " %11.0f %8.0f %8.2f %9.2f",
			rate(p->records_written, c->records_written, ns),
			rate(lrb_counters_lost(p), lrb_counters_lost(c), ns),
			rate(p->produced, c->produced, ns) / MB,
			rate(p->bytes_read, c->bytes_read, ns) / MB);
	else if (rates)
		fprintf(f, " %11s %8s %8s %9s", "-", "-", "-", "-");
	fputc('\n', f);
}

void stats_print_table(FILE *f, const struct stats_sample *s,
		       const struct stats_sample *prev, bool rates)
{
	__u64 ns = prev ? s->ns - prev->ns : 0;
	unsigned int i;
	char label[16];

	fprintf(f, "%5s %12s  %-30s %8s %10s %10s %9s %9s %9s%s\n",
		"", "records", "--------- records lost ---------", "packets",
		"produced", "consumed", "packets", "read", "pages",
		rates ? "   ------------ per second ------------" : "");
	fprintf(f, "%5s %12s %8s %7s %7s %7s %8s %10s %10s %9s %9s %9s",
		"cpu", "written", "full", "wrap", "big", "nest", "lost", "MB",
		"MB", "read", "MB", "spliced");
	if (rates)
		fprintf(f, " %11s %8s %8s %9s", "records", "lost", "MB in",
			"MB read");
	fputc('\n', f);
	for (i = 0; i < s->nr; i++) {
		snprintf(label, sizeof(label), "%d", s->cpu[i]);
		row(f, label, &s->c[i], prev_of(prev, s->cpu[i]), ns, rates);
	}
	row(f, "total", &s->total, prev_of(prev, -1), ns, rates);
}

static void json_rates(struct json *j, const struct lrb_buf_counters *c,
		       const struct lrb_buf_counters *p, __u64 ns)
{
	if (!p)
		return;
	json_object(j, "per_second");
	json_double(j, "records_written",
		    rate(p->records_written, c->records_written, ns));
	json_double(j, "lost", rate(lrb_counters_lost(p), lrb_counters_lost(c),
				    ns));
	json_double(j, "produced", rate(p->produced, c->produced, ns));
	json_double(j, "bytes_read", rate(p->bytes_read, c->bytes_read, ns));
	json_close(j);
}

void stats_print_json(FILE *f, const char *chan, const struct stats_sample *s,
		      const struct stats_sample *prev)
{
	__u64 ns = prev ? s->ns - prev->ns : 0;
	struct json j;
	unsigned int i;

	json_begin(&j, f);
	json_object(&j, NULL);
	json_str(&j, "channel", chan);
	json_array(&j, "cpus");
	for (i = 0; i < s->nr; i++) {
		json_object(&j, NULL);
		json_s64(&j, "cpu", s->cpu[i]);
		json_counters(&j, "counters", &s->c[i]);
		json_u64(&j, "lost", lrb_counters_lost(&s->c[i]));
		json_rates(&j, &s->c[i], prev_of(prev, s->cpu[i]), ns);
		json_close(&j);
	}
	json_close(&j);
	json_object(&j, "total");
	json_counters(&j, "counters", &s->total);
	json_u64(&j, "lost", lrb_counters_lost(&s->total));
	json_rates(&j, &s->total, prev_of(prev, -1), ns);
	json_close(&j);
	json_end(&j);
}
