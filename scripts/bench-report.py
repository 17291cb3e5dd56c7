#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table and the document of make bench (scripts/bench.sh).

    bench-report.py RESULTS.tsv [--command CMD]
                    [--doc RST --images DIR [--analysis TEXT.inc]]

RESULTS.tsv holds the "BENCH<tab>section<tab>key<tab>value<tab>unit<tab>
label" lines of every part. Prints one table, each figure with its label,
then the brief's goals, met or missed. With --doc, writes the
reStructuredText document (what each part measures, the machine, the
command, the figures, the goals), then the hand-written TEXT.inc, and
its PNG plots (gnuplot) into DIR.
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import textwrap

SECTIONS = [
    ("kernel-uml", "In the kernel, one CPU (UML, one boot)",
     "lrb_event_write() beside ftrace's ring_buffer_lock_reserve() + copy + "
     "ring_buffer_unlock_commit() and a floor loop (local_clock() and a store "
     "of the header word and payload), in a KUnit suite "
     "(tests/kunit/bench_test.c, lrb_bench.bench_single) of a UML kernel "
     "built from Debian's linux-source-6.12 with ftrace's ring buffer. "
     "Both buffers are 8 x 64 KiB per CPU. Discard mode: each buffer is "
     "drained by its page-swapping reader between timed batches of a "
     "quarter of a buffer, so that nothing is lost (checked); overwrite "
     "mode: no reader. Millions of records per measurement, best of three "
     "interleaved rounds."),
    ("kernel-x86_64", "In the kernel, every CPU writing (x86_64, qemu TCG, 4 vCPUs)",
     "The same writers on each of the four vCPUs at once, with one reader "
     "kthread draining every buffer while they write "
     "(lrb_bench.bench_smp); each writer pauses, untimed, after each batch "
     "until its buffer has been drained. TCG distorts absolute times: the "
     "ratios are the result."),
    ("user", "In user space (one process)",
     "liblrb beside LTTng-UST (a tracepoint with the same payload into a "
     "flight-recorder channel of the same size, lttng-sessiond started and "
     "torn down by the benchmark) and a floor loop, contenders interleaved "
     "round by round in one process (tests/bench/user/)."),
    ("icount", "Instructions per record (callgrind)",
     "The fast paths under valgrind --tool=callgrind, counting only the "
     "writing loop (tests/bench/icount/): the user port (liblrb) and, in "
     "the kernel rows, the kernel port's fast path (port_kernel.h) built "
     "with the x86_64 kernel's code generation flags on stand-in headers "
     "whose primitives are the x86_64 kernel's instructions (unlocked "
     "local_t operations, per-CPU data and the preemption count through a "
     "segment register; tests/bench/icount/kport/kport.h), on the same "
     "lfence; rdtsc clock. make check compares these counts with "
     "tests/bench/icount/reference and fails on growth above 10%."),
    ("consumer-vm", "Consumers of lrb.ko's per-CPU files (Debian's kernel, qemu TCG)",
     "MB/s drained per CPU from a channel of 64 x 64 KiB sub-buffers per CPU, "
     "in Debian's 6.12 kernel under qemu (TCG, 4 vCPUs), by lrb-consumer-bench "
     "(tests/vm/bench/): the test client's writers fill every ring (discard "
     "mode) and stop; then each CPU's ring is drained by a thread pinned to "
     "that CPU, by splice (file to pipe to destination), mmap "
     "(GET_NEXT_SUBBUF, write() from the mapping, PUT_SUBBUF) or read(), "
     "into /dev/null or a file on tmpfs, and only the drain is timed. Each "
     "figure is the best of 20 drains of 4 MiB (84 MB per CPU), the six "
     "pairs taking turns fill by fill; every drain is checked against the "
     "buffer's counters and what reached tmpfs is verified record by record. "
     "Into /dev/null, mmap's write() never reads the mapping: that figure is "
     "the cost of the ioctl protocol alone. TCG distorts absolute times: "
     "the ratios are the result."),
    ("workload-vm", "Tracing a real workload (Debian's kernel, qemu TCG)",
     "The slowdown of a fixed workload traced by lrb and by ftrace, the same "
     "events recorded the same way, in Debian's 6.12 kernel under qemu (TCG, "
     "4 vCPUs; tests/vm/workload/). The workload, lrb-pingpong, is "
     "hackbench's pipe and thread mode: 8 pairs of threads pass a byte "
     "back and forth through pipes (6000 round trips each), while a thread "
     "reads the virtio disk with O_DIRECT (3000 blocks of 4 KiB), so that "
     "it is made of context switches, wakeups and device interrupts. It runs "
     "untraced; traced by lrb_sample_sched.ko (probes on sched_switch, "
     "sched_wakeup, irq_handler_entry and irq_handler_exit) recorded by "
     "lrb-record (splice into files on tmpfs); and traced by ftrace's "
     "events of the same four tracepoints recorded by trace-cmd record "
     "(splice of per_cpu/cpuN/trace_pipe_raw into files on tmpfs), both "
     "with 1 MiB of buffer per CPU. The three take turns in rotating order "
     "over 9 rounds in one boot; a slowdown is a run's wall time over the "
     "same round's untraced run, minus one (median, smallest and largest "
     "round). The guest's clock is qemu's instruction counter (-icount "
     "shift=0, single-threaded TCG): busy time counts instructions, 1 ns "
     "each, whatever the host's load; idle time (sleep=on) follows the "
     "host's clock, and is what spreads the rounds. CPU time added is the "
     "guest's user, kernel and interrupt time (/proc/stat) over the same "
     "round's untraced run. Events and losses are the tracers' own counts: "
     "lrb's records_written and lost counters (checked against its probes' "
     "attempts each run, and against lrb-dump in the last round), ftrace's "
     "read events and entries, overrun, commit overrun and dropped events "
     "(per_cpu/cpuN/stats, as trace-cmd saves them; checked against "
     "trace-cmd report in the last round)."),
]

