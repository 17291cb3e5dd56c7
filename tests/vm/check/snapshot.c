// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-vmcheck snapshot: flight-recorder snapshots of an overwrite channel
 * while its writers run. For each CPU: sample the positions, take every
 * packet still in the ring with GET_SUBBUF (not consuming), verify it
 * through the mapping, release it. Packets overwritten meanwhile must show
 * in lost_packets; the snapshot must reach the newest complete packets.
 *
 * With --final the writers are stopped (ctl "stop"): after a FLUSH every
 * packet of the ring must be taken, twice with identical bytes (taking does
 * not consume), and the newest record of each context must be the client's
 * last attempt.
 */
#include "vmcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define VC_SNAP_MAX 1024

/**
 * struct vc_snap - one snapshot of one CPU
 * @st: verification of the packets taken
 * @head: start of the packet being filled when positions were sampled
 * @start: first position tried
 * @taken: packets taken
 * @last_taken: position of the newest one
 * @skipped_old: packets gone before they could be taken
 * @skipped: every position not taken
 * @lost_growth: lost_packets grew by this much during the snapshot
 * @p_end: positions when the snapshot was done
 * @hash: per packet taken, FNV-1a of its bytes
 */
struct vc_snap {
	struct vc_stream st;
	struct lrb_positions p;
	struct lrb_positions p_end;
	u64 head;
	u64 start;
	u64 taken;
	u64 last_taken;
	u64 skipped_old;
	u64 skipped;
	u64 lost_growth;
	u32 hash[VC_SNAP_MAX];
};

static int vc_snap_cpu(struct vc_chan *ch, unsigned int cpu, const u8 *map,
		       struct vc_snap *sn)
{
	const struct lrb_buf_info *info = &ch->info[cpu];
	struct lrb_buf_counters c0, c1;
	u64 sb = info->subbuf_size, ring = sb * info->num_subbuf, pos;
	int fd = ch->fd[cpu], tries;
	struct vc_geom g;

	vc_geom_from_info(&g, info, false);
	memset(sn, 0, sizeof(*sn));
	vc_stream_init(&sn->st, cpu, &g);
	if (!vc_check(!ioctl(fd, LRB_IOC_GET_COUNTERS, &c0) &&
		      !ioctl(fd, LRB_IOC_GET_POSITIONS, &sn->p),
		      "cpu%u: GET_COUNTERS/GET_POSITIONS: %s", cpu,
		      strerror(errno)))
		return -1;
	sn->head = sn->p.produced & ~(sb - 1);
	sn->start = sn->head > ring ? sn->head - ring : 0;
	if (sn->start < sn->p.consumed)
		sn->start = sn->p.consumed;
	for (pos = sn->start; pos < sn->p.produced; pos += sb) {
		struct lrb_subbuf_desc d = { .pos = pos };

		if (ioctl(fd, LRB_IOC_GET_SUBBUF, &d)) {
			if (errno != EAGAIN && errno != ENODATA) {
				vc_fail("cpu%u: GET_SUBBUF(pos %llu): %s", cpu,
					(ull)pos, strerror(errno));
				return -1;
			}
			sn->skipped++;
			/* the two newest may still be completing */
			if (pos + sb < sn->head)
				sn->skipped_old++;
			continue;
		}
		if (d.pos != pos || d.seq != pos / sb ||
		    d.mmap_offset % VC_PAGE ||
		    d.mmap_offset > info->mmap_len ||
		    d.packet_size > info->mmap_len - d.mmap_offset) {
			vc_err(&sn->st, VC_FRAMING,
			       "GET_SUBBUF(pos %llu): desc pos %llu seq %llu packet_size %llu mmap_offset %llu: inconsistent or outside the mapping",
			       (ull)pos, (ull)d.pos, (ull)d.seq,
			       (ull)d.packet_size, (ull)d.mmap_offset);
		} else {
			vc_verify_packet(&sn->st, map + d.mmap_offset,
					 d.packet_size, pos);
			if (sn->st.cur.h.packet_seq_num != d.seq)
				vc_err(&sn->st, VC_PKTSEQ,
				       "packet at %llu: packet_seq_num %llu, want %llu",
				       (ull)pos,
				       (ull)sn->st.cur.h.packet_seq_num,
				       (ull)d.seq);
			if (sn->taken < VC_SNAP_MAX)
				sn->hash[sn->taken] = sn->st.cur.hash;
		}
		if (ioctl(fd, LRB_IOC_PUT_SUBBUF, 0)) {
			vc_fail("cpu%u: PUT_SUBBUF(pos %llu): %s", cpu,
				(ull)pos, strerror(errno));
			return -1;
		}
		sn->taken++;
		sn->last_taken = pos;
	}
	if (!vc_check(!ioctl(fd, LRB_IOC_GET_COUNTERS, &c1) &&
		      !ioctl(fd, LRB_IOC_GET_POSITIONS, &sn->p_end),
		      "cpu%u: GET_COUNTERS/GET_POSITIONS: %s", cpu,
		      strerror(errno)))
		return -1;
	/*
	 * A writer moves the read position, then counts the packets it
	 * pushed out: one caught in between (its vCPU stalled) gets up to a
	 * second to finish before the count is held against it.
	 */
	for (tries = 0; tries < 100 &&
	     c1.lost_packets - c0.lost_packets < sn->skipped_old; tries++) {
		usleep(10000);
		if (ioctl(fd, LRB_IOC_GET_COUNTERS, &c1))
			break;
	}
	sn->lost_growth = c1.lost_packets - c0.lost_packets;
	return 0;
}

