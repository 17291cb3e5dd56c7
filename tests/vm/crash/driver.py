#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The host side of make vmtest-crash (tests/vm/crash/run.sh builds, then
runs this): one qemu process, booted and crashed several times; the
guest's agent (guest/10-agent.sh) runs the commands sent here on its
second serial port (a unix socket), and qemu's QMP socket stops, reads and
resets the machine.

Each crash is followed by a recovery boot that records the previous run
into a trace and exports it; check.py checks it against the sample's last
sequence numbers before the crash: printed by lrb_vm_crash at panic on the
console, or, for a reset, read here from guest memory with the machine
stopped.

Prints "vmtest-crash: <check>: ok|FAIL" lines and ends with
"vmtest-crash: N passed, M failed"; exit status 1 if anything failed.
"""
import argparse
import json
import os
import random
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402

REGION = "16M:4096:lrb"
# seconds the writers write before a crash: at rate=0 they wrap the ring
# many times over
WRITE_SECONDS = 2
# bytes overwritten, and where (lrb_vm_crash.ko's kinds): descriptors and
# packets only, which recovery must sort out packet by packet; then
# everywhere, the checksummed header and metadata too
CORRUPT = ((64, 0xe), (4096, 0xf))

passed = 0
failed = 0
t0 = time.monotonic()


def say(msg):
    print("lrb vmtest: [%4.0fs] %s" % (time.monotonic() - t0, msg), flush=True)


def result(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
    print("vmtest-crash: %s: %s%s" % (what, "ok" if ok else "FAIL",
                                      " (%s)" % detail if detail else ""),
          flush=True)
    return ok


class Fatal(Exception):
    pass


class Guest:
    def __init__(self, a):
        self.a = a
        self.out = a.out
        self.log = open(os.path.join(self.out, "agent.log"), "w")
        self.buf = b""
        self.boots = 0
        self.qemu = None
        # the agent said ready and waits for a command
        self.waiting = False
        self.deadline = time.monotonic() + a.timeout

    def start(self):
        o = self.out
        for f in ("agent.sock", "qmp.sock", "console.log"):
            if os.path.exists(os.path.join(o, f)):
                os.unlink(os.path.join(o, f))
        with open(os.path.join(o, "export.img"), "wb") as f:
            f.truncate(256 << 20)
        append = ("console=ttyS0,115200 panic=1 oops=panic log_buf_len=4M "
                  "tsc=reliable nokaslr reserve_mem=%s lrbvm.timeout=900 "
                  "lrbvm.cpus=%d lrbvm.scenarios=10-agent lrbcrash.seq_off=%s %s"
                  % (REGION, self.a.cpus, self.a.seq_off, self.a.append)).strip()
        cmd = ["qemu-system-x86_64", "-accel", "tcg,thread=multi",
               "-smp", str(self.a.cpus), "-m", str(self.a.mem),
               "-nodefaults", "-display", "none",
               "-kernel", self.a.kernel, "-initrd", self.a.initrd,
               "-append", append,
               "-serial", "file:" + os.path.join(o, "console.log"),
               "-chardev", "socket,id=agent,path=%s,server=on,wait=off" %
               os.path.join(o, "agent.sock"),
               "-serial", "chardev:agent",
               "-qmp", "unix:%s,server=on,wait=off" % os.path.join(o, "qmp.sock"),
               "-drive", "file=%s,format=raw,if=virtio" %
               os.path.join(o, "export.img")]
        with open(os.path.join(o, "qemu.cmd"), "w") as f:
            f.write(" ".join(cmd) + "\n")
        self.qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=open(os.path.join(o, "qemu.log"), "w"),
                                     stderr=subprocess.STDOUT)
        self.agent = self._connect("agent.sock")
        self.qmp = self._connect("qmp.sock")
        self.qbuf = b""
        self._qmp_line()  # greeting
        self.qmp_cmd("qmp_capabilities")

    def _connect(self, name):
        path = os.path.join(self.out, name)
        for _ in range(200):
            if self.qemu.poll() is not None:
                raise Fatal("qemu exited with status %d (see %s/qemu.log)" %
                            (self.qemu.returncode, self.out))
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                return s
            except OSError:
                time.sleep(0.05)
        raise Fatal("qemu did not open %s" % path)

    def _qmp_line(self):
        while b"\n" not in self.qbuf:
            d = self.qmp.recv(65536)
            if not d:
                raise Fatal("qemu closed its QMP socket")
            self.qbuf += d
        line, self.qbuf = self.qbuf.split(b"\n", 1)
        return json.loads(line)

    def qmp_cmd(self, cmd, **args):
        msg = {"execute": cmd}
        if args:
            msg["arguments"] = args
        self.qmp.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            r = self._qmp_line()
            if "return" in r:
                return r["return"]
            if "error" in r:
                raise Fatal("QMP %s: %s" % (cmd, r["error"]))

    def hmp(self, line):
        return self.qmp_cmd("human-monitor-command", **{"command-line": line})

    def line(self, timeout):
        """The agent's next line, or None after timeout seconds."""
        end = min(time.monotonic() + timeout, self.deadline)
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                return None
            self.agent.settimeout(left)
            try:
                d = self.agent.recv(65536)
            except socket.timeout:
                return None
            if not d:
                raise Fatal("qemu closed the agent's serial port (exit status %s)" %
                            self.qemu.poll())
            self.buf += d
        line, self.buf = self.buf.split(b"\n", 1)
        line = line.decode(errors="replace").rstrip("\r")
        self.log.write("%7.1f %s\n" % (time.monotonic() - t0, line))
        self.log.flush()
        if line.startswith("vmtest: booted"):
            self.boots += 1
            say("boot %d: %s" % (self.boots, line[len("vmtest: "):]))
        return line

    def ready(self, timeout=300):
        while True:
            line = self.line(timeout)
            if line is None:
                raise Fatal("the guest's agent did not say ready in %ds (boot %d; "
                            "see %s/agent.log and console.log)" %
                            (timeout, self.boots, self.out))
            if line == "vmtest-crash: ready":
                self.waiting = True
                return

    def send(self, cmd):
        if not self.waiting:
            self.ready()
        self.waiting = False
        self.log.write("%7.1f >>> %s\n" % (time.monotonic() - t0, cmd))
        self.agent.sendall(cmd.encode() + b"\n")

    def run(self, cmd, timeout=300):
        """Run cmd in the guest; (ok, its lines)."""
        self.send(cmd)
        name = cmd.split()[0]
        lines = []
        while True:
            line = self.line(timeout)
            if line is None:
                raise Fatal("'%s' did not finish in %ds (boot %d)" %
                            (cmd, timeout, self.boots))
            if line == "vmtest-crash: ok " + name:
                return True, lines
            if line.startswith("vmtest-crash: error " + name):
                return False, lines
            lines.append(line)

    def wait_for(self, text, timeout=120):
        while True:
            line = self.line(timeout)
            if line is None:
                raise Fatal("no '%s' from the guest in %ds" % (text, timeout))
            if text in line:
                return line

    def console(self):
        with open(os.path.join(self.out, "console.log"), errors="replace") as f:
            return f.read()