GOALS = [
    ("kernel-uml", "ratio_lrb_ftrace_%s_%d" % (mode, size), "<=", 0.333,
     "kernel, %d-byte payload, %s: lrb at most 1/3 of ftrace's cost"
     % (size, mode))
    for mode in ("discard", "overwrite") for size in (8, 16, 64)
] + [
    ("icount", "kernel_overwrite_16_ir", "<=", 100.0,
     "kernel port, 16-byte payload, overwrite: at most 100 instructions "
     "per record"),
    ("user", "ratio_lrb_floor", "<=", 1.3,
     "user space, 1 thread: at most 1.3x the floor with the same clock"),
    ("user", "ratio_lrb_lttng", ">=", 3.0,
     "user space: at least 3x faster than LTTng-UST"),
    ("user", "lrb_scaling", ">=", 1.9,
     "user space: 2 threads on 2 cores give at least 1.9x one thread"),
    ("consumer-vm", "splice_vs_read_null", ">=", 1.5,
     "consumers (VM): splice at least 1.5x read into /dev/null"),
    ("consumer-vm", "splice_vs_read_tmpfs", ">=", 1.0,
     "consumers (VM): splice at least as fast as read into a tmpfs file"),
    ("workload-vm", "ratio_lrb_ftrace_slowdown", "<=", 0.5,
     "real workload (VM): lrb's slowdown at most half of ftrace's"),
]


def load(path):
    rows = []
    seen = set()
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 6 or parts[0] != "BENCH":
                continue
            _, section, key, value, unit, label = parts[:6]
            try:
                value = float(value)
            except ValueError:
                continue
            if (section, key) in seen:
                continue
            seen.add((section, key))
            rows.append((section, key, value, unit, label))
    return rows


def fmt(v):
    return "%.2f" % v if abs(v) < 100 else "%.0f" % v


def goals(rows):
    byk = {(s, k): v for s, k, v, _, _ in rows}
    out = []
    for section, key, op, target, text in GOALS:
        v = byk.get((section, key))
        if v is None:
            out.append((text, None, "not measured"))
            continue
        ok = v <= target if op == "<=" else v >= target
        if ok:
            verdict = "met"
        elif op == "<=":
            verdict = "missed: %.1fx the goal" % (v / target)
        else:
            verdict = "missed: %.0f%% of the goal" % (v / target * 100)
        out.append((text, v, verdict))
    return out


def print_table(rows):
    width = max([len(r[4]) for r in rows] + [20])
    for section, title, _ in SECTIONS + [(s, s, "") for s in
                                         sorted({r[0] for r in rows} -
                                                {s[0] for s in SECTIONS})]:
        sel = [r for r in rows if r[0] == section]
        if not sel:
            continue
        print("\n%s [%s]" % (title, section))
        for _, key, v, unit, label in sel:
            print("  %-*s %10s %s" % (width, label, fmt(v), unit))
    print("\nGoals (Documentation/benchmarks.rst; the brief's figures)")
    for text, v, verdict in goals(rows):
        print("  %-72s %8s  %s" % (text, "-" if v is None else fmt(v), verdict))


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return ""


