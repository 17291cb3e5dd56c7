/*
 * SPDX-License-Identifier: GPL-2.0
 *
 * Spin model of lrb's write and read protocol: reserve (fast and slow
 * path), write, commit, discard (the rewind of the last reservation, or a
 * skip record and its merge at delivery), the sub-buffer switch, flush,
 * and the reader's take and release, in discard or overwrite mode. Each
 * inline is named after the C function it stands for; Documentation/design.rst
 * ("The spin model") maps them to the code. tests/model/verify.sh runs
 * every configuration; by hand:
 *
 *   spin -a -DOVERWRITE lrb.pml && gcc -O2 -DSAFETY -o pan pan.c && ./pan
 *
 * Processes:
 *   writer _pid 0  the task writer of CPU 0;
 *   writer _pid 1  an interrupt on CPU 0. While it runs (in_irq) the task
 *                  is frozen, so it lands between any two steps of the
 *                  task. It writes records, may flush (the switch timer),
 *                  and flushes once more when every other writer is done
 *                  (channel teardown);
 *   writer _pid 2  with -DREMOTE, a writer on CPU 1 (a global buffer, or
 *                  user-space threads sharing a buffer), fully concurrent;
 *   reader         takes, reads and releases sub-buffers until the writers
 *                  are done, then drains the buffer and checks the
 *                  accounting; with -DSNAPSHOT it also takes snapshots.
 *
 * Every access to shared state is one atomic step, as in lrb (local_t,
 * atomic_long_t, or a store to bytes the writer owns). The model is
 * sequentially consistent: it does not check the barriers.
 *
 * Positions count units, not bytes: a sub-buffer holds S units, the packet
 * header takes one, a record one (compact header) or two (extended: header
 * unit, then payload unit), chosen from the clock as __lrb_header_len()
 * does. Every record is aligned, so __lrb_align() is the identity. The
 * commit counts count bytes, a unit being one 4-byte word: every add is a
 * multiple of 4 but the byte a lap's first skip holds back, so the low two
 * bits that __lrb_commit_ends() and __lrb_deliver() test are those of C.
 *
 * Known-bad variants; each must make the verification fail:
 *   -DBAD_COMMIT_EARLY   commit a record before storing its payload
 *   -DBAD_NO_SWAP        the overwrite reader reads the ring's slot in
 *                        place instead of swapping its spare in
 *   -DBAD_NO_GEN         lrb_try_discard() keeps the generation
 *   -DBAD_NO_LAP_TAG     __lrb_deliver() sets noref without checking the lap
 *   -DBAD_NO_WRAP_CHECK  lrb_check_space() skips the commit count test
 *   -DBAD_NO_FULL_CHECK  discard mode: lrb_check_space() skips the reader
 *   -DBAD_WRITER_WAITS   a writer retries, instead of counting a loss,
 *                        until the sub-buffer it needs is free
 *   -DBAD_WRITER_BLOCKS  a writer blocks until the reader frees space
 *   -DBAD_SKIP_NO_HOLD   the first skip of a lap commits all its bytes
 *   -DBAD_SKIP_HOLD_EACH every skip holds a byte back, not the first only
 *   -DBAD_SKIP_LATE_MERGE __lrb_deliver() adds the last byte, then merges
 */

/* Geometry: NSB sub-buffers of S units; positions stay below 64. */
#define S		4
#define SB_ORDER	2
#define NSB		2
#define BUFSZ		8	/* S * NSB */
#define H		1	/* packet header units */
#define NSLOT		3	/* the ring's slots, plus the reader's spare */
#define NSEQ		16	/* packets below position 64 */

#define IDX(p)		(((p) >> SB_ORDER) & (NSB - 1))
#define LAP(p)		((p) >> 3)
#define SBOFF(p)	((p) & (S - 1))
#define SEQ(p)		((p) >> SB_ORDER)

/* buf->offset: write position in bits 0-5, discard generation in 6-7 */
#define POS(o)		((o) & 63)
#define GEN(o)		((o) >> 6)
#define OFF(p, g)	(((g) << 6) | (p))

/* buf->wsb[]: slot in bits 0-1, noref in bit 2, lap tag above */
#define W_SLOT(w)	((w) & 3)
#define W_NOREF		4
#define W_TAG(lap)	((lap) << 3)
#define W_HIGH(w)	((w) & 252)

/*
 * Commit counts in bytes: __lrb_commit_done() (counts and positions never
 * wrap in the model) and __lrb_commit_ends() (done, or 1 byte short)
 */
#define SB_BYTES	16	/* S units of 4 bytes */
#define DONE(cc, lap)	((cc) == (lap) * SB_BYTES)
#define ENDS(cc, lap)	DONE(((cc) + 1) & 252, lap)

/*
 * A unit of the pages: the packet it was stored for (its offset in the
 * sub-buffer is where it is stored), and what it is.
 */
