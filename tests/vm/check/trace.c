// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-vmcheck trace: verify trace directories written by lrb-record after
 * the fact, from their files alone: every packet and record of each CPU's
 * stream files (the directories concatenated in the order given, as one
 * consuming reader's stream), the numbers of their
 * lrb-record.json against what the files hold, and, for a recording from
 * the channel's creation to its destruction, the exact accounting against
 * the client's counts and a copy of the stats file taken once the writers
 * were stopped.
 *
 * With --snapshot (lrb-record --snapshot after ctl "stop"): the files hold
 * the whole ring, each packet once, ending with every context's last
 * attempt; with --live too (writers running), only the packets are
 * verified.
 */
#include "vmcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const vc_counter_key[12] = {
	"records_written", "lost_full", "lost_wrap", "lost_big",
	"lost_nest", "lost_packets", "produced", "consumed",
	"packets_read", "bytes_read", "pages_spliced", "lost_overwrite",
};

/**
 * struct vc_jcpu - one CPU of lrb-record.json
 * @valid: its object was found
 * @packets: packets recorded
 * @bytes: bytes recorded
 * @spliced: spliced_bytes, -1 if absent
 * @skipped: snapshot positions skipped
 * @start: counters_start
 * @end: counters_end
 */
struct vc_jcpu {
	bool valid;
	u64 packets;
	u64 bytes;
	long long spliced;
	u64 skipped;
	struct lrb_buf_counters start;
	struct lrb_buf_counters end;
};

/**
 * struct vc_json - what the checks need of lrb-record.json
 * @consumer: its consumer
 * @complete: its "complete"
 * @subbuf_size: sub-buffer size
 * @num_subbuf: sub-buffers
 * @stopped_by: why it stopped
 * @cpu: per CPU, by CPU number
 * @ncpu: highest CPU + 1
 */
struct vc_json {
	char consumer[32];
	bool complete;
	u64 subbuf_size;
	u64 num_subbuf;
	char stopped_by[64];
	struct vc_jcpu cpu[VC_MAX_CPUS];
	unsigned int ncpu;
};

/*
 * Parse lrb-record.json: one member per line, as the tool writes it.
 * Tracks the keys of the open objects to place each number.
 */
static int vc_json_load(const char *path, struct vc_json *j)
{
	char *text = vc_read_file(path, NULL), *line, *save = NULL;
	const char *stack[8];
	int depth = 0, cur = -1;

	memset(j, 0, sizeof(*j));
	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *key = NULL, *val, *q;
		size_t len;

		while (*line == ' ')
			line++;
		len = strlen(line);
		while (len && (line[len - 1] == ',' || line[len - 1] == ' '))
			line[--len] = 0;
		if (*line == '"') {
			key = line + 1;
			q = strchr(key, '"');
			if (!q)
				continue;
			*q = 0;
			val = q + 1;
			while (*val == ':' || *val == ' ')
				val++;
		} else {
			val = line;
		}
		if (*val == '{' || *val == '[') {
			if (depth < 8)
				stack[depth] = key ? key : "";
			depth++;
			if (!key && depth == 3 && !strcmp(stack[1], "cpus"))
				cur = -2;	/* a cpu object, number to come */
			if (val[1] != '}' && val[1] != ']')
				continue;
			val++;
		}
		if (*val == '}' || *val == ']') {
			depth--;
			continue;
		}
		if (!key)
			continue;
		if (depth == 1) {
			if (!strcmp(key, "consumer"))
				sscanf(val, "\"%31[^\"]", j->consumer);
			else if (!strcmp(key, "stopped_by"))
				sscanf(val, "\"%63[^\"]", j->stopped_by);
			else if (!strcmp(key, "complete"))
				j->complete = !strcmp(val, "true");
			else if (!strcmp(key, "subbuf_size"))
				j->subbuf_size = strtoull(val, NULL, 10);
			else if (!strcmp(key, "num_subbuf"))
				j->num_subbuf = strtoull(val, NULL, 10);
		} else if (depth == 3 && !strcmp(stack[1], "cpus")) {
			u64 v = strtoull(val, NULL, 10);

			if (!strcmp(key, "cpu") && v < VC_MAX_CPUS) {
				cur = v;
				j->cpu[cur].valid = true;
				j->cpu[cur].spliced = -1;
				if (cur + 1 > (int)j->ncpu)
					j->ncpu = cur + 1;
			} else if (cur < 0) {
				continue;
			} else if (!strcmp(key, "packets")) {
				j->cpu[cur].packets = v;
			} else if (!strcmp(key, "bytes")) {
				j->cpu[cur].bytes = v;
			} else if (!strcmp(key, "spliced_bytes")) {
				j->cpu[cur].spliced = v;
			} else if (!strcmp(key, "skipped")) {
				j->cpu[cur].skipped = v;
			}
		} else if (depth == 4 && cur >= 0 && !strcmp(stack[1], "cpus")) {
			struct lrb_buf_counters *c =
				!strcmp(stack[3], "counters_end") ?
				&j->cpu[cur].end : &j->cpu[cur].start;
			__u64 *v = &c->records_written;
			unsigned int i;

			for (i = 0; i < ARRAY_SIZE(vc_counter_key); i++)
				if (!strcmp(key, vc_counter_key[i]))
					v[i] = strtoull(val, NULL, 10);
		}
	}
	free(text);
	return j->ncpu ? 0 : -1;
}

