#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of a recovered flight recorder (make vmtest-crash): the trace
lrb-record made of driver-fr.previous, read by babeltrace2, against the
recovered channel's stats and the driver sample's last sequence numbers
before the crash (tests/vm/crash/driver.py).

  check.py DIR crash|corrupt     check one export: DIR/trace, DIR/stats,
                                 DIR/last-written.json ("CPU,CTX": the
                                 next sequence number, i.e. attempts)
  check.py --same DIR1 DIR2      the two recoveries are the same run
  check.py --summary DIR...      the closing figures of crash exports:
                                 per CPU the records recovered, how far
                                 the last recovered is behind the last
                                 written, losses by cause, recovery time

A crash export must hold, per CPU and context, a run of the sample's
sequence numbers with every field as the sample computes it, gaps only
where babeltrace2 reports discarded events, no discarded count going
back, the last one at most the in-flight records and what recovery
counted as torn behind the last written; the ring's packets kept plus
dropped are the ring. A corrupt
export must be read by babeltrace2, hold what its stats say, and have no
more damaged records than bytes were overwritten.

Prints a line per check; "check: N passed, M failed" at the end.
"""
import json
import os
import re
import subprocess
import sys

M64 = (1 << 64) - 1
# io_complete: 34 bytes of fixed fields, the sample's default size=64,
# behind a 4-byte compact header at least
REC_MIN = 64 + 4
NUM_SUBBUF = 16
EVENT = re.compile(
    r"io_complete: \{ cpu_id = (\d+)[^}]*\}, \{ seq = (\d+), cpu = (\d+), ctx = (\d+), "
    r"rq_op = (\d+), nr_sectors = (\d+), dev = (\d+), sector = (\d+), "
    r"latency_ns = (\d+), data_len = (\d+), data = \[(.*)\] \}")
DISCARD = re.compile(r"Tracer discarded (\d+) (events?|packets?) .*_(\d+)\" \(stream class")
CAUSES = ("slot", "header", "stale", "opening", "commit", "uncommitted", "record", "order")
# dropped at the writers' end of the ring: records there are torn, or
# behind a hole
TAIL_CAUSES = ("opening", "commit", "uncommitted")


def expected(seq, cpu, ctx, data_len):
    """The fields the sample writes for (seq, cpu, ctx): samples/kernel/lrb_sample.h."""
    h = (((seq + 1) * 0x9E3779B97F4A7C15) & M64) ^ (cpu << 8 | ctx)
    h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & M64
    h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & M64
    h ^= h >> 31
    return (h & 3, 8 << ((h >> 2) % 6), 259 << 20 | ((h >> 8) & 3),
            ((h >> 10) & 0xFFFFFFF) * 8, 20000 + ((h >> 40) % 980000), data_len,
            [(seq + i) & 0xFF for i in range(data_len)])


def read_stats(path):
    """cpu -> {key: int or (packets, records, bytes)}; plus 'run' line."""
    per, run = {}, {}
    with open(path) as f:
        for line in f:
            if not line.startswith("recovery "):
                continue
            words = line.split()
            kv = dict(w.split("=", 1) for w in words[1:] if "=" in w)
            if words[1].startswith("cpu"):
                d = {}
                for k, v in kv.items():
                    if k.startswith("drop_"):
                        d[k[5:]] = tuple(int(x) for x in v.split("/"))
                    elif k == "untrusted":
                        d[k] = v
                    else:
                        d[k] = int(v)
                per[int(words[1][3:])] = d
            else:
                run = kv
    return per, run


def read_trace(trace):
    """(events, discarded per cpu, babeltrace2's status and stderr)."""
    p = subprocess.run(["babeltrace2", "--clock-cycles", trace],
                       capture_output=True, text=True)
    evs = []
    for line in p.stdout.splitlines():
        m = EVENT.search(line)
        if not m:
            evs.append(None)
            continue
        v = [int(x) for x in m.groups()[:10]]
        data = [int(x) for x in re.findall(r"\] = (\d+)", m.group(11))]
        evs.append((v[0], v[1], v[2], v[3], tuple(v[4:10]), data))
    disc, back = {}, {}
    for m in DISCARD.finditer(p.stderr):
        n, cpu = int(m.group(1)), int(m.group(3))
        # a count that went back is printed as a 64-bit difference
        if n >= 1 << 63:
            back.setdefault(cpu, []).append(m.group(2))
        elif m.group(2).startswith("event"):
            disc[cpu] = disc.get(cpu, 0) + n
    return evs, (disc, back), p


def corrupted(d):
    with open(os.path.join(d, "corrupted")) as f:
        return int(f.read())


def check_run(d, mode):
    """[(what, ok, detail)] for the export in d."""
    res = []

    def check(what, ok, detail=""):
        res.append((what, bool(ok), detail))
        return ok

    trace = os.path.join(d, "trace")
    evs, (disc, back), p = read_trace(trace)
    if not check("babeltrace2 reads the recovered trace", p.returncode == 0,
                 "" if p.returncode == 0 else
                 "exit %d: %s" % (p.returncode, p.stderr.strip()[:300])):
        return res
    stats, run = read_stats(os.path.join(d, "stats"))
    with open(os.path.join(d, "last-written.json")) as f:
        nxt = {tuple(int(x) for x in k.split(",")): v for k, v in json.load(f).items()}
    unparsed = sum(1 for e in evs if e is None)
    check("every line babeltrace2 prints is an io_complete event", unparsed == 0,
          "%d other lines" % unparsed)
    evs = [e for e in evs if e]
    bad = [e for e in evs if e[0] != e[2] or
           (e[4], e[5]) != (expected(e[1], e[2], e[3], e[4][5])[:6],
                            expected(e[1], e[2], e[3], e[4][5])[6])]
    seqs = {}
    for e in evs:
        seqs.setdefault((e[0], e[3]), []).append(e[1])
    cpus = sorted({c for c, _ in nxt})
    for cpu in cpus:
        n = sum(1 for e in evs if e[0] == cpu)
        st = stats.get(cpu, {})
        check("cpu%d: the trace holds the %s records the stats say were kept" %
              (cpu, st.get("records")), n == st.get("records"), "%d in the trace" % n)
    if mode == "corrupt":
        check("damaged records (%d) at most the bytes overwritten" % len(bad),
              len(bad) <= corrupted(d))
        return res
    check("every record's fields and data are the sample's (%d records)" % len(evs),
          not bad, "first damaged: %s" % (bad[:1],))
    for cpu in cpus:
        st = stats.get(cpu, {})
        # a crash tears no counter: recovery must find them all consistent
        check("cpu%d: recovery trusts the region's loss counters (untrusted=%s)" %
              (cpu, st.get("untrusted")), st.get("untrusted") == "none")
        check("cpu%d: no discarded count goes back from one packet to the next" % cpu,
              not back.get(cpu), "babeltrace2 printed %s" % back.get(cpu))
        gaps = tail = 0
        for ctx in (0, 1):
            s = seqs.get((cpu, ctx), [])
            last = nxt[(cpu, ctx)] - 1
            if not check("cpu%d ctx %d: records recovered" % (cpu, ctx), s):
                continue
            check("cpu%d ctx %d: seq %d..%d increasing, each once" % (cpu, ctx, s[0], s[-1]),
                  all(a < b for a, b in zip(s, s[1:])))
            gaps += (s[-1] - s[0] + 1) - len(s)
            dist = last - s[-1]
            check("cpu%d ctx %d: nothing after the last written, %d (last recovered %d)" %
                  (cpu, ctx, last, s[-1]), dist >= 0)
            tail += max(dist, 0)
        check("cpu%d: the gaps (%d records) are within the %d babeltrace2 reports discarded" %
              (cpu, gaps, disc.get(cpu, 0)), gaps <= disc.get(cpu, 0))
        # a torn record in an older packet (its writer interrupted, the
        # nested one went on into the next packet) cuts records there too
        dropped_recs = sum(st.get(c, (0, 0, 0))[1] + -(-st.get(c, (0, 0, 0))[2] // REC_MIN)
                           for c in CAUSES)
        if not dropped_recs:
            check("cpu%d: no gap (%d records) where recovery dropped nothing" % (cpu, gaps),
                  gaps == 0)
        else:
            check("cpu%d: the gaps (%d records) at most what recovery dropped (%d records)" %
                  (cpu, gaps, dropped_recs), gaps <= dropped_recs)
        torn = sum(st.get(c, (0, 0, 0))[2] for c in TAIL_CAUSES)
        bound = 2 + torn // REC_MIN
        check("cpu%d: %d records written after the last recovered, at most the 2 in "
              "flight and the %d bytes dropped as torn hold (%d)" % (cpu, tail, torn, bound),
              tail <= bound)
        dropped = sum(st.get(c, (0, 0, 0))[0] for c in CAUSES)
        check("cpu%d: the ring's %d packets: %d kept + %d dropped" %
              (cpu, NUM_SUBBUF, st.get("packets", 0), dropped),
              st.get("packets", 0) + dropped == NUM_SUBBUF)
    return res


def same_run(d1, d2):
    res = []
    _, r1 = read_stats(os.path.join(d1, "stats"))
    _, r2 = read_stats(os.path.join(d2, "stats"))
    res.append(("the same run id (%s, %s)" % (r1.get("run_id"), r2.get("run_id")),
                r1.get("run_id") and r1.get("run_id") == r2.get("run_id"), ""))
    e1 = [e for e in read_trace(os.path.join(d1, "trace"))[0] if e]
    e2 = [e for e in read_trace(os.path.join(d2, "trace"))[0] if e]
    res.append(("the same %d records" % len(e1), e1 and e1 == e2,
                "%d and %d" % (len(e1), len(e2))))
    return res


def summary(dirs):
    """The closing figures of crash exports, a table per export."""
    out = []
    for d in dirs:
        stats, run = read_stats(os.path.join(d, "stats"))
        with open(os.path.join(d, "last-written.json")) as f:
            nxt = {tuple(int(x) for x in k.split(",")): v
                   for k, v in json.load(f).items()}
        evs, (disc, _), _ = read_trace(os.path.join(d, "trace"))
        evs = [e for e in evs if e]
        out.append("summary %s: recovery took %s us (run %s)" %
                   (os.path.basename(d), run.get("time_us"), run.get("run_id")))
        out.append("summary %s: %4s %8s %13s %13s %10s %s" %
                   (os.path.basename(d), "cpu", "records", "behind task",
                    "behind irq", "bt discard", "losses by cause"))
        for cpu in sorted({c for c, _ in nxt}):
            st = stats.get(cpu, {})
            behind = []
            for ctx in (0, 1):
                s = [e[1] for e in evs if e[0] == cpu and e[3] == ctx]
                behind.append("%d" % (nxt[(cpu, ctx)] - 1 - s[-1]) if s else "-")
            causes = ["lost_%s=%d" % (c, st.get("lost_" + c, 0))
                      for c in ("full", "wrap", "big", "nest", "overwrite")]
            causes += ["drop_%s=%d/%d/%d" % ((c,) + st[c]) for c in CAUSES
                       if st.get(c, (0, 0, 0)) != (0, 0, 0)]
            out.append("summary %s: %4d %8d %13s %13s %10d %s untrusted=%s" %
                       (os.path.basename(d), cpu, st.get("records", 0), behind[0],
                        behind[1], disc.get(cpu, 0), " ".join(causes),
                        st.get("untrusted")))
    return out


def main():
    if sys.argv[1] == "--summary":
        print("\n".join(summary(sys.argv[2:])))
        return 0
    if sys.argv[1] == "--same":
        res = same_run(sys.argv[2], sys.argv[3])
    else:
        res = check_run(sys.argv[1], sys.argv[2])
    for what, ok, detail in res:
        print("%s: %s%s" % (what, "ok" if ok else "FAIL", " (%s)" % detail if detail else ""))
    n = sum(1 for r in res if r[1])
    print("check: %d passed, %d failed" % (n, len(res) - n))
    return 0 if n == len(res) else 1


if __name__ == "__main__":
    sys.exit(main())
