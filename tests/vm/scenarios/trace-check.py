#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side checks of the driver sample's traces: lrb-dump against
babeltrace2 event for event, and lrb-record's rotation (77-record-max-files,
78-record-chunks): every stream file or trace chunk left is read alone by
babeltrace2 and lrb-dump, and the driver sample's records in them, keyed
by (cpu, ctx, seq), are checked against its own counts ("written"):

  agree TRACE                      lrb-dump prints the events babeltrace2
                                   prints: timestamps, names, values

  files TRACE MAX_SIZE MAX_FILES   each CPU's files CHANNEL_CPU_I: at most
                                   MAX_FILES, each at most MAX_SIZE bytes;
                                   the records left per (cpu, ctx) are a
                                   gap-free run ending at the last attempt
  complete TRACE                   every attempt of every (cpu, ctx) exactly
                                   once, as lrb-dump and babeltrace2 read
                                   it (91-persist: a recovered run)
  chunks TRACE [EARLY]             DIR/archives/BEGIN-END-ID, IDs 0..n-1;
                                   together every attempt exactly once, each
                                   chunk's after the previous one's; EARLY
                                   (copied while recording) equals its chunk

The sample's counts are read from "written" beside TRACE.

Prints "FAIL ..." per failed check and ends with
"trace-check: N passed, M failed". Not a scenario: the .host.sh run it.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

passed = 0
failed = 0
DUMP = os.path.join(os.environ.get("LRB_ROOT", "."), "build/tools/lrb-dump")
EVENT = re.compile(r"seq = (\d+), cpu = (\d+), ctx = (\d+)")
CHUNK = re.compile(r"^(\d{8}T\d{6}[+-]\d{4})-(\d{8}T\d{6}[+-]\d{4})-(\d+)$")


def check(what, cond):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL %s" % what)
    return cond


def written(trace):
    """(cpu, ctx) -> attempts, and the total lost, from the sample's file
    beside the trace."""
    att, lost = {}, 0
    with open(os.path.join(os.path.dirname(os.path.abspath(trace)), "written")) as f:
        for line in f:
            m = re.match(r"cpu(\d+) attempts=\d+ lost=(\d+) task=(\d+) irq=(\d+)", line)
            if m:
                cpu = int(m.group(1))
                lost += int(m.group(2))
                att[(cpu, 0)] = int(m.group(3))
                att[(cpu, 1)] = int(m.group(4))
    return att, lost