/* Per CPU counters of a stats file copy; number of CPU lines. */
static int vc_stats_load(const char *path, struct lrb_buf_counters *c,
			 bool *have)
{
	char *text = vc_read_file(path, NULL), *line, *save = NULL;
	int n = 0;

	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned int cpu;

		if (sscanf(line, "cpu%u ", &cpu) != 1 || cpu >= VC_MAX_CPUS)
			continue;
		if (!vc_parse_stats_line(line, &c[cpu])) {
			have[cpu] = true;
			n++;
		}
	}
	free(text);
	return n;
}

/* stream_id of the first packet of a stream file, or 0. */
static u32 vc_file_stream_id(const char *path)
{
	struct lrb_packet_header h = { 0 };
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		if (read(fd, &h, sizeof(h)) != sizeof(h))
			h.stream_id = 0;
		close(fd);
	}
	return h.stream_id;
}

static void vc_check_counters(unsigned int cpu, const char *what,
			      const struct lrb_buf_counters *a,
			      const struct lrb_buf_counters *b, int n)
{
	const __u64 *x = &a->records_written, *y = &b->records_written;
	int i;

	for (i = 0; i < n; i++)
		vc_check(x[i] == y[i], "cpu%u: %s: %s %llu vs %llu", cpu,
			 what, vc_counter_key[i], (ull)x[i], (ull)y[i]);
}

/* --snapshot after ctl stop: the whole ring, ending with the last record */
static void vc_trace_snapshot(struct vc_stream *s, const struct vc_json *j,
			      const struct vc_jcpu *jc,
			      const struct vc_client_cpu *cl)
{
	u64 sb = j->subbuf_size, ring = sb * j->num_subbuf;
	u64 prod = jc->end.produced, start, want;
	u64 attempts[LRB_VM_NR_CTX] = { cl->task, cl->irq };
	int ctx;

	start = prod > ring ? prod - ring : 0;
	if (start < jc->end.consumed)
		start = jc->end.consumed;
	want = (prod - start + sb - 1) / sb;
	vc_check(!(prod % sb), "cpu%u: produced %llu after the snapshot's flush with writers stopped: want a packet boundary",
		 s->cpu, (ull)prod);
	vc_check(s->packets == want && !jc->skipped,
		 "cpu%u: snapshot has %llu packets (%llu skipped), the ring %llu (%llu..%llu)",
		 s->cpu, (ull)s->packets, (ull)jc->skipped, (ull)want,
		 (ull)start, (ull)prod);
	vc_check(!s->have_pkt || s->last.packet_seq_num == prod / sb - 1,
		 "cpu%u: newest packet %llu, want %llu", s->cpu,
		 (ull)s->last.packet_seq_num, (ull)(prod / sb - 1));
	for (ctx = 0; ctx < LRB_VM_NR_CTX && cl->valid && !cl->lost; ctx++)
		if (attempts[ctx])
			vc_check(s->have_seq[ctx] &&
				 s->last_seq[ctx] == attempts[ctx] - 1,
				 "cpu%u ctx %d: newest record %llu, client's last attempt %llu",
				 s->cpu, ctx, (ull)s->last_seq[ctx],
				 (ull)attempts[ctx] - 1);
}