#define K_PART		0	/* one-unit record whose payload is not stored */
#define K_REC		1	/* first unit of a complete record */
#define K_DATA		2	/* packet header, or a record's payload unit */
#define K_PAD		3	/* padding of lrb_close_packet(), or zeroes */
#define K_SKIPPED	4	/* first unit of a skipped record, not merged */
#define K_SKIP		5	/* skip record header of lrb_merge_skips() */
#define UNIT(p, k)	((SEQ(p) << 3) | (k))
#define KIND(v)		((v) & 7)
#define USEQ(v)		((v) >> 3)
#define PB(p)		((p) - SBOFF(p))	/* the packet's position */

/*
 * The first two words of a unit, as __lrb_skip() and lrb_merge_skips()
 * use them: a skipped record's list link (the offset of the one pushed
 * before it, 0 for none) and its length in units; a skip record's length
 * (header included) in units. Other stores clear them.
 */
#define SWORD(link, len) ((link) | ((len) << 2))
#define SLINK(w)	((w) & 3)
#define SLEN(w)		((w) >> 2)

/* Errors, operations, processes */
#define ENOBUFS		1
#define EAGAIN		2
#define RETRY		3	/* lrb_plan_slot() returning 1, a failed CAS */
#define OP_RECORD	0
#define OP_FLUSH	1
#define TASK		0
#define IRQ		1
#ifdef REMOTE
#define NW		3
#else
#define NW		2
#endif

/* Work per process */
#ifndef NT
#define NT		2	/* task records */
#endif
#ifndef NI
#define NI		2	/* interrupt records */
#endif
#ifndef NR
#define NR		1	/* remote records */
#endif
#ifndef NFLUSH
#define NFLUSH		1	/* switch-timer flushes in interrupt context */
#endif
#ifndef NSNAP
#define NSNAP		1	/* snapshots (-DSNAPSHOT) */
#endif
#ifndef DISCARDERS
#define DISCARDERS	7	/* writers that may call lrb_try_discard() */
#endif
#define NREC(p)		((p) == TASK -> NT : ((p) == IRQ -> NI : NR))

/* struct lrb_buf */
byte offset;
byte commit[NSB];
byte wsb[NSB];
byte lost_full;
byte lost_wrap;
byte records;
byte consumed;
byte lost_packets;
byte skips[NSB];		/* lists of skipped records (offsets) */
byte spare;			/* reader-private fields */
bool holding;
bool held_consuming;
byte held_pos;
byte held_slot;
/* the pages: NSLOT slots of S units, and their packet header fields */
byte page[NSLOT * S];
byte sword[NSLOT * S];		/* the skip words of each unit (SWORD) */
byte ph_seq[NSLOT];		/* packet_seq_num, by the opener */
byte ph_content[NSLOT];		/* content_size, by the closer */
byte ph_disc[NSLOT];		/* events_discarded, by the closer */

bool ready;			/* lrb_buf_alloc() done */
bool waiting;			/* the reader is in a test or asleep */
bool woken;			/* __lrb_port_wake() since the test began */
#define WAKE	if :: waiting -> woken = 1 :: else fi	/* __lrb_port_wake() */
bool in_irq;			/* CPU 0 runs the interrupt */
byte done;			/* writers finished */
/* ghost state for the checks */
byte ndiscarded;		/* reservations taken back */
byte nlost;			/* records refused */
byte recs_in_seq[NSEQ];		/* records committed, per packet */
byte skipped_units[NSEQ];	/* units of skipped records, per packet */

/*
 * Timestamps: the clock (the value its next read returns), buf->last_tsc,
 * the timestamp of the last record in buffer order (ghost), and per
 * writer ctx->tsc and the last-record timestamp its reservation replaced.
 * Only their order and differences below 2^TSC_BITS matter (to
 * __lrb_header_len() and to the order check), so after each change they
 * are renamed to the smallest values keeping both: runs that differ only
 * in how far the clock went make one state.
 */
#define TSC_BITS	1
#define CAP		(1 << TSC_BITS)
#define DEAD		255
#define NTS		(3 + 2 * NW)
byte ts[NTS];
#define CLK		ts[0]
#define LAST_TSC	ts[1]
#define TAIL_TSC	ts[2]
#define TSC		ts[3 + _pid]
#define CTAIL		ts[3 + NW + _pid]

/* __lrb_header_len(): compact if 0 <= tsc - last_tsc < 2^TSC_BITS */
#define HEADER_LEN(t, l) (((t) >= (l) && (t) - (l) < CAP) -> 1 : 2)

/* Rename timestamps (inside a d_step; the caller declares nz_*). */
inline normalize_ts()
{
	nz_mask = 0;
	nz_first = 1;
	do
	:: nz_v = DEAD;		/* smallest live value not renamed yet */
		nz_i = 0;
		do
		:: nz_i < NTS ->
			if
			:: ts[nz_i] < nz_v && !(nz_mask & (1 << nz_i)) ->
				nz_v = ts[nz_i]
			:: else
			fi;
			nz_i++
		:: else -> break
		od;
		if
		:: nz_v == DEAD -> break
		:: else
		fi;
		if
		:: nz_first -> nz_new = 0
		:: !nz_first && nz_v - nz_prev < CAP -> nz_new = nz_new + nz_v - nz_prev
		:: else -> nz_new = nz_new + CAP
		fi;
		nz_prev = nz_v;
		nz_first = 0;
		nz_i = 0;
		do
		:: nz_i < NTS ->
			if
			:: ts[nz_i] == nz_v && !(nz_mask & (1 << nz_i)) ->
				ts[nz_i] = nz_new;
				nz_mask = nz_mask | (1 << nz_i)
			:: else
			fi;
			nz_i++
		:: else -> break
		od
	od;
	nz_mask = 0; nz_first = 0; nz_v = 0; nz_i = 0; nz_new = 0; nz_prev = 0
}