def must(g, cmd, timeout=300):
    ok, lines = g.run(cmd, timeout)
    if not ok:
        raise Fatal("'%s' failed in the guest (boot %d):\n    %s" %
                    (cmd, g.boots, "\n    ".join(lines[-20:])))
    return lines


def load_run(g, tag):
    """Load the sample writing into a fresh persistent region; the
    counters' physical addresses by CPU and context. A region left laid
    out by an idle load (nothing recovered) holds a previous run: release
    it first."""
    lines = must(g, "load run")
    if any("recovered as channel driver-fr.previous" in x for x in lines):
        must(g, "release")
        must(g, "unload")
        lines = must(g, "load run")
    phys = {}
    for line in lines:
        m = re.match(r"vmtest-crash: cpu(\d+) seq at phys task=(0x[0-9a-f]+) irq=(0x[0-9a-f]+)", line)
        if m:
            phys[(int(m.group(1)), 0)] = int(m.group(2), 16)
            phys[(int(m.group(1)), 1)] = int(m.group(3), 16)
    fresh = [x for x in lines if "channel driver-fr laid out in it" in x]
    result("%s: boot %d: the persistent flight recorder is laid out afresh" % (tag, g.boots),
           len(fresh) == 1, fresh[0] if fresh else "no such lrb line: " + "; ".join(
               x for x in lines if "lrb: region" in x))
    result("%s: lrb_vm_crash reads the sample's counters as 'written' says" % tag,
           any("seq-check ok" in x for x in lines))
    if len(phys) != 2 * g.a.cpus:
        raise Fatal("no physical addresses of the counters from lrb_vm_crash: %s" % lines)
    return phys