int vc_cmd_trace(const struct vc_opts *o)
{
	static struct vc_json js[VC_TRACE_DIRS];
	static struct lrb_buf_counters stats[VC_MAX_CPUS];
	static bool have_stats[VC_MAX_CPUS];
	struct vc_client_cpu cl[VC_MAX_CPUS] = {};
	char path[512], *text;
	unsigned int cpu, k, ncpu;
	long long size = vc_client_param("size");

	if (!o->ndirs) {
		fprintf(stderr, "lrb-vmcheck trace: give --dir DIR (one or more)\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/metadata", o->dirs[0]);
	text = vc_read_file(path, NULL);
	if (!vc_check(text && !vc_layout_from_metadata(text, &vc_layout),
		      "%s: %s", path, text ? "record layout not recognised" :
		      strerror(errno)))
		return vc_report();
	free(text);
	for (k = 0; k < o->ndirs; k++) {
		snprintf(path, sizeof(path), "%s/.lrb-record.json", o->dirs[k]);
		if (!vc_check(!vc_json_load(path, &js[k]),
			      "%s: missing or without cpus", path))
			return vc_report();
		vc_check(js[k].complete, "%s: complete is false", path);
		vc_info("%s: consumer %s, stopped by %s, %u cpus", path,
			js[k].consumer, js[k].stopped_by, js[k].ncpu);
	}
	ncpu = js[0].ncpu;
	if (o->stats)
		vc_check(vc_stats_load(o->stats, stats, have_stats) ==
			 (int)ncpu, "%s: want %u cpu lines", o->stats, ncpu);
	vc_check(vc_read_written(o->written, cl, ncpu) == (int)ncpu,
		 "%s: want %u cpu lines", o->written, ncpu);
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct vc_stream st;
		struct vc_geom g = {
			.subbuf_size = js[0].subbuf_size,
			.data_len = size >= (long long)LRB_VM_RECORD_MIN ?
				    size - (long long)LRB_VM_RECORD_MIN : -1,
			.exact_seq = !o->final,
		};
		const struct vc_jcpu *last = &js[o->ndirs - 1].cpu[cpu];
		long long spliced = -1;

		for (k = 0; k < o->ndirs && !g.stream_id; k++) {
			snprintf(path, sizeof(path), "%s/%s_%u", o->dirs[k],
				 o->chan, cpu);
			g.stream_id = vc_file_stream_id(path);
		}
		vc_stream_init(&st, cpu, &g);
		for (k = 0; k < o->ndirs; k++) {
			const struct vc_jcpu *jc = &js[k].cpu[cpu];
			u64 p0 = st.packets, b0 = st.bytes;

			snprintf(path, sizeof(path), "%s/%s_%u", o->dirs[k],
				 o->chan, cpu);
			if (!vc_check(jc->valid, "%s/.lrb-record.json has no cpu%u",
				      o->dirs[k], cpu))
				continue;
			if (access(path, F_OK) && !jc->packets)
				continue;
			vc_verify_file(&st, path);
			vc_check(st.packets - p0 == jc->packets &&
				 st.bytes - b0 == jc->bytes,
				 "%s: %llu packets of %llu bytes, lrb-record.json says %llu and %llu",
				 path, (ull)(st.packets - p0),
				 (ull)(st.bytes - b0), (ull)jc->packets,
				 (ull)jc->bytes);
			if (jc->spliced >= 0)
				spliced = (spliced < 0 ? 0 : spliced) +
					  jc->spliced;
		}
		if (o->final && o->live) {
			/*
			 * Nothing to take only if the channel was empty, or
			 * if writers lapped the whole ring while lrb-record
			 * ran (it stalled: TCG on a loaded host).
			 */
			vc_check(st.packets || !last->end.produced ||
				 last->end.lost_packets - last->start.lost_packets >=
				 js[0].num_subbuf,
				 "cpu%u: snapshot of a running channel took no packet (lost_packets %llu at its start, %llu at its end)",
				 cpu, (ull)last->start.lost_packets,
				 (ull)last->end.lost_packets);
		} else if (o->final) {
			vc_trace_snapshot(&st, &js[0], last, &cl[cpu]);
		} else {
			struct vc_acct a = {
				.cnt = last->end, .cl = cl[cpu],
				.spliced = spliced,
				.pos = { .consumed = last->end.consumed,
					 .produced = last->end.produced },
			};

			vc_account(&st, &a);
		}
		if (o->stats && have_stats[cpu])
			/* the writers' counters, final once they stopped */
			vc_check_counters(cpu, "stats after stop vs lrb-record.json counters_end",
					  &stats[cpu], &last->end, 6);
		vc_info("cpu%u: %llu packets, %llu bytes, %llu records (task %llu, irq %llu), seq gaps %llu+%llu, client attempts %llu+%llu lost %llu",
			cpu, (ull)st.packets, (ull)st.bytes, (ull)st.records,
			(ull)st.received[0], (ull)st.received[1],
			(ull)st.gaps[0], (ull)st.gaps[1], (ull)cl[cpu].task,
			(ull)cl[cpu].irq, (ull)cl[cpu].lost);
		vc_stream_report(&st, !o->final);
	}
	return vc_report();
}
