#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The figures of make bench's workload-vm part, from the guest's runs.txt.

    report.py RUNS.txt

RUNS.txt has a line "RUN round config elapsed_ns events lost bytes ctxt
intr user sys idle irq rec" per run of lrb-pingpong
(tests/vm/workload/10-workload.sh; the last five are USER_HZ ticks). A
configuration's slowdown in a round is its wall time over that round's
untraced run, minus one; the figures are the median over the rounds, with
the smallest and largest. Prints a table, then the BENCH lines
(section workload-vm). Exits non-zero if a round lacks a configuration.
"""
import statistics
import sys

CONFIGS = ("none", "lrb", "ftrace")
FIELDS = ("ns", "events", "lost", "bytes", "ctxt", "intr", "user", "sys", "idle",
          "irq", "rec")
HZ = 100.0  # USER_HZ
NAMES = {"none": "untraced", "lrb": "lrb (lrb-record)", "ftrace": "ftrace (trace-cmd)"}


def load(path):
    runs = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) != len(FIELDS) + 3 or p[0] != "RUN":
                continue
            rnd, cfg = int(p[1]), p[2]
            runs.setdefault(rnd, {})[cfg] = dict(zip(FIELDS, map(int, p[3:])))
    return runs


def bench(key, value, unit, label):
    print("BENCH\tworkload-vm\t%s\t%.6g\t%s\t%s" % (key, value, unit, label))


def main():
    runs = load(sys.argv[1])
    rounds = sorted(r for r in runs if all(c in runs[r] for c in CONFIGS))
    missing = sorted(set(runs) - set(rounds))
    if missing or not rounds:
        print("workload-vm: rounds %s lack a configuration (of %s): see the guest's "
              "output" % (missing or "(all)", ", ".join(CONFIGS)), file=sys.stderr)
        return 1
    med = statistics.median
    slow = {c: [runs[r][c]["ns"] / runs[r]["none"]["ns"] - 1 for r in rounds]
            for c in ("lrb", "ftrace")}
    print("%-20s %10s %22s %12s %8s %9s %9s %9s" % (
        "configuration", "wall ms", "slowdown % med [min,max]", "events/run",
        "lost", "MB/run", "ctxt/run", "intr/run"))
    for c in CONFIGS:
        col = lambda k: [runs[r][c][k] for r in rounds]
        s = ("%6.1f [%5.1f,%5.1f]" % tuple(100 * x for x in
             (med(slow[c]), min(slow[c]), max(slow[c])))) if c in slow else "-"
        print("%-20s %10.0f %22s %12.0f %8d %9.2f %9.0f %9.0f" % (
            NAMES[c], med(col("ns")) / 1e6, s, med(col("events")), sum(col("lost")),
            med(col("bytes")) / 1e6, med(col("ctxt")), med(col("intr"))))
    print("(%d rounds in one boot, configurations in rotating order; lost: "
          "summed over the rounds)" % len(rounds))
    print("\nCPU time during a run, seconds of the 4 vCPUs (median):")
    print("%-20s %8s %8s %8s %8s %10s" % ("configuration", "user", "kernel", "irq",
                                          "idle", "recorder"))
    for c in CONFIGS:
        col = lambda k: med([runs[r][c][k] for r in rounds]) / HZ
        print("%-20s %8.2f %8.2f %8.2f %8.2f %10.2f" % (
            NAMES[c], col("user"), col("sys"), col("irq"), col("idle"), col("rec")))
    none = [runs[r]["none"] for r in rounds]
    bench("none_ms", med([x["ns"] for x in none]) / 1e6, "ms",
          "untraced workload, wall time (median)")
    bench("ctxt_per_run", med([x["ctxt"] for x in none]), "switches",
          "context switches per untraced run")
    bench("intr_per_run", med([x["intr"] for x in none]), "interrupts",
          "interrupts per untraced run (/proc/stat intr)")
    for c in ("lrb", "ftrace"):
        col = [runs[r][c] for r in rounds]
        bench("%s_slowdown_pct" % c, 100 * med(slow[c]), "%",
              "%s: slowdown, median of %d rounds" % (NAMES[c], len(rounds)))
        bench("%s_slowdown_min_pct" % c, 100 * min(slow[c]), "%",
              "%s: slowdown, smallest round" % NAMES[c])
        bench("%s_slowdown_max_pct" % c, 100 * max(slow[c]), "%",
              "%s: slowdown, largest round" % NAMES[c])
        bench("%s_events" % c, med([x["events"] for x in col]), "events",
              "%s: events recorded per run (median)" % NAMES[c])
        bench("%s_lost" % c, sum(x["lost"] for x in col), "events",
              "%s: events lost, all rounds" % NAMES[c])
        bench("%s_mb" % c, med([x["bytes"] for x in col]) / 1e6, "MB",
              "%s: trace size per run (median)" % NAMES[c])
        bench("%s_busy_extra_s" % c,
              med([(runs[r][c]["user"] + runs[r][c]["sys"] + runs[r][c]["irq"]) -
                   (runs[r]["none"]["user"] + runs[r]["none"]["sys"] +
                    runs[r]["none"]["irq"]) for r in rounds]) / HZ, "s",
              "%s: CPU time added to a run, all vCPUs (median)" % NAMES[c])
        bench("%s_idle_extra_s" % c,
              med([runs[r][c]["idle"] - runs[r]["none"]["idle"] for r in rounds]) / HZ,
              "s", "%s: idle time added to a run, all vCPUs (median)" % NAMES[c])
        bench("%s_recorder_s" % c, med([x["rec"] for x in col]) / HZ, "s",
              "%s: the recorder's CPU time during a run (median)" % NAMES[c])
    f = med(slow["ftrace"])
    if f > 0:
        bench("ratio_lrb_ftrace_slowdown", med(slow["lrb"]) / f, "x",
              "lrb's slowdown over ftrace's (medians)")
    busy = {c: med([sum(runs[r][c][k] - runs[r]["none"][k] for k in ("user", "sys", "irq"))
                    for r in rounds]) for c in ("lrb", "ftrace")}
    if busy["ftrace"] > 0:
        bench("ratio_lrb_ftrace_cpu", busy["lrb"] / busy["ftrace"], "x",
              "lrb's CPU time added over ftrace's (medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