/*
 * May a writer store into slot s for position p? Never into pages the
 * reader holds; in discard mode never a lap ahead of the read position;
 * in overwrite mode only into the slot the ring maps p to, claimed for
 * the lap of p and not delivered.
 */
#ifdef OVERWRITE
#define MAY_STORE(p, s) (!(holding && held_slot == (s)) && \
			 wsb[IDX(p)] == ((s) | W_TAG(LAP(p))))
#else
#define MAY_STORE(p, s) (!(holding && held_slot == (s)) && \
			 (s) == IDX(p) && (p) < consumed + BUFSZ)
#endif

/*
 * Named checks: assert(name) makes spin's report say which property
 * failed. Each is set, asserted and cleared in one atomic step.
 */
#define CHECK(name, e)	name = (e); assert(name); name = 0
bool writer_owns_pages, ts_in_buffer_order, within_model_bounds;
bool loss_as_documented, consumed_never_back, packet_of_this_lap;
bool content_size_sane, records_complete, padding_after_content;
bool packet_has_its_records, reader_never_goes_back, accounting_exact;
bool skip_list_exact, skips_merged, skips_cover_exactly;

/* Store unit value v at position p of slot s: a plain store. */
#define STORE(p, s, v)	CHECK(writer_owns_pages, MAY_STORE(p, s)); \
			page[(s) * S + SBOFF(p)] = (v); \
			sword[(s) * S + SBOFF(p)] = 0

/*
 * A record is placed by a successful compare-and-swap on offset; its
 * timestamp must not be older than that of the record before it.
 */
#define PLACE(o, new)	offset == (o) -> offset = (new); \
			CHECK(ts_in_buffer_order, TSC >= TAIL_TSC); \
			CHECK(within_model_bounds, POS(new) < 64); \
			CTAIL = TAIL_TSC; TAIL_TSC = TSC

/*
 * Writer steps, on the locals every writer declares (WRITER_LOCALS).
 */

/* cfg->cb.clock_read(), then __lrb_header_len() on buf->last_tsc */
inline read_clock()
{
	d_step {
		TSC = CLK;
		CLK++;
		CHECK(within_model_bounds, CLK < DEAD);
		normalize_ts()
	}
	hl = HEADER_LEN(TSC, LAST_TSC)
}

/* __lrb_claim_slow(): mark the entry as written in the lap of @p */
inline __lrb_claim_slow(p, sl)
{
	w = wsb[IDX(p)];
	do
	:: W_HIGH(w) == W_TAG(LAP(p)) ->
		sl = W_SLOT(w);
		break
	:: else ->
		d_step {	/* __lrb_atomic_cmpxchg(&buf->wsb[idx], w, new) */
			old = wsb[IDX(p)];
			if
			:: old == w -> wsb[IDX(p)] = W_SLOT(w) | W_TAG(LAP(p))
			:: else
			fi
		}
		if
		:: old == w ->
			sl = W_SLOT(w);
			break
		:: else ->
			w = old
		fi
	od
}

/* __lrb_claim(): the slot of @p, claimed for its lap */
inline __lrb_claim(p, sl)
{
	w = wsb[IDX(p)];
	if
	:: W_HIGH(w) == W_TAG(LAP(p)) ->
		sl = W_SLOT(w)
	:: else ->
		__lrb_claim_slow(p, sl)
	fi;
	w = 0;
	old = 0
}

/* lrb_writer_pages(), and __lrb_open_record()'s choice of pages */
inline lrb_writer_pages(p, sl)
{
#ifdef OVERWRITE
	__lrb_claim(p, sl)
#else
	sl = IDX(p)
#endif
}

/*
 * lrb_merge_skips(): the deliverer, which owns the packet of @p, turns its
 * list of skipped records into skip records. The first step walks the list
 * and checks it holds every record skipped in the lap, once; it stands for
 * lrb_skips_sort() too, whose result, the offsets in ascending order, it
 * keeps as the mask mm. Then each run of adjacent skipped records is one
 * step: a skip record at its start, or, for a run that reaches the end of
 * the content, a cut of the content and zeroes.
 */