static void vc_snap_report(struct vc_snap *sn, unsigned int k, u64 sb)
{
	struct vc_stream *s = &sn->st;

	vc_info("cpu%u snapshot %u: consumed %llu produced %llu: took %llu packets (seq %llu..%llu), %llu records, skipped %llu (%llu old), lost_packets +%llu",
		s->cpu, k, (ull)sn->p.consumed, (ull)sn->p.produced,
		(ull)sn->taken, (ull)(sn->start / sb),
		(ull)(sn->last_taken / sb), (ull)s->records,
		(ull)sn->skipped, (ull)sn->skipped_old, (ull)sn->lost_growth);
	vc_stream_report(s, false);
}

static void vc_snap_running(struct vc_chan *ch, unsigned int cpu,
			    const u8 *map, unsigned int k)
{
	static struct vc_snap sn;
	u64 sb = ch->info[cpu].subbuf_size;
	bool lapped;

	if (vc_snap_cpu(ch, cpu, map, &sn))
		return;
	vc_snap_report(&sn, k, sb);
	/* a packet that vanished was pushed out after the sample */
	vc_check(sn.skipped_old <= sn.lost_growth,
		 "cpu%u snapshot %u: %llu packets vanished during the snapshot but lost_packets grew by %llu",
		 cpu, k, (ull)sn.skipped_old, (ull)sn.lost_growth);
	if (sn.head < 2 * sb)
		return;
	/*
	 * Writers that lapped the ring past the two newest packets while
	 * this snapshot ran (its CPU stalled: TCG on a loaded host) leave
	 * nothing newer to take: GET_SUBBUF could not have them.
	 */
	lapped = sn.p_end.consumed > sn.head - 2 * sb;
	if (lapped)
		vc_info("cpu%u snapshot %u: writers overwrote packet %llu before it could be taken (consumed %llu at the end): this snapshot stalled",
			cpu, k, (ull)((sn.head - 2 * sb) / sb),
			(ull)sn.p_end.consumed);
	vc_check(lapped || (sn.taken && sn.last_taken + 2 * sb >= sn.head),
		 "cpu%u snapshot %u: newest packet taken at %llu (%llu taken), the one being filled at %llu: want one of the two before it",
		 cpu, k, (ull)sn.last_taken, (ull)sn.taken, (ull)sn.head);
}

