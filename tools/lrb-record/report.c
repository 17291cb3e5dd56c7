// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-record's reports: the live progress line (stderr, a terminal only),
 * the final summary table and .lrb-record.json, with the same numbers.
 */
#include "record.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

const char *const rec_consumer_names[3] = {
	[REC_SPLICE] = "splice", [REC_MMAP] = "mmap", [REC_READ] = "read",
};

/* "1234", "12.3k", "4.56M", "7.89G": counts that fit the progress line. */
static const char *rec_human(char *buf, size_t len, __u64 v)
{
	if (v < 10000)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else if (v < 10000000)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else if (v < 10000000000ULL)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else
		snprintf(buf, len, "%.2fG", v / 1e9);
	return buf;
}

static __u64 rec_load(const __u64 *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

void rec_progress(struct rec *r, bool final)
{
	static __u64 prev_bytes, prev_ns;
	__u64 now = tool_now_ns(), bytes = 0, packets = 0, written = 0;
	char line[4096], losses[2048] = "", a[32], b[32];
	size_t cols = 80, used = 0;
	struct winsize ws;
	unsigned int i;
	double rate;

	if (!r->progress)
		return;
	if (final) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		return;
	}
	for (i = 0; i < r->ncpu; i++) {
		struct rec_cpu *c = &r->cpus[i];
		struct lrb_buf_counters k;
		__u64 lost, lostp;
		int n;

		bytes += rec_load(&c->bytes);
		packets += rec_load(&c->packets);
		if (ioctl(c->fd, LRB_IOC_GET_COUNTERS, &k))
			continue;
		written += k.records_written - c->c0.records_written;
		lost = lrb_counters_lost(&k) - lrb_counters_lost(&c->c0);
		lostp = k.lost_packets - c->c0.lost_packets;
		if (!lost && !lostp)
			continue;
		/* CPUs that lost something: records, then packets */
		n = snprintf(losses + used, sizeof(losses) - used,
			     " cpu%u:%s%s%s%s", c->cpu,
			     rec_human(a, sizeof(a), lost), lostp ? "+" : "",
			     lostp ? rec_human(b, sizeof(b), lostp) : "",
			     lostp ? "p" : "");
		if (n < 0 || (size_t)n >= sizeof(losses) - used)
			break;
		used += n;
	}
	if (!prev_ns)
		prev_ns = r->t_start;
	rate = tool_mbps(bytes - prev_bytes, now - prev_ns);
	prev_bytes = bytes;
	prev_ns = now;
	snprintf(line, sizeof(line),
		 "%s %.1fs: %s pkts %.1f MB %.2f MB/s %s rec; lost%s",
		 r->chan, (now - r->t_start) / 1e9,
		 rec_human(a, sizeof(a), packets), bytes / 1e6, rate,
		 rec_human(b, sizeof(b), written), used ? losses : " none");
	/* one line that never wraps, rewritten in place */
	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col > 10)
		cols = ws.ws_col;
	if (strlen(line) > cols - 1)
		line[cols - 1] = 0;
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
}

static double rec_secs(__u64 t0, __u64 t1)
{
	return t1 > t0 ? (t1 - t0) / 1e9 : 0;
}

/*
 * Per CPU, the packets relayd confirmed writing to its files and, if
 * others were sent, those: its files may hold them, all, some (the last
 * perhaps in part) or none. Confirmed is written with write(2), in
 * relayd's page cache: relayd never syncs, so it is on its disk only
 * once its kernel writes it back.
 */