inline lrb_merge_skips(p)
{
	lrb_writer_pages(p, ms);
	d_step {
		mm = 0;
		mb = skips[IDX(p)];
		me = 0;		/* the units the list covers */
		do
		:: mb != 0 ->
			CHECK(skip_list_exact, !((mm >> mb) & 1) &&
			      page[ms * S + mb] == UNIT(p, K_SKIPPED));
			mm = mm | (1 << mb);
			me = me | (((1 << SLEN(sword[ms * S + mb])) - 1) << mb);
			mb = SLINK(sword[ms * S + mb])
		:: else -> break
		od;
		CHECK(skip_list_exact, me == skipped_units[SEQ(p)]);
		mb = 0;
		me = 0
	}
	do
	:: mm == 0 -> break
	:: else ->
		d_step {
			do	/* the run's start: the first offset left */
			:: !((mm >> mb) & 1) -> mb++
			:: else -> break
			od;
			me = mb;
			do	/* its end: past the last adjacent skipped record */
			:: (mm >> me) & 1 ->
				mm = mm & ~(1 << me);
				me = me + SLEN(sword[ms * S + me])
			:: else -> break
			od;
			if
			:: me >= ph_content[ms] ->
				CHECK(writer_owns_pages, MAY_STORE(p, ms));
				ph_content[ms] = mb;
				do	/* lrb_pages_fill(): zeroes */
				:: mb < me ->
					STORE(PB(p) + mb, ms, UNIT(p, K_PAD));
					mb++
				:: else -> break
				od;
				mm = 0
			:: else ->
				STORE(PB(p) + mb, ms, UNIT(p, K_SKIP));
				sword[ms * S + mb] = me - mb
			fi;
			mb = 0;
			me = 0
		}
	od;
	ms = 0
}

/*
 * __lrb_deliver(): a count 1 byte short of complete (its low bits 3) has
 * skipped records to merge before the last byte completes it; then
 * overwrite mode sets noref, if the entry is still @p's lap.
 */
inline __lrb_deliver(p)
{
	if
	:: commit[IDX(p)] & 3 ->
#ifndef BAD_SKIP_LATE_MERGE
		lrb_merge_skips(p);
		skips[IDX(p)] = 0;
		commit[IDX(p)] = commit[IDX(p)] + 1
#else
		commit[IDX(p)] = commit[IDX(p)] + 1;
		lrb_merge_skips(p);
		skips[IDX(p)] = 0
#endif
	:: else
	fi;
#ifdef OVERWRITE
	w = wsb[IDX(p)];
#ifndef BAD_NO_LAP_TAG
	if
	:: W_HIGH(w) == W_TAG(LAP(p)) ->
#endif
		d_step {	/* and __lrb_port_wake(), if it delivered */
			if
			:: wsb[IDX(p)] == w -> wsb[IDX(p)] = w | W_NOREF; WAKE
			:: else
			fi
		}
#ifndef BAD_NO_LAP_TAG
	:: else
	fi;
#endif
	w = 0
#else
	skip	/* __lrb_port_wake(): see lrb_get_next_subbuf() */
#endif
}

/*
 * lrb_commit_bytes(), and the add of lrb_commit(): @nb bytes, deliver if
 * the count ends the lap (__lrb_commit_ends()). For a record (@rec 1),
 * lrb_commit()'s increment of buf->records, which nothing reads before the
 * end, is folded into this step.
 */
inline lrb_commit_add(p, nb, rec)
{
	d_step {
		commit[IDX(p)] = commit[IDX(p)] + nb;
		cc = commit[IDX(p)];
		records = records + rec;
		recs_in_seq[SEQ(p)] = recs_in_seq[SEQ(p)] + rec
	}
	if
	:: ENDS(cc, LAP(p) + 1) -> __lrb_deliver(p)
	:: else
	fi;
	cc = 0
}

/* lrb_end_packet(): the closer's header fields */
inline lrb_end_packet(p, sl, content, disc)
{
	d_step {
		CHECK(writer_owns_pages, MAY_STORE(p, sl));
		ph_content[sl] = content;
		ph_disc[sl] = disc
	}
}

/* lrb_close_packet(): end the packet at @p, pad and commit the rest */
inline lrb_close_packet(p, disc)
{
	lrb_writer_pages(p, sl);
	lrb_end_packet(p, sl, SBOFF(p), disc);
	d_step {	/* lrb_pages_fill(pages, content, NULL, pad) */
		u = SBOFF(p);
		do
		:: u < S ->
			STORE(p - SBOFF(p) + u, sl, UNIT(p - SBOFF(p) + u, K_PAD));
			u++
		:: else -> break
		od;
		u = 0
	}
	lrb_commit_add(p, (S - SBOFF(p)) * 4, 0);
	sl = 0
}

/* lrb_push_reader(): overwrite mode, move the reader past @start's lap */
inline lrb_push_reader(start)
{
	if
	:: start + S > BUFSZ ->
		want = start + S - BUFSZ;
		c = consumed;
		do
		:: want > c ->
			d_step {	/* __lrb_atomic_cmpxchg(&buf->consumed, c, want) */
				old = consumed;
				if
				:: old == c -> consumed = want
				:: else
				fi
			}
			if
			:: old == c ->
				d_step {	/* and __lrb_port_wake() */
					lost_packets = lost_packets + ((want - c) >> SB_ORDER);
					WAKE
				}
				break
			:: else ->
				c = old
			fi
		:: else -> break
		od
	:: else
	fi;
	want = 0;
	c = 0;
	old = 0
}