def at_panic(g, since):
    """The counters lrb_vm_crash printed at the panic, from console.log
    after offset since."""
    last = {}
    for m in re.finditer(r"lrb_vm_crash: at panic: cpu(\d+) task=(\d+) irq=(\d+)",
                         g.console()[since:]):
        last[(int(m.group(1)), 0)] = int(m.group(2))
        last[(int(m.group(1)), 1)] = int(m.group(3))
    return last


def export(g, name, last):
    """The guest's /export/name, here in export/name, with last: the
    sample's next sequence numbers at the crash."""
    must(g, "export")
    d = os.path.join(g.out, "export", name)
    subprocess.run(["rm", "-rf", d], check=True)
    subprocess.run(["tar", "-xf", os.path.join(g.out, "export.img"), "-C",
                    os.path.join(g.out, "export"), "./" + name], check=True)
    with open(os.path.join(d, "last-written.json"), "w") as f:
        json.dump({"%d,%d" % k: v for k, v in last.items()}, f)
    return d


def recover(g, name, last, crash_time, tag):
    """The boot after a crash: the previous run recorded and exported;
    its dir, or None."""
    lines = must(g, "load idle")
    took = time.monotonic() - crash_time
    found = [x for x in lines if "recovered as channel driver-fr.previous" in x]
    result("%s: boot %d recovers the previous run" % (tag, g.boots), len(found) == 1,
           found[0] if found else "; ".join(x for x in lines if "lrb: region" in x))
    if not found:
        return None
    ok, rec = g.run("record " + name)
    result("%s: lrb-record records driver-fr.previous" % tag, ok, "; ".join(rec[-3:]))
    if not ok:
        return None
    d = export(g, name, last)
    with open(os.path.join(d, "recovery-lines"), "w") as f:
        f.write("\n".join(lines) + "\n")
    say("%s: crash to recorded trace in %.0fs" % (tag, took))
    return d


def crash_panic(g, how, tag):
    since = len(g.console())
    start = time.monotonic()
    g.send("crash-" + how)
    g.ready()
    last = at_panic(g, since)
    result("%s: lrb_vm_crash printed the last sequence numbers at the panic" % tag,
           len(last) == 2 * g.a.cpus, "%d of %d" % (len(last), 2 * g.a.cpus))
    return last, start


def crash_reset(g, phys, tag):
    g.send("reset-me")
    g.wait_for("waiting for the reset")
    start = time.monotonic()
    g.qmp_cmd("stop")
    last = {}
    for k, addr in phys.items():
        out = g.hmp("xp /1gx %#x" % addr)
        m = re.search(r":\s*(0x[0-9a-f]+)", out)
        if m:
            last[k] = int(m.group(1), 16)
    g.qmp_cmd("system_reset")
    g.qmp_cmd("cont")
    result("%s: the counters were read from the stopped guest" % tag,
           len(last) == 2 * g.a.cpus, "%s" % sorted(last.items()))
    return last, start


def checked(d, tag, mode):
    if d is None:
        return
    for what, ok, detail in check.check_run(d, mode):
        result("%s: %s" % (tag, what), ok, detail)


def summary(dirs):
    """The closing figures of the crash exports (check.py --summary)."""
    dirs = [d for d in dirs if d]
    if not dirs:
        return
    try:
        for line in check.summary(dirs):
            say(line)
    except (OSError, ValueError, KeyError) as e:
        say("no summary: %s" % e)