static void rec_summary_relayd(struct rec *r, FILE *f)
{
	__u64 n, b, sn, sb;
	bool unconfirmed = false;
	unsigned int i;

	fprintf(f, "lttng-relayd %s: %s; confirmed packets/bytes:",
		rec_relayd_peer(), rec_relayd_output());
	for (i = 0; i < r->ncpu; i++) {
		n = rec_relayd_confirmed(&r->cpus[i], &b);
		if (rec_relayd_sent(&r->cpus[i], &sb) != n)
			unconfirmed = true;
		fprintf(f, " cpu%u=%llu/%llu", r->cpus[i].cpu,
			(unsigned long long)n, (unsigned long long)b);
	}
	fputs("\n(confirmed: written to relayd's files, in its page cache; on its disk once its system writes them back, lost if its machine goes down before)\n",
	      f);
	if (!unconfirmed)
		return;
	fputs("sent but not confirmed (relayd's files may hold all, some or none of them) packets/bytes:",
	      f);
	for (i = 0; i < r->ncpu; i++) {
		n = rec_relayd_confirmed(&r->cpus[i], &b);
		sn = rec_relayd_sent(&r->cpus[i], &sb);
		fprintf(f, " cpu%u=%llu/%llu", r->cpus[i].cpu,
			(unsigned long long)(sn - n),
			(unsigned long long)(sb - b));
	}
	fputc('\n', f);
}

void rec_summary(struct rec *r, FILE *f)
{
	struct lrb_buf_counters tot = { 0 };
	__u64 packets = 0, bytes = 0, skipped = 0;
	double secs = rec_secs(r->t_start, r->t_end);
	unsigned int i, k;

	fprintf(f, "lrb-record: channel %s, %u CPU%s, %s, %.2f s, stopped by %s; %s %s\n",
		r->chan, r->ncpu, r->ncpu == 1 ? "" : "s",
		r->snapshot ? "snapshot" : rec_consumer_names[r->consumer],
		secs, r->stop_reason, r->relayd ? "sent to" : "trace in",
		r->relayd ? rec_relayd_peer() : r->dir);
	fprintf(f, "%5s %9s %12s %8s %15s %10s %10s %9s %9s %12s%s\n", "cpu",
		"packets", "bytes", "MB/s", "records_written", "lost_full",
		"lost_wrap", "lost_big", "lost_nest", "lost_packets",
		r->snapshot ? "   skipped" : "");
	for (i = 0; i < r->ncpu; i++) {
		struct rec_cpu *c = &r->cpus[i];
		const __u64 *v = lrb_counters_array(&c->c1);
		__u64 *t = lrb_counters_array(&tot);

		for (k = 0; k < LRB_NR_COUNTERS; k++)
			t[k] += v[k];
		packets += c->packets;
		bytes += c->bytes;
		skipped += c->skipped;
		fprintf(f, "%5u %9llu %12llu %8.2f %15llu %10llu %10llu %9llu %9llu %12llu",
			c->cpu, (unsigned long long)c->packets,
			(unsigned long long)c->bytes,
			tool_mbps(c->bytes, c->t_end - c->t_start),
			(unsigned long long)c->c1.records_written,
			(unsigned long long)c->c1.lost_full,
			(unsigned long long)c->c1.lost_wrap,
			(unsigned long long)c->c1.lost_big,
			(unsigned long long)c->c1.lost_nest,
			(unsigned long long)c->c1.lost_packets);
		if (r->snapshot)
			fprintf(f, " %9llu", (unsigned long long)c->skipped);
		fputc('\n', f);
	}
	fprintf(f, "%5s %9llu %12llu %8.2f %15llu %10llu %10llu %9llu %9llu %12llu",
		"total", (unsigned long long)packets,
		(unsigned long long)bytes,
		tool_mbps(bytes, r->t_end - r->t_start),
		(unsigned long long)tot.records_written,
		(unsigned long long)tot.lost_full,
		(unsigned long long)tot.lost_wrap,
		(unsigned long long)tot.lost_big,
		(unsigned long long)tot.lost_nest,
		(unsigned long long)tot.lost_packets);
	if (r->snapshot)
		fprintf(f, " %9llu", (unsigned long long)skipped);
	fprintf(f, "\n(records_written and lost_*: the buffers' counters at the end, since the channel was created)\n");
	if (r->relayd)
		rec_summary_relayd(r, f);
	fflush(f);
}