def machine(results):
    cpu = sh("lscpu | sed -n 's/^Model name: *//p' | head -n 1") or platform.processor()
    return [
        ("Date", datetime.datetime.fromtimestamp(os.path.getmtime(results))
         .strftime("%Y-%m-%d %H:%M")),
        ("Commit", sh("git rev-parse --short HEAD") +
         (" (with uncommitted changes)" if sh("git status --porcelain -uno") else "")),
        ("CPU", "%s, %s online CPUs" % (cpu, os.cpu_count())),
        ("Memory", sh("free -g | awk '/^Mem:/ {print $2 \" GiB\"}'")),
        ("Host kernel", platform.release()),
        ("OS", sh(". /etc/os-release && echo $PRETTY_NAME")),
        ("Compiler", sh("gcc --version | head -n 1")),
        ("LTTng-UST", sh("dpkg-query -W -f '${Version}' liblttng-ust-dev 2>/dev/null") or "-"),
    ]


def gnuplot(script, png):
    with tempfile.NamedTemporaryFile("w", suffix=".gp", delete=False) as f:
        f.write('set terminal pngcairo noenhanced size 900,520 font "sans,11"\n'
                'set output "%s"\nset grid ytics\nset key top left\n' % png)
        f.write(script)
        name = f.name
    try:
        r = subprocess.run(["gnuplot", name], capture_output=True, text=True)
        if r.returncode != 0:
            print("bench-report: gnuplot failed for %s: %s" % (png, r.stderr.strip()),
                  file=sys.stderr)
            return False
        return True
    finally:
        os.unlink(name)


def plot_payload(rows, png):
    """ns/record against payload size, per contender and mode (UML)."""
    byk = {k: v for s, k, v, _, _ in rows if s == "kernel-uml"}
    sizes = [8, 16, 64, 256]
    series = [(kind, mode) for mode in ("discard", "overwrite")
              for kind in ("lrb", "ftrace", "floor")]
    data = []
    for size in sizes:
        vals = [byk.get("%s_%s_%d_ns" % (k, m, size)) for k, m in series]
        if None in vals:
            return False
        data.append("%d %s" % (size, " ".join("%.3f" % v for v in vals)))
    plots = []
    for i, (kind, mode) in enumerate(series):
        dash = "" if mode == "discard" else " dt 2"
        color = {"lrb": "#1b7837", "ftrace": "#b2182b", "floor": "#777777"}[kind]
        plots.append('$d using 1:%d with linespoints lw 2 lc rgb "%s"%s '
                     'title "%s, %s"' % (i + 2, color, dash, kind, mode))
    return gnuplot("$d << EOD\n%s\nEOD\n"
                   'set title "In the kernel (UML, one CPU): cost per record by payload size"\n'
                   'set xlabel "payload bytes"\nset ylabel "ns per record"\n'
                   "set logscale x 2\nset xrange [7:300]\nset xtics (8, 16, 64, 256)\n"
                   "set yrange [0:*]\n"
                   "plot %s\n" % ("\n".join(data), ", ".join(plots)), png)


def plot_bars(rows, section, bars, title, ylabel, png):
    """A bar per (key, name) of @bars whose key is in @section."""
    byk = {k: v for s, k, v, _, _ in rows if s == section}
    sel = [(name, byk[k]) for k, name in bars if k in byk]
    if not sel:
        return False
    data = "\n".join('"%s" %.3f' % (name, v) for name, v in sel)
    return gnuplot("$d << EOD\n%s\nEOD\n"
                   'set title "%s"\nset ylabel "%s"\nset style fill solid 0.8\n'
                   "set boxwidth 0.6\nset yrange [0:*]\nset xtics rotate by -20\n"
                   "unset key\n"
                   'plot $d using 0:2:xtic(1) with boxes lc rgb "#2166ac", '
                   "'' using 0:2:(sprintf(\"%%.1f\", $2)) with labels offset 0,0.8\n"
                   % (data, title, ylabel), png)


def wrap(text):
    return textwrap.fill(text, 76, break_on_hyphens=False) + "\n"


def rst_table(header, body):
    cols = list(zip(*([header] + body)))
    w = [max(len(str(c)) for c in col) for col in cols]
    sep = "  ".join("=" * x for x in w)
    lines = [sep, "  ".join(str(h).ljust(x) for h, x in zip(header, w)).rstrip(), sep]
    lines += ["  ".join(str(c).ljust(x) for c, x in zip(row, w)).rstrip() for row in body]
    lines.append(sep)
    return "\n".join(lines)