/* lrb_open_packet(): the opener's header fields, commit the header */
inline lrb_open_packet(start)
{
#ifdef OVERWRITE
	lrb_push_reader(start);
#endif
	lrb_writer_pages(start, sl);
	d_step {
		STORE(start, sl, UNIT(start, K_DATA));
		ph_seq[sl] = SEQ(start)
	}
	lrb_commit_add(start, H * 4, 0);
	sl = 0
}

/* lrb_check_space(): may a writer open the packet at @start? */
inline lrb_check_space(start)
{
#if !defined(OVERWRITE) && !defined(BAD_NO_FULL_CHECK)
#ifdef BAD_WRITER_BLOCKS
	start - consumed < BUFSZ;
#endif
	if
	:: start - consumed >= BUFSZ -> ret = ENOBUFS
	:: else
	fi;
#endif
	if
	:: ret == 0 ->
#ifndef BAD_NO_WRAP_CHECK
		cc = commit[IDX(start)];
		if
		:: !DONE(cc, LAP(start)) -> ret = EAGAIN
		:: else
		fi;
		cc = 0
#else
		skip
#endif
	:: else
	fi
}

/* lrb_count_lost(): which error each mode can count is checked too */
inline lrb_count_lost()
{
#ifdef OVERWRITE
	d_step {
		CHECK(loss_as_documented, ret == EAGAIN);
		lost_wrap++;
		nlost++
	}
#else
	d_step {	/* the reader test fails first */
		CHECK(loss_as_documented, ret == ENOBUFS);
		lost_full++;
		nlost++
	}
#endif
}

/* lrb_plan_slot(): ret 0 (a plan), a loss, or RETRY */
inline lrb_plan_slot()
{
	ret = 0;
	p_off = offset;
	p_old = POS(p_off);
	read_clock();
	/* -EMSGSIZE cannot happen: a record takes at most S - H units */
	p_open = (SBOFF(p_old) == 0);
	p_close = (SBOFF(p_old) != 0 && SBOFF(p_old) + hl > S);
	p_begin = p_old;
	if
	:: p_close ->
		p_begin = (p_old | (S - 1)) + 1;
		p_open = 1
	:: else
	fi;
	if
	:: p_open ->
		p_start = p_begin;
		lrb_check_space(p_start);
		if
		:: ret != 0 ->
			if
#ifndef BAD_WRITER_WAITS
			:: offset == p_off
#endif
			:: else -> ret = RETRY
			fi
		:: else ->
			p_begin = p_begin + H
		fi
	:: else
	fi;
	if
	:: ret == 0 ->
		p_end = p_begin + hl;
		p_disc = lost_full + lost_wrap	/* lrb_buf_lost() */
	:: else
	fi
}

/* lrb_reserve(): the fast path, else __lrb_reserve_slow() */
inline lrb_reserve()
{
	o = offset;
	prev = POS(o);
	begin = prev;
	/* the fast path places only the compact header's one unit */
	end = begin + 1;
	if
	:: SBOFF(begin) == 0 -> goto slow
	:: (begin ^ end) >> SB_ORDER -> goto slow
	:: else
	fi;
	read_clock();
	/* a delta that needs the extended header: the slow path */
	if
	:: hl != 1 -> goto slow
	:: else
	fi;
	gen = GEN(o);
	d_step {	/* __lrb_v_cmpxchg(&buf->offset, o, end | gen) */
		if
		:: PLACE(o, OFF(end, gen)); ret = 0
		:: else -> ret = RETRY
		fi
	}
	if
	:: ret == 0 -> goto record
	:: else -> ret = 0
	fi;
slow:
	__lrb_reserve_slow()
}

/* __lrb_reserve_slow(): plan and compare-and-swap until placed or lost */
inline __lrb_reserve_slow()
{
	do
	:: lrb_plan_slot();
		if
		:: ret == ENOBUFS || ret == EAGAIN ->
			lrb_count_lost();
			goto out
		:: ret == RETRY ->
			ret = 0
		:: ret == 0 ->
			gen = GEN(p_off);
			d_step {
				if
				:: PLACE(p_off, OFF(p_end, gen))
				:: else -> ret = RETRY
				fi
			}
			if
			:: ret == 0 -> break
			:: else -> ret = 0
			fi
		fi
	od
}

/* lrb_switch_packet(): close the packet being filled, if it has a record */
inline lrb_switch_packet()
{
	do
	:: p_off = offset;
		p_old = POS(p_off);
		if
		:: SBOFF(p_old) <= H -> goto out
		:: else
		fi;
		p_end = (p_old | (S - 1)) + 1;
		p_disc = lost_full + lost_wrap;
		d_step {
			if
			:: offset == p_off -> offset = OFF(p_end, GEN(p_off)); ret = 0
			:: else -> ret = RETRY
			fi
		}
		if
		:: ret == 0 -> break
		:: else -> ret = 0
		fi
	od;
	p_close = 1
}

/*
 * The rest of __lrb_reserve_slow() and lrb_switch_packet(), after the
 * compare-and-swap that moved the position.
 */