static void vc_snap_final(struct vc_chan *ch, unsigned int cpu,
			  const u8 *map, const struct vc_client_cpu *cl)
{
	static struct vc_snap a, b;
	u64 sb = ch->info[cpu].subbuf_size, attempts[2] = { cl->task, cl->irq };
	struct lrb_buf_counters c;
	int ctx;

	vc_check(!ioctl(ch->fd[cpu], LRB_IOC_FLUSH, 0),
		 "cpu%u: FLUSH: %s", cpu, strerror(errno));
	if (vc_snap_cpu(ch, cpu, map, &a) || vc_snap_cpu(ch, cpu, map, &b))
		return;
	vc_snap_report(&a, 0, sb);
	vc_check(!(a.p.produced % sb),
		 "cpu%u: produced %llu after FLUSH with writers stopped: want a packet boundary",
		 cpu, (ull)a.p.produced);
	vc_check(!a.skipped && a.taken == (a.p.produced - a.start + sb - 1) / sb,
		 "cpu%u: writers stopped: took %llu packets of %llu..%llu, %llu could not be taken",
		 cpu, (ull)a.taken, (ull)a.start, (ull)a.p.produced,
		 (ull)a.skipped);
	vc_check(a.taken == b.taken && a.start == b.start &&
		 !memcmp(a.hash, b.hash,
			 sizeof(a.hash[0]) *
			 (a.taken < VC_SNAP_MAX ? a.taken : VC_SNAP_MAX)),
		 "cpu%u: a second snapshot differs from the first (%llu and %llu packets from %llu and %llu): GET_SUBBUF must not consume nor change packets",
		 cpu, (ull)a.taken, (ull)b.taken, (ull)a.start, (ull)b.start);
	if (!vc_check(!ioctl(ch->fd[cpu], LRB_IOC_GET_COUNTERS, &c),
		      "cpu%u: GET_COUNTERS: %s", cpu, strerror(errno)))
		return;
	vc_check(!c.lost_full,
		 "cpu%u: lost_full %llu in overwrite mode: want 0", cpu,
		 (ull)c.lost_full);
	if (!cl->valid)
		return;
	/* the newest records survive overwriting; lost ones are the last */
	for (ctx = 0; ctx < LRB_VM_NR_CTX; ctx++) {
		if (!attempts[ctx])
			continue;
		if (cl->lost)
			vc_check(a.st.have_seq[ctx] &&
				 a.st.last_seq[ctx] < attempts[ctx],
				 "cpu%u ctx %d: newest record seq %llu, client made %llu attempts",
				 cpu, ctx, (ull)a.st.last_seq[ctx],
				 (ull)attempts[ctx]);
		else
			vc_check(a.st.have_seq[ctx] &&
				 a.st.last_seq[ctx] == attempts[ctx] - 1,
				 "cpu%u ctx %d: newest record in the snapshot %s%llu, client's last attempt %llu (none lost)",
				 cpu, ctx, a.st.have_seq[ctx] ? "seq " : "none ",
				 (ull)a.st.last_seq[ctx],
				 (ull)attempts[ctx] - 1);
	}
}

int vc_cmd_snapshot(const struct vc_opts *o)
{
	struct vc_client_cpu cl[VC_MAX_CPUS] = {};
	const u8 *map[VC_MAX_CPUS];
	struct vc_chan ch;
	unsigned int cpu, k;

	vc_load_layout(o->chan);
	if (vc_chan_open(&ch, o->chan, O_RDONLY | O_NONBLOCK))
		return vc_report();
	if (!vc_check(ch.info[0].mode == LRB_ABI_MODE_OVERWRITE,
		      "channel %s is in mode %u: snapshot needs overwrite mode (load the client with mode=overwrite)",
		      o->chan, ch.info[0].mode))
		goto out;
	vc_catch_fatal_signals();
	for (cpu = 0; cpu < ch.ncpu; cpu++) {
		map[cpu] = mmap(NULL, ch.info[cpu].mmap_len, PROT_READ,
				MAP_SHARED, ch.fd[cpu], 0);
		if (!vc_check(map[cpu] != MAP_FAILED,
			      "cpu%u: mmap of %llu bytes: %s", cpu,
			      (ull)ch.info[cpu].mmap_len, strerror(errno)))
			goto out;
	}
	if (o->final) {
		char *text = vc_read_file(o->written, NULL);

		vc_check(text && strstr(text, "running=0"),
			 "%s does not say running=0: stop the writers (ctl \"stop\") before snapshot --final",
			 o->written);
		free(text);
		vc_check(vc_read_written(o->written, cl, ch.ncpu) ==
			 (int)ch.ncpu, "%s: want one line per CPU",
			 o->written);
		for (cpu = 0; cpu < ch.ncpu; cpu++)
			vc_snap_final(&ch, cpu, map[cpu], &cl[cpu]);
		goto out;
	}
	for (k = 0; k < o->count; k++) {
		if (k)
			vc_sleep_ms(o->interval_ms);
		for (cpu = 0; cpu < ch.ncpu; cpu++)
			vc_snap_running(&ch, cpu, map[cpu], k);
	}
out:
	vc_chan_close(&ch);
	return vc_report();
}
