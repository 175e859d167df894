# SPDX-License-Identifier: MIT
# The guest's own view of itself, parsed from the files tests/vm/init writes
# (read back by rig.Guest.quit()): every thread from /proc/PID/task/TID/stat
# and schedstat, /proc/modules, dmesg -r, /proc/kallsyms, /proc/loadavg,
# jiffies. Nothing here uses kpeek.
import re


class TruthError(Exception):
    pass


def text(files, name):
    if name not in files:
        raise TruthError("the guest wrote no %s" % name)
    return files[name].decode("utf-8", "replace")


class Thread:
    __slots__ = ("tgid", "tid", "name", "state", "ppid", "cpu", "pcount", "runtime", "vsz", "rss")

    def still_since(self, earlier):
        """True when the thread had no CPU between the listing of earlier
        and this one: the same number of arrivals on a CPU (pcount) and the
        same CPU time. pcount alone is not enough: a thread woken before it
        switched out never leaves its CPU, so pcount stays while it runs and
        its state goes D, I, R (a busy workqueue worker under churn, 6.1
        arm64); its run time then grows at the next tick."""
        return self.pcount == earlier.pcount and self.runtime == earlier.runtime

    def __repr__(self):
        return "%d/%d %s %s ppid=%d cpu=%d ran=%d" % (
            self.tgid, self.tid, self.name, self.state, self.ppid, self.cpu, self.pcount)


def threads(files, name):
    """{tid: Thread} from a listing of "TGID TID RUN WAIT PCOUNT | STAT"
    lines (tests/vm/init threads()). PCOUNT counts the times the thread got
    a CPU (/proc/PID/schedstat)."""
    out = {}
    for line in text(files, name).splitlines():
        head, sep, stat = line.partition(" | ")
        if not sep:
            continue
        h = head.split()
        # comm is between the first "(" and the last ")" (it may hold both).
        lp, rp = stat.find("("), stat.rfind(")")
        if len(h) < 5 or lp < 0 or rp < lp:
            raise TruthError("%s: malformed line %r" % (name, line))
        rest = stat[rp + 2:].split()
        t = Thread()
        t.tgid, t.tid = int(h[0]), int(h[1])
        t.runtime, t.pcount = int(h[2]), int(h[4])
        t.name = stat[lp + 1:rp]
        # /proc/PID/stat: field 3 state, 4 ppid, ..., 23 vsize (bytes), 24
        # rss (pages: 4 kB on every guest), 39 processor.
        t.state, t.ppid, t.cpu = rest[0], int(rest[1]), int(rest[36])
        t.vsz, t.rss = int(rest[20]) >> 10, int(rest[21]) * 4
        out[t.tid] = t
    if not out:
        raise TruthError("%s lists no thread" % name)
    return out


def modules(files, name):
    """/proc/modules as dicts: name size refcnt used_by state base taints."""
    rows = []
    for line in text(files, name).splitlines():
        p = line.split()
        if len(p) < 6:
            continue
        rows.append({"name": p[0], "size": int(p[1]), "refcnt": int(p[2]), "used_by": p[3],
                     "state": p[4], "base": int(p[5], 16),
                     "taints": p[6] if len(p) > 6 else ""})
    return rows


def lines(files, name):
    return text(files, name).splitlines()


KALLSYMS_RE = re.compile(r"^([0-9a-f]{16}) (\S) (\S+)(?:\t\[(\S+)\])?$")


def kallsyms(files, name):
    """[(address, type, name, module or None)] in file order."""
    out = []
    for line in text(files, name).splitlines():
        m = KALLSYMS_RE.match(line)
        if not m:
            raise TruthError("%s: malformed line %r" % (name, line))
        out.append((int(m.group(1), 16), m.group(2), m.group(3), m.group(4)))
    return out


STACK_LINE_RE = re.compile(r"^\[<[0-9a-f]+>\] (\S+)(?: \[(\S+)\])?$")


def stacks(files, name):
    """{tid: ["function+0xoff/0xsize [module]", ...]} from the "== TGID TID"
    headed /proc/TID/stack listing of tests/vm/init stacks(). A thread whose
    stack could not be read has an empty list."""
    out, cur = {}, None
    for line in text(files, name).splitlines():
        if line.startswith("== "):
            h = line.split()
            if len(h) != 3:
                raise TruthError("%s: malformed header %r" % (name, line))
            cur = out.setdefault(int(h[2]), [])
            continue
        m = STACK_LINE_RE.match(line)
        if cur is None or not m:
            raise TruthError("%s: malformed line %r" % (name, line))
        cur.append(m.group(1) + (" [%s]" % m.group(2) if m.group(2) else ""))
    if not out:
        raise TruthError("%s lists no thread" % name)
    return out


class Stamp:
    """/proc/loadavg, jiffies and the kernel's taint mask at one moment."""

    def __init__(self, files, name):
        v = {}
        for line in text(files, name).splitlines():
            k, _, rest = line.partition(" ")
            v[k] = rest.strip()
        la = v.get("loadavg", "").split()
        if len(la) != 5 or "/" not in la[3]:
            raise TruthError("%s: no loadavg line (%r)" % (name, v))
        self.loads = la[:3]
        self.running, self.total = (int(x) for x in la[3].split("/"))
        self.last_pid = int(la[4])
        try:
            self.jiffies = int(v.get("jiffies", ""))
        except ValueError:
            raise TruthError("%s: no jiffies (%r)" % (name, v))
        # /proc/sys/kernel/tainted (None in files written before it was kept)
        self.tainted = int(v["tainted"]) if v.get("tainted", "").isdigit() else None


def load_samples(files, name):
    """The load triples ("2.29", "1.06", "0.41") of a file of /proc/loadavg
    lines (tests/vm/init's load_sampler)."""
    out = []
    for line in text(files, name).splitlines():
        la = line.split()
        if len(la) != 5:
            raise TruthError("%s: not a loadavg line: %r" % (name, line))
        out.append(la[:3])
    if not out:
        raise TruthError("%s: no reading" % name)
    return out


def cpu_count(files):
    """CPUs in /sys/devices/system/cpu/possible ("0-1", "0,2-3")."""
    n = 0
    for part in text(files, "boot.cpu-possible").strip().split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def iomem(files):
    """(System RAM ranges, physical start of Kernel code)."""
    ram, code = [], None
    for line in text(files, "boot.iomem").splitlines():
        m = re.match(r"^(\s*)([0-9a-f]+)-([0-9a-f]+) : (.*)$", line)
        if not m:
            continue
        lo, hi, what = int(m.group(2), 16), int(m.group(3), 16), m.group(4)
        if what == "System RAM" and not m.group(1):
            ram.append((lo, hi))
        elif what == "Kernel code":
            code = lo
    return ram, code