inline lrb_switched()
{
	if
	:: p_close -> lrb_close_packet(p_old, p_disc)
	:: else
	fi;
	if
	:: op == OP_FLUSH -> goto out
	:: else
	fi;
	if
	:: p_open -> lrb_open_packet(p_start)
	:: else
	fi;
	prev = (p_open -> p_begin : p_old);
	begin = p_begin;
	end = p_end;
	if
	:: SBOFF(p_end) == 0 ->	/* exact fill: the record closes its packet */
		lrb_writer_pages(p_begin, sl);
		lrb_end_packet(p_begin, sl, S, p_disc);
		sl = 0
	:: else
	fi
}

/* __lrb_open_record(): the pages of the slot, and the record header */
inline __lrb_open_record()
{
	lrb_writer_pages(begin, slot);
	d_step {
		STORE(begin, slot, UNIT(begin, (hl == 1 -> K_PART : K_REC)))
	}
}

/* lrb_write(): the payload */
inline lrb_write()
{
	if
	:: hl == 1 -> d_step { STORE(begin, slot, UNIT(begin, K_REC)) }
	:: else -> d_step { STORE(begin + 1, slot, UNIT(begin + 1, K_DATA)) }
	fi
}

/* lrb_commit() */
inline lrb_commit()
{
	d_step {
		LAST_TSC = TSC;
		normalize_ts()
	}
	lrb_commit_add(begin, (end - begin) * 4, 1)
}

/* lrb_try_discard(): take the reservation back if it is the last one */
#ifdef BAD_NO_GEN
#define NEXT_GEN(g)	(g)
#else
#define NEXT_GEN(g)	(((g) + 1) & 3)
#endif
inline lrb_try_discard()
{
	d_step {
		if
		:: offset == OFF(end, gen) ->
			offset = OFF(prev, NEXT_GEN(gen));
			TAIL_TSC = CTAIL;
			ndiscarded++;
			ret = 0
		:: else ->
			ret = EAGAIN	/* lrb_discard() skips it */
		fi
	}
}

/*
 * __lrb_skip(): push the record onto its sub-buffer's list of skipped
 * records (link and length in its first unit, then a compare-and-swap of
 * the head), and commit its bytes, but for one byte if the list was
 * empty: the lap's first skip holds it back for the deliverer.
 */
#if defined(BAD_SKIP_NO_HOLD)
#define HOLD(head)	0
#elif defined(BAD_SKIP_HOLD_EACH)
#define HOLD(head)	1
#else
#define HOLD(head)	((head) == 0 -> 1 : 0)
#endif
inline __lrb_skip()
{
	nx = skips[IDX(begin)];
	do
	:: d_step {
		STORE(begin, slot, UNIT(begin, K_SKIPPED));
		sword[slot * S + SBOFF(begin)] = SWORD(nx, end - begin);
		/* ghost: the units skipped */
		skipped_units[SEQ(begin)] = skipped_units[SEQ(begin)] |
			(((1 << (end - begin)) - 1) << SBOFF(begin))
	   }
		d_step {	/* __lrb_v_cmpxchg(head, nx, offset) */
			old = skips[IDX(begin)];
			if
			:: old == nx ->
				skips[IDX(begin)] = SBOFF(begin);
				ndiscarded++
			:: else
			fi
		}
		if
		:: old == nx -> break
		:: else -> nx = old
		fi
	od;
	old = 0;
	lrb_commit_add(begin, (end - begin) * 4 - HOLD(nx), 0)
}

/* lrb_discard(): the rewind if it can, else a skip record */
inline lrb_discard()
{
	lrb_try_discard();
	if
	:: ret != 0 ->
		ret = 0;
		__lrb_skip()
	:: else
	fi
}

#define WRITER_LOCALS \
	byte n, op, nflush, o, prev, begin, end, hl, gen, slot; \
	byte sl, w, old, cc, c, want, u, ret, nx, ms, mm, mb, me; \
	byte p_off, p_old, p_start, p_begin, p_end, p_disc; \
	bool p_open, p_close, final; \
	byte nz_i, nz_v, nz_prev, nz_new; \
	bool nz_first; \
	short nz_mask

active [NW] proctype writer() provided (ready && (_pid != TASK || !in_irq))
{
	WRITER_LOCALS;

next:
	atomic {
		if
		:: n < NREC(_pid) ->
			op = OP_RECORD
		:: _pid == IRQ && nflush < NFLUSH ->
			op = OP_FLUSH;
			nflush++
		:: _pid == IRQ && n == NREC(_pid) && !final && done == NW - 1 ->
			op = OP_FLUSH;	/* teardown: the last flush */
			final = 1
		:: (_pid != IRQ || final) && n == NREC(_pid) ->
			goto finish
		fi;
		if
		:: _pid == IRQ -> in_irq = 1	/* the interrupt arrives */
		:: else
		fi
	}
	if
	:: op == OP_FLUSH ->
		lrb_switch_packet();
		goto switched
	:: else
	fi;
	lrb_reserve();
switched:
	lrb_switched();
record:
	__lrb_open_record();
#ifdef BAD_COMMIT_EARLY
	lrb_commit();
	lrb_write();
#else
	lrb_write();
	if
	:: lrb_commit()
	:: DISCARDERS & (1 << _pid) ->
		lrb_discard()
	fi;
#endif
out:
	skip;		/* a label cannot start a d_step */
	d_step {
		if
		:: op == OP_RECORD -> n++
		:: else
		fi;
		o = 0; prev = 0; begin = 0; end = 0; hl = 0; gen = 0; slot = 0;
		ret = 0; nx = 0; p_off = 0; p_old = 0; p_start = 0; p_begin = 0;
		p_end = 0; p_disc = 0; p_open = 0; p_close = 0; op = 0;
		TSC = DEAD;
		CTAIL = DEAD;
		normalize_ts();
		if
		:: _pid == IRQ -> in_irq = 0	/* and returns */
		:: else
		fi
	}
	goto next;
finish:
	atomic {
		done++;
		WAKE	/* teardown wakes the reader */
	}
}