def scenario(g):
    # 1. a panic (sysrq c)
    phys = load_run(g, "sysrq")
    must(g, "sleep %d" % WRITE_SECONDS)
    last, start = crash_panic(g, "sysrq", "sysrq")
    d0 = recover(g, "sysrq", last, start, "sysrq")
    checked(d0, "sysrq", "crash")
    # 2. a panic in hardirq context, the next run laid out afresh
    must(g, "release")
    must(g, "unload")
    phys = load_run(g, "irq")
    must(g, "sleep %d" % WRITE_SECONDS)
    last, start = crash_panic(g, "irq", "irq")
    di = recover(g, "irq", last, start, "irq")
    checked(di, "irq", "crash")
    # 3. a reset: no code of the guest runs
    must(g, "release")
    must(g, "unload")
    phys = load_run(g, "reset")
    must(g, "sleep %d" % WRITE_SECONDS)
    last, start = crash_reset(g, phys, "reset")
    d1 = recover(g, "reset", last, start, "reset")
    checked(d1, "reset", "crash")
    summary([d0, di, d1])
    # 4. a reboot without release keeps the same data
    g.send("reboot")
    start = time.monotonic()
    d2 = recover(g, "reset-again", last, start, "reboot, not released")
    if d1 and d2:
        for what, ok, detail in check.same_run(d1, d2):
            result("reboot, not released: %s" % what, ok, detail)
    # 5. after release, the next run starts fresh
    must(g, "release")
    g.send("reboot")
    lines = must(g, "load idle")
    fresh = [x for x in lines if "its previous run was released): laid out afresh" in x]
    result("after release and a reboot: no previous run, laid out afresh",
           len(fresh) == 1 and not any("driver-fr.previous" in x for x in lines),
           "; ".join(x for x in lines if "lrb: region" in x or "channels" in x))
    # 6. corrupt regions: bytes overwritten at the panic, when nothing
    # writes any more; every boot survives, what is recovered is valid
    rng = random.Random(g.a.seed)
    for i, (n, kinds) in enumerate(CORRUPT):
        tag = "corrupt %d bytes (kinds %#x)" % (n, kinds)
        must(g, "unload")
        load_run(g, tag)
        must(g, "sleep 2")
        seed = rng.randrange(1 << 32)
        say("%s, seed %d" % (tag, seed))
        must(g, "corrupt %d %d %d" % (n, seed, kinds))
        since = len(g.console())
        last, start = crash_panic(g, "sysrq", tag)
        hit = re.findall(r"lrb_vm_crash: corrupt: (\d+) bytes overwritten", g.console()[since:])
        result("%s: overwritten at the panic" % tag, hit == [str(n)], "%s" % hit)
        lines = must(g, "load idle")
        found = [x for x in lines if "lrb: region" in x and "bytes at" not in x]
        result("%s: boot %d survives" % (tag, g.boots), bool(found),
               found[0] if found else "")
        name = "corrupt%d" % i
        if any("recovered as channel driver-fr.previous" in x for x in lines):
            ok, rec = g.run("record " + name)
            result("%s: lrb-record records what was recovered" % tag, ok,
                   "; ".join(rec[-3:]))
            if ok:
                d = export(g, name, last)
                with open(os.path.join(d, "corrupted"), "w") as f:
                    f.write("%d\n" % n)
                checked(d, tag, "corrupt")
            must(g, "release")
    g.send("done")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--cpus", type=int, default=4)
    ap.add_argument("--mem", type=int, default=1024)
    ap.add_argument("--seq-off", required=True)
    ap.add_argument("--timeout", type=int, default=1200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--append", default="")
    a = ap.parse_args()
    subprocess.run(["rm", "-rf", os.path.join(a.out, "export")], check=True)
    os.makedirs(os.path.join(a.out, "export"))
    g = Guest(a)
    say("seed %d (LRB_VM_CRASH_SEED=%d repeats the corruption)" % (a.seed, a.seed))
    try:
        g.start()
        scenario(g)
        # /init's check of the last boot's kernel log, then it powers off
        log = []
        while not log or not log[-1].startswith("vmtest: done"):
            line = g.line(120)
            if line is None:
                raise Fatal("the guest did not finish after 'done'")
            log.append(line)
        ok = "vmtest kernel-log-10-agent: 1 passed, 0 failed" in log
        result("the last boot's kernel log has no report", ok,
               "" if ok else "; ".join(log[-30:]))
        try:
            g.qemu.wait(120)
        except subprocess.TimeoutExpired:
            raise Fatal("the guest did not power off after 'done'")
    except Fatal as e:
        result("the run", False, str(e))
        tail = g.console()[-3000:] if os.path.exists(os.path.join(a.out, "console.log")) else ""
        say("console (last lines):\n    " + "\n    ".join(tail.splitlines()[-30:]))
    finally:
        if g.qemu and g.qemu.poll() is None:
            g.qemu.kill()
            g.qemu.wait()
    say("%d boots; logs in %s (agent.log, console.log, export/)" % (g.boots, a.out))
    print("vmtest-crash: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