static void rec_json_cpu(struct json *j, struct rec *r, struct rec_cpu *c)
{
	json_object(j, NULL);
	json_u64(j, "cpu", c->cpu);
	json_str(j, "file", c->name);
	json_u64(j, "packets", c->packets);
	json_u64(j, "bytes", c->bytes);
	json_double(j, "duration_s", rec_secs(c->t_start, c->t_end));
	json_double(j, "mb_per_s", tool_mbps(c->bytes, c->t_end - c->t_start));
	if (c->have_seq) {
		json_u64(j, "first_seq", c->first_seq);
		json_u64(j, "last_seq", c->last_seq);
		json_u64(j, "events_discarded", c->discarded);
	}
	json_u64(j, "seq_gaps", c->seq_gaps);
	if (r->rot.max_size) {
		/* of the last chunk, with --rotate-* */
		json_u64(j, "files", c->file_index + 1);
		json_u64(j, "files_removed", c->files_removed);
	}
	if (r->snapshot)
		json_u64(j, "skipped", c->skipped);
	if (r->consumer == REC_SPLICE && !r->snapshot)
		json_u64(j, "spliced_bytes", c->spliced);
	json_bool(j, "end_of_channel", c->eof);
	json_bool(j, "failed", c->failed);
	json_counters(j, "counters_start", &c->c0);
	json_counters(j, "counters_end", &c->c1);
	json_close(j);
}

char *rec_json(struct rec *r, size_t *len)
{
	struct lrb_buf_counters tot = { 0 };
	__u64 packets = 0, bytes = 0, *t = lrb_counters_array(&tot);
	const struct lrb_buf_info *info = &r->cpus[0].info;
	char *text = NULL;
	struct json j;
	unsigned int i, k;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	json_begin(&j, f);
	json_object(&j, NULL);
	json_str(&j, "tool", "lrb-record");
	json_u64(&j, "format", 1);
	json_str(&j, "channel", r->chan);
	json_str(&j, "mode", info->mode == LRB_ABI_MODE_OVERWRITE ?
		 "overwrite" : "discard");
	json_str(&j, "consumer", r->snapshot ? "snapshot" :
		 rec_consumer_names[r->consumer]);
	json_bool(&j, "snapshot", r->snapshot);
	json_str(&j, "output", r->dir);
	json_u64(&j, "subbuf_size", info->subbuf_size);
	json_u64(&j, "num_subbuf", info->num_subbuf);
	json_u64(&j, "clock_freq", info->clock_freq);
	json_double(&j, "start_time", r->start_realtime);
	json_double(&j, "duration_s", rec_secs(r->t_start, r->t_end));
	json_str(&j, "stopped_by", r->stop_reason);
	json_bool(&j, "complete", !r->failed);
	if (r->rot.max_size) {
		json_u64(&j, "max_size", r->rot.max_size);
		json_u64(&j, "max_files", r->rot.max_files);
	}
	if (r->rot.chunks)
		json_u64(&j, "chunks", r->rot.archived);
	json_array(&j, "cpus");
	for (i = 0; i < r->ncpu; i++) {
		struct rec_cpu *c = &r->cpus[i];
		const __u64 *v = lrb_counters_array(&c->c1);

		rec_json_cpu(&j, r, c);
		for (k = 0; k < LRB_NR_COUNTERS; k++)
			t[k] += v[k];
		packets += c->packets;
		bytes += c->bytes;
	}
	json_close(&j);
	json_object(&j, "total");
	json_u64(&j, "packets", packets);
	json_u64(&j, "bytes", bytes);
	json_double(&j, "mb_per_s", tool_mbps(bytes, r->t_end - r->t_start));
	json_u64(&j, "lost_records", lrb_counters_lost(&tot));
	for (k = 0; k < LRB_NR_COUNTERS; k++)
		json_u64(&j, lrb_counter_names[k], t[k]);
	json_close(&j);
	json_end(&j);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}