/*
 * Reader steps
 */

/* lrb_subbuf_delivered(), discard mode */
#define DELIVERED(p)	DONE(commit[IDX(p)], LAP(p) + 1)

/* lrb_swap_out(): put the spare in the ring in place of @p's slot */
inline lrb_swap_out(p)
{
	w = wsb[IDX(p)];
	do
	:: W_HIGH(w) != (W_TAG(LAP(p)) | W_NOREF) ->
		ret = EAGAIN;
		break
	:: else ->
		d_step {
			old = wsb[IDX(p)];
			if
			:: old == w -> wsb[IDX(p)] = spare | W_TAG(LAP(p)) | W_NOREF
			:: else
			fi
		}
		if
		:: old == w ->
			s = W_SLOT(w);
			break
		:: else ->
			w = old
		fi
	od;
	w = 0;
	old = 0
}

/*
 * lrb_fill_subbuf(), and the reading of the packet: every unit was stored
 * for this lap, the records are complete and all there, skip records
 * (merged, each followed by a record) cover exactly the skipped records'
 * units, padding follows the content. Writers are kept out of the slot
 * from here until lrb_release() by MAY_STORE().
 */
#define SKIPPED(p, u)	((skipped_units[SEQ(p)] >> (u)) & 1)
inline lrb_fill_subbuf(p, consuming)
{
	d_step {
		CHECK(packet_of_this_lap, ph_seq[s] == SEQ(p) &&
					  page[s * S] == UNIT(p, K_DATA));
		CHECK(content_size_sane, ph_content[s] >= H && ph_content[s] <= S);
		u = 1;
		k = 0;
		z = 0;		/* units of a skip record left to pass over */
		do
		:: u < S ->
			CHECK(packet_of_this_lap, USEQ(page[s * S + u]) == SEQ(p));
			if
			:: z > 0 ->
				CHECK(skips_cover_exactly, SKIPPED(p, u));
				z--
			:: z == 0 && u < ph_content[s] ->
				CHECK(skips_merged, KIND(page[s * S + u]) != K_SKIPPED);
				if
				:: KIND(page[s * S + u]) == K_SKIP ->
					z = sword[s * S + u];
					CHECK(skips_merged, z >= 1 && u + z < ph_content[s] &&
					      KIND(page[s * S + u + z]) == K_REC);
					CHECK(skips_cover_exactly, SKIPPED(p, u));
					z--
				:: else ->
					CHECK(skips_cover_exactly, !SKIPPED(p, u));
					CHECK(records_complete,
					      KIND(page[s * S + u]) == K_REC ||
					      KIND(page[s * S + u]) == K_DATA);
					k = k + (KIND(page[s * S + u]) == K_REC)
				fi
			:: else ->
				CHECK(padding_after_content,
				      KIND(page[s * S + u]) == K_PAD)
			fi;
			u++
		:: else -> break
		od;
		CHECK(packet_has_its_records, k == recs_in_seq[SEQ(p)]);
		if
		:: consuming ->
			/* what a consuming reader sees never goes back */
			CHECK(reader_never_goes_back,
			      (readmask >> SEQ(p)) == 0 && ph_disc[s] >= ndisc);
			ndisc = ph_disc[s];
			readmask = readmask | (1 << SEQ(p))
		:: else
		fi;
		waiting = 0;
		woken = 0;
		holding = 1;
		held_pos = p;
		held_slot = s;
		held_consuming = consuming;
		u = 0;
		k = 0;
		z = 0
	}
}

/*
 * lrb_get_next_subbuf(). Before the reads that may fail, @last samples
 * whether the writers are done (then nothing more will be delivered), and
 * the reader starts waiting, as poll() queues itself before its test.
 */