def events(text, sep):
    """(timestamp, name, every integer of the payload in order) per event
    line of babeltrace2 --clock-cycles (sep "}, {") or lrb-dump
    --clock-cycles (sep ": ")."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^\[(\d+)\].*? (\w+): ", line)
        if not m or sep not in line or m.group(2) in ("discarded", "lost"):
            continue
        payload = re.sub(r"\[\d+\] = ", "", line.split(sep, 1)[1])
        out.append((int(m.group(1)), m.group(2),
                    tuple(int(v) for v in re.findall(r"-?\b\d+\b", payload))))
    return sorted(out)


def read_trace(d, what):
    """The (cpu, ctx, seq) of every event babeltrace2 reads in trace d;
    lrb-dump must print the same events: timestamps, names, values."""
    p = subprocess.run(["babeltrace2", "--clock-cycles", d],
                       capture_output=True, text=True)
    if not check("babeltrace2 reads %s alone (exit %d: %s)" %
                 (what, p.returncode, p.stderr.strip()[:300]), p.returncode == 0):
        return []
    recs = [(int(m.group(2)), int(m.group(3)), int(m.group(1)))
            for m in EVENT.finditer(p.stdout)]
    check("babeltrace2 prints an io_complete line per event in %s" % what,
          len(recs) == p.stdout.count("io_complete"))
    q = subprocess.run([DUMP, "--clock-cycles", d], capture_output=True, text=True)
    m = re.search(r"stream files?, (\d+) events", q.stderr)
    check("lrb-dump reads %s alone with babeltrace2's %d events (exit %d: %s)" %
          (what, len(recs), q.returncode, q.stderr.strip()[-300:]),
          q.returncode == 0 and m and int(m.group(1)) == len(recs))
    want, got = events(p.stdout, "}, {"), events(q.stdout, ": ")
    diff = [(a, b) for a, b in zip(want, got) if a != b][:1]
    check("lrb-dump and babeltrace2 agree on every event of %s (%d, %d; first difference %s)" %
          (what, len(want), len(got), diff),
          len(want) == len(recs) and want == got)
    return recs


def alone(trace, files):
    """A trace directory of the metadata of trace and files only."""
    d = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(trace)))
    shutil.copy(os.path.join(trace, "metadata"), d)
    for f in files:
        shutil.copy(f, d)
    return d


def check_files(trace, max_size, max_files):
    att, lost = written(trace)
    check("the sample lost nothing (lost=%d): the newest records are all there" % lost,
          lost == 0)
    per_cpu = {}
    for name in os.listdir(trace):
        m = re.match(r"^e2e_(\d+)_(\d+)$", name)
        if m:
            per_cpu.setdefault(int(m.group(1)), []).append(os.path.join(trace, name))
        else:
            check("%s in %s is the metadata or the summary" % (name, trace),
                  name in ("metadata", ".lrb-record.json"))
    check("a stream file per CPU of the sample (%s)" % sorted(per_cpu),
          sorted(per_cpu) == sorted({c for c, _ in att}))
    seqs = {}
    for cpu, files in sorted(per_cpu.items()):
        check("cpu%d: %d files, at most --max-files %d" % (cpu, len(files), max_files),
              len(files) <= max_files)
        check("cpu%d: the oldest files were removed (%d kept of more)" % (cpu, len(files)),
              len(files) == max_files)
        for f in files:
            size = os.path.getsize(f)
            check("%s: %d bytes, at most --max-size %d" % (f, size, max_size),
                  0 < size <= max_size)
            d = alone(trace, [f])
            recs = read_trace(d, os.path.basename(f))
            shutil.rmtree(d)
            check("%s: records of cpu%d only (%s)" %
                  (f, cpu, sorted({c for c, _, _ in recs})),
                  recs and all(c == cpu for c, _, _ in recs))
            for c, x, s in recs:
                seqs.setdefault((c, x), []).append(s)
    for key, n in sorted(att.items()):
        got = sorted(seqs.get(key, []))
        if not check("cpu%d ctx %d: records left (%d of %d attempts)" %
                     (key[0], key[1], len(got), n), 0 < len(got) < n):
            continue
        check("cpu%d ctx %d: the records left are seq %d..%d, each once, up to the last attempt %d" %
              (key[0], key[1], got[0], got[-1], n - 1),
              got == list(range(got[0], n)))


def check_complete(trace):
    att, lost = written(trace)
    check("the sample lost nothing (lost=%d)" % lost, lost == 0)
    seqs = {}
    for c, x, s in read_trace(trace, trace):
        seqs.setdefault((c, x), []).append(s)
    check("records of the sample's CPUs and contexts only (%s)" %
          sorted(set(seqs) - set(att)), set(seqs) <= set(att))
    for key, n in sorted(att.items()):
        got = sorted(seqs.get(key, []))
        check("cpu%d ctx %d: seq 0..%d, each once (%d records)" %
              (key[0], key[1], n - 1, len(got)), n > 0 and got == list(range(n)))


def check_chunks(trace, early):
    att, lost = written(trace)
    check("the sample lost nothing (lost=%d): every record is in a chunk" % lost,
          lost == 0)
    arch = os.path.join(trace, "archives")
    left = sorted(set(os.listdir(trace)) - {"archives", ".lrb-record.json"})
    check("only archives/ and the summary are left in %s (%s)" % (trace, left), not left)
    chunks = {}
    for name in os.listdir(arch):
        m = CHUNK.match(name)
        if check("%s is named BEGIN-END-ID as lttng rotate names chunks" % name, m):
            check("%s: BEGIN <= END" % name, m.group(1) <= m.group(2))
            chunks[int(m.group(3))] = name
    check("chunks 0 to %d, at least 3 (%s)" % (len(chunks) - 1, sorted(chunks)),
          len(chunks) >= 3 and sorted(chunks) == list(range(len(chunks))))
    seen = {}
    prev = {}
    for i in sorted(chunks):
        cur = {}
        for c, x, s in read_trace(os.path.join(arch, chunks[i]), "chunk " + chunks[i]):
            cur.setdefault((c, x), []).append(s)
        for key, s in cur.items():
            seen.setdefault(key, []).extend(s)
            if key in prev:
                check("chunk %d: cpu%d ctx %d's records after chunk %d's" %
                      (i, key[0], key[1], i - 1), min(s) > max(prev[key]))
        prev.update(cur)
    for key, n in sorted(att.items()):
        got = sorted(seen.get(key, []))
        check("cpu%d ctx %d: the chunks hold seq 0..%d, each once (%d records)" %
              (key[0], key[1], n - 1, len(got)), got == list(range(n)))
    if not early:
        return
    names = os.listdir(early) if os.path.isdir(early) else []
    if check("a chunk was copied while recording (%s)" % names, len(names) == 1):
        e = os.path.join(early, names[0])
        read_trace(e, "the early copy of " + names[0])
        p = subprocess.run(["diff", "-r", e, os.path.join(arch, names[0])],
                           capture_output=True, text=True)
        check("the chunk copied while recording is the chunk at the end (%s)" %
              p.stdout[:200], p.returncode == 0)


if sys.argv[1] == "agree":
    read_trace(sys.argv[2], sys.argv[2])
elif sys.argv[1] == "complete":
    check_complete(sys.argv[2])
elif sys.argv[1] == "files":
    check_files(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
else:
    check_chunks(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
print("trace-check: %d passed, %d failed" % (passed, failed))