def write_doc(rows, results, path, images, command, analysis):
    os.makedirs(images, exist_ok=True)
    rel = os.path.relpath(images, os.path.dirname(path))
    pngs = []
    if plot_payload(rows, os.path.join(images, "bench-kernel-payload.png")):
        pngs.append(("kernel-uml", "bench-kernel-payload.png",
                     "Cost per record by payload size, in the kernel (UML)"))
    if plot_bars(rows, "user",
                 [("floor_ns", "floor"), ("lrb_1t_ns", "liblrb"),
                  ("lrb_2t_ns", "liblrb, 2 threads"),
                  ("lrb_discard_ns", "liblrb discard"),
                  ("lrb_mono_ns", "liblrb, CLOCK_MONOTONIC"),
                  ("lttng_1t_ns", "LTTng-UST"),
                  ("lttng_2t_ns", "LTTng-UST, 2 threads")],
                 "User space: cost per record and thread, 16-byte payload",
                 "ns per record", os.path.join(images, "bench-user.png")):
        pngs.append(("user", "bench-user.png", "User space: cost per record"))
    consumer = [("%s_%s_mbps" % (c, d), "%s, %s" % (c, dn))
                for d, dn in (("null", "/dev/null"), ("tmpfs", "tmpfs file"))
                for c in ("splice", "mmap", "read")]
    if plot_bars(rows, "consumer-vm", consumer,
                 "Consumers in the VM: MB/s drained per CPU (mean of the vCPUs)",
                 "MB/s", os.path.join(images, "bench-consumer.png")):
        pngs.append(("consumer-vm", "bench-consumer.png",
                     "MB/s drained per CPU by each consumer (VM)"))
    smp = [("smp_%s_%s_ns" % (k, m), "%s, %s" % (k, m))
           for m in ("discard", "overwrite") for k in ("lrb", "ftrace")]
    if plot_bars(rows, "kernel-x86_64", smp,
                 "Every vCPU writing, with a reader (x86_64, qemu TCG)",
                 "ns per record (TCG)", os.path.join(images, "bench-kernel-smp.png")):
        pngs.append(("kernel-x86_64", "bench-kernel-smp.png",
                     "Cost per record with a writer on every vCPU and a reader"))

    out = []
    out.append(".. SPDX-License-Identifier: GPL-2.0\n")
    out.append(".. Written by scripts/bench-report.py (make bench): edit the "
               "script, not this file.\n")
    out.append("==========\nBenchmarks\n==========\n")
    out.append(wrap("``%s`` measures lrb beside the anchors it is judged against, "
               "ftrace's ring buffer in the kernel and LTTng-UST in user space, "
               "in one run on one machine, and rewrites this page with the "
               "figures and plots of that run. The machine is shared and "
               "noisy, so every contender is measured beside the others in "
               "the same run (best of several interleaved rounds), and the "
               "ratios are the result; instruction counts (callgrind) guard "
               "against regressions in ``make check``. "
               "``scripts/bench.sh PART...`` runs some parts only; "
               "``build/bench/`` keeps each part's log and ``results.tsv``."
               % command))
    out.append("The run\n=======\n")
    out.append("\n".join(":%s: %s" % kv for kv in machine(results)) + "\n")
    out.append("Goals\n=====\n")
    out.append(rst_table(["Goal", "Measured", "Verdict"],
                         [(t, "-" if v is None else fmt(v), verdict)
                          for t, v, verdict in goals(rows)]) + "\n")
    for section, title, text in SECTIONS:
        sel = [r for r in rows if r[0] == section]
        out.append("%s\n%s\n" % (title, "=" * len(title)))
        out.append(wrap(text))
        if not sel:
            out.append("Not measured in this run.\n")
            continue
        out.append(rst_table(["Figure", "Value", "Unit", "Key"],
                             [(label, fmt(v), unit, "``%s``" % key)
                              for _, key, v, unit, label in sel]) + "\n")
        for s, png, caption in pngs:
            if s == section:
                out.append(".. figure:: %s/%s\n\n   %s\n" % (rel, png, caption))
    if analysis and os.path.exists(analysis):
        with open(analysis) as f:
            out.append(f.read())
    with open(path, "w") as f:
        f.write("\n".join(out))
    print("bench-report: wrote %s and %d plot(s) in %s" % (path, len(pngs), images),
          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--command", default="make bench")
    ap.add_argument("--doc")
    ap.add_argument("--images")
    ap.add_argument("--analysis", help="hand-written text appended to the document")
    a = ap.parse_args()
    rows = load(a.results)
    if not rows:
        print("bench-report: no figures in %s: every part failed (see build/bench/*.log)"
              % a.results, file=sys.stderr)
        return 1
    print_table(rows)
    if a.doc:
        write_doc(rows, a.results, a.doc, a.images or os.path.dirname(a.doc), a.command,
                  a.analysis)
    return 0


if __name__ == "__main__":
    sys.exit(main())