inline lrb_get_next_subbuf()
{
	ret = 0;
#ifdef OVERWRITE
	do
	:: d_step {
		last = (done == NW);
		waiting = 1;
		c = consumed
	   }
#ifndef BAD_NO_SWAP
		lrb_swap_out(c);
		if
		:: ret != 0 -> break
		:: else
		fi;
#else
		w = wsb[IDX(c)];	/* the ring's slot, read in place */
		if
		:: W_HIGH(w) != (W_TAG(LAP(c)) | W_NOREF) ->
			ret = EAGAIN;
			break
		:: else
		fi;
		s = W_SLOT(w);
		w = 0;
#endif
		d_step {	/* __lrb_atomic_cmpxchg(&buf->consumed, c, c + S) */
			if
			:: consumed == c -> consumed = c + S; ret = 0
			:: else -> ret = RETRY
			fi
		}
		if
		:: ret == 0 ->
			lrb_fill_subbuf(c, 1);
			break
		:: else ->
			ret = 0;
#ifndef BAD_NO_SWAP
			spare = s	/* skipped: counted in lost_packets */
#else
			skip
#endif
		fi
	od;
#else
	/*
	 * Discard mode: consumed is the reader's alone, so this is one step,
	 * and one that would fail changes nothing: the reader waits until
	 * it would not, which is what the wakeup in __lrb_deliver() is for.
	 */
	atomic {
		DELIVERED(consumed) || done == NW ->
		last = (done == NW);
		c = consumed;
		if
		:: DELIVERED(c) ->
			s = IDX(c);
			lrb_fill_subbuf(c, 1)
		:: else -> ret = EAGAIN
		fi
	}
#endif
	c = 0
}

/* lrb_get_subbuf(): a snapshot of a sub-buffer between the positions */
inline lrb_get_subbuf()
{
	ret = 0;
	c = consumed;		/* lrb_positions() */
	o = POS(offset);
	if
	:: c < o
	:: c + S < o -> c = c + S
	:: c + 2 * S < o -> c = c + 2 * S
	:: else -> ret = EAGAIN
	fi;
	if
	:: ret == 0 ->
#ifdef OVERWRITE
		lrb_swap_out(c)
#else
		if
		:: DELIVERED(c) -> s = IDX(c)
		:: else -> ret = EAGAIN
		fi
#endif
	:: else
	fi;
	if
	:: ret == 0 -> lrb_fill_subbuf(c, 0)
	:: else
	fi;
	c = 0;
	o = 0
}

/*
 * lrb_release(), for lrb_put_subbuf(). One step: the reader's own fields
 * (holding, spare) change with the one shared access.
 */
inline lrb_release()
{
#ifdef OVERWRITE
	d_step {
		holding = 0;
		if
		:: !held_consuming &&
		   wsb[IDX(held_pos)] == (spare | W_TAG(LAP(held_pos)) | W_NOREF) ->
			/* put the pages back where they were */
			wsb[IDX(held_pos)] = held_slot | W_TAG(LAP(held_pos)) | W_NOREF
		:: else ->
#ifndef BAD_NO_SWAP
			spare = held_slot
#else
			skip
#endif
		fi
	}
#else
	d_step {
		holding = 0;
		if
		:: held_consuming ->
			CHECK(consumed_never_back, held_pos + S > consumed);
			consumed = held_pos + S
		:: else
		fi
	}
#endif
}

active proctype reader()
{
	byte c, o, s, w, old, u, k, z, ret, ndisc, nread, nsnap;
	bool last;
	int readmask;

	d_step {	/* lrb_buf_alloc() */
#ifdef OVERWRITE
		spare = NSB;	/* entry i maps slot i, lap 0 */
		u = 0;
		do
		:: u < NSB -> wsb[u] = u; u++
		:: else -> break
		od;
		u = 0;
#endif
#ifndef CLOCK0
		CLK = CAP;	/* a buffer's first record is extended */
#endif			/* -DCLOCK0: it starts at 0, as a test clock does */
		u = 3;
		do
		:: u < NTS -> ts[u] = DEAD; u++
		:: else -> break
		od;
		u = 0;
		ready = 1
	}
	do
	:: lrb_get_next_subbuf();
		if
		:: ret == 0 ->
			lrb_release()
		:: ret != 0 && last ->
			break
#ifdef OVERWRITE
		:: else ->
			/*
			 * Nothing to take: sleep until a writer wakes the
			 * reader. Polling again before would fail the same
			 * way, so the reader never spins: a state where
			 * everybody waits is a deadlock, a cycle a livelock.
			 */
			atomic {
				woken ->
				waiting = 0;
				woken = 0;
				ret = 0
			}
#endif
		fi
#ifdef SNAPSHOT
	:: nsnap < NSNAP ->
		nsnap++;
		lrb_get_subbuf();
		if
		:: ret == 0 -> lrb_release()
		:: else -> ret = 0
		fi
#endif
	od;

	/*
	 * Drained after the last flush: every record attempted was refused,
	 * taken back, read, or is in a packet writers overwrote, and those
	 * packets are the ones lost_packets counts; nothing is left unread.
	 */
	atomic {
		k = 0;		/* packets skipped */
		o = 0;		/* records in them */
		u = 0;
		do
		:: u < NSEQ ->
			if
			:: readmask & (1 << u) ->
				nread = nread + recs_in_seq[u]
			:: else ->
				if
				:: u < SEQ(consumed) ->
					k++;
					o = o + recs_in_seq[u]
				:: else ->
					CHECK(accounting_exact, recs_in_seq[u] == 0)
				fi
			fi;
			u++
		:: else -> break
		od;
		CHECK(accounting_exact,
		      records + nlost + ndiscarded == NT + NI + (NW - 2) * NR &&
		      nlost == lost_full + lost_wrap &&
		      nread + o == records && k == lost_packets)
	}
}
