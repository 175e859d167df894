# SPDX-License-Identifier: MIT
# Corrupt states (SECURITY.md: walks end with an answer or an error): damaged
# copies of the ELF dump of a kernel's first guest, KERNEL:GUEST:elf-damaged:
# CHECK, made with ../dumpedit.py, and kpeek snapshot of its makedumpfile
# -d 31 dump, KERNEL:GUEST:kdump-d31:snapshot-*. Each case damages one
# structure as a filtered dump or a rootkit does (a page left out, a link
# rewritten, an object unlinked) and its check compares kpeek's answer with
# what the guest said of itself around the dump (its /proc listings,
# /proc/modules, dmesg -r) and with the damage: what must be left out, what
# must be named, which findings check must make.
#
# Where things are comes from the intact dump: the guest's /proc/kallsyms,
# the dump's VMCOREINFO (the printk ring), struct offsets from kpeek print
# (BTF), task addresses from kpeek ps and module pages from kpeek vtop; each
# is read back from the dump's own bytes before use (a task's pid and comm,
# a module's name, a run queue's cpu, init_task.tasks.next), so a wrong
# address is a failed setup, never a damage elsewhere.
import json
import os
import re
import struct
import signal
import subprocess
import sys
import time

import dumpedit
import rig
import truth as T

from .common import notes, ran, timed
from .modules import module_line
from .tasks import compare_tasks

# The kernels whose first guest gets the damaged dumps (the suite's time
# budget: each costs 15-30 s of host time).
KERNELS = ("5.10", "6.1", "7.2", "7.2-arm64")
SOURCE = "elf-damaged"
TIMEOUT = 60          # a damaged dump must not make kpeek hang: seconds
# Peak RSS of one kpeek run on a damaged dump (the plain build: ASan's
# shadow and quarantine say nothing of kpeek's own use): at most that of
# the same command on the intact dump plus EXTRA_RSS_KB, the room for the
# paths a damage takes (a finding's symbol loads the modules' symbols:
# check tasks goes from 20 to 51 MiB on 7.2), not for an allocation a
# damaged count or size drives. The runs on kpeek's snapshots, which have
# no intact twin: at most MAX_RSS_KB.
EXTRA_RSS_KB = 64 * 1024
MAX_RSS_KB = 128 * 1024
MASK62 = (1 << 62) - 1  # printk descriptor ids (DESC_ID_MASK, 64-bit)
TAINT_OOT_MODULE, TAINT_UNSIGNED_MODULE = 12, 13  # include/linux/panic.h
MISSING_RE = re.compile(r"^pid (\d+) .* is in both /proc listings but not listed$")
TS_RE = re.compile(r"^<\d+>\[\s*(\d+)\.(\d{6})\]")


class SetupError(Exception):
    pass


def lines_of(err):
    return [x for x in err.split("\n") if x.strip()]


def incomplete_line(err, cmd):
    """The one stderr line of a walk that stopped: 'kpeek: CMD: incomplete:
    ...' (ps says 'kpeek: incomplete: ...'), or None."""
    ls = lines_of(err)
    if len(ls) == 1 and re.match(r"^kpeek: (%s: )?incomplete: " % re.escape(cmd), ls[0]):
        return ls[0]
    return None


# Runs a program and writes its peak RSS (KiB) to the file descriptor of
# argv[1]: a small process between the suite and kpeek, since ru_maxrss of
# a child forked from the suite's own large process counts the suite's
# pages too. Exits as the program did (its signal too).
RSS_HELPER = """import os, signal, sys
fd = int(sys.argv[1])
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, st, ru = os.wait4(pid, 0)
os.write(fd, b"%d\\n" % ru.ru_maxrss)
if os.WIFSIGNALED(st):
    signal.signal(os.WTERMSIG(st), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(st))
sys.exit(os.waitstatus_to_exitcode(st))
"""


def run_bounded(kpeek, args):
    """(rc, stdout, stderr, peak RSS in KiB, seconds) of one kpeek run,
    killed after TIMEOUT seconds (rc 124)."""
    if not kpeek:
        return 127, "", "no kpeek binary (build/kpeek)\n", 0, 0.0
    t0 = time.monotonic()
    r, w = os.pipe()
    try:
        p = subprocess.Popen([sys.executable, "-S", "-I", "-c", RSS_HELPER, str(w), kpeek] + args,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             pass_fds=(w,), start_new_session=True)
    except OSError as e:
        os.close(r)
        return 126, "", "cannot run %s: %s\n" % (kpeek, e), 0, 0.0
    finally:
        os.close(w)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the helper's session: kpeek too
        out, err = p.communicate()
        rc = 124
    with os.fdopen(r, "rb") as f:
        rss = f.read().strip()
    return (rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
            int(rss) if rss.isdigit() else 0, time.monotonic() - t0)


class Spent:
    """The kpeek runs of one guest's corrupt checks: one NOTE line with
    their count, seconds and the largest peak RSS, kept up to date."""

    def __init__(self, name):
        self.name, self.n, self.secs, self.rss, self.at = name, 0, 0.0, 0, None
        self.seen = set()  # the intact runs counted

    def add_intact(self, fut):
        if id(fut) not in self.seen:
            self.seen.add(id(fut))
            self.add(fut.result()[4], 0)

    def add(self, secs, rss):
        self.n, self.secs, self.rss = self.n + 1, self.secs + secs, max(self.rss, rss)
        line = "%s corrupt checks: %d kpeek runs, %.1f s in all, peak RSS on a damaged dump at most %d KiB" % (
            self.name, self.n, self.secs, self.rss)
        if self.at is None:
            self.at = len(notes)
            notes.append(line)
        else:
            notes[self.at] = line


def bounded(ck, spent=None, intact=None):
    """A check of a run_bounded result: an answer within TIMEOUT seconds
    and a bounded peak RSS (intact: the future of the same command's
    run_bounded on the intact dump, else MAX_RSS_KB), then ck on (rc,
    stdout, stderr)."""
    def wrapped(res, c):
        if len(res) != 5:
            return ck(res, c)  # a setup failure's (None, "", why)
        rc, out, err, rss, secs = res
        if spent:
            spent.add(secs, rss)
        if rc == 124:
            return False, "no answer within %d s (killed)" % TIMEOUT
        limit, of = MAX_RSS_KB, "the bound for snapshots"
        if intact is not None:
            irc, _, ierr, irss, _ = intact.result()
            if spent:
                spent.add_intact(intact)
            if irc not in (0, 1, 2) or not irss:
                return False, "the same command on the intact dump: exit %s, peak RSS %s KiB: %s" % (
                    irc, irss, ierr.strip()[:300])
            limit, of = irss + EXTRA_RSS_KB, "%d KiB on the intact dump" % irss
        if not rss or rss > limit:
            return False, "peak RSS %d KiB, more than %d KiB (%s); %s" % (rss, limit, of, ran((rc, out, err)))
        return ck((rc, out, err), c)
    return wrapped


def walk_status(doc):
    return {k: doc.get(k) for k in ("complete", "reason", "error", "left_out", "restarts")}


# ---------------------------------------------------------------- the intact dump

class Recon:
    """What the intact ELF dump holds, by virtual address: the kernel image
    (run.image_phys), the direct map (run.direct) and the module pages kpeek
    vtop translated; offsets of the members the cases rewrite."""

    def __init__(self, run, kpeek, path, ctx):
        self.run, self.kpeek, self.path, self.ctx = run, kpeek, path, ctx
        self.pages = {}
        if run.direct is None:
            raise SetupError("no direct-map address of the guest (see the rig checks)")
        self.ram = T.iomem(run.files)[0]
        missing = [s for s in ("_text", "_end", "init_task", "modules", "runqueues", "__per_cpu_offset")
                   if s not in run.sym]
        if missing:
            raise SetupError("/proc/kallsyms has no %s" % ", ".join(missing))
        self.d = rig.ElfDump(path)
        self.off = self.offsets()
        self.tasks = self.read_tasks()
        self.modules = self.read_modules()

    def close(self):
        self.d.close()

    def kp(self, args):
        rc, out, err = rig.run_kpeek(self.kpeek, ["-c", self.path] + args, timeout=TIMEOUT)
        if rc != 0:
            raise SetupError("kpeek %s on the intact dump: exit %s: %s" % (" ".join(args), rc, err.strip()))
        return out

    def offsets(self):
        want = [("task.tasks", "offsetof(struct task_struct, tasks)"),
                ("task.pid", "offsetof(struct task_struct, pid)"),
                ("task.comm", "offsetof(struct task_struct, comm)"),
                ("task.size", "sizeof(struct task_struct)"),
                ("module.list", "offsetof(struct module, list)"),
                ("module.name", "offsetof(struct module, name)"),
                ("module.refcnt", "offsetof(struct module, refcnt)"),
                ("module.taints", "offsetof(struct module, taints)"),
                ("module.size", "sizeof(struct module)"),
                ("rq.nr_running", "offsetof(struct rq, nr_running)"),
                ("rq.curr", "offsetof(struct rq, curr)"),
                ("rq.cpu", "offsetof(struct rq, cpu)")]
        out = self.kp(["print"] + [e for _, e in want]).strip().split("\n")
        vals = [re.match(r"^\(unsigned long\)(\d+)$", x.strip()) for x in out]
        if len(vals) != len(want) or not all(vals):
            raise SetupError("kpeek print of the offsets: %s" % out)
        return {k: int(m.group(1)) for (k, _), m in zip(want, vals)}

    # --- reading by virtual address
    def phys(self, va):
        r = self.run
        if r.sym["_text"] <= va < r.sym["_end"]:
            return r.image_phys(va)
        if va & ~0xFFF in self.pages:
            return self.pages[va & ~0xFFF] | va & 0xFFF
        pa = (va - r.direct[0] + r.direct[1]) & rig.MASK64
        if va >= r.pob and any(lo <= pa <= hi for lo, hi in self.ram):
            return pa
        raise SetupError("no physical address known for 0x%x" % va)

    def read(self, va, n):
        try:
            return self.d.read_phys(self.phys(va), n)
        except rig.RigError as e:
            raise SetupError(str(e))

    def u64(self, va):
        return struct.unpack("<Q", self.read(va, 8))[0]

    def u32(self, va):
        return struct.unpack("<I", self.read(va, 4))[0]

    def cstr(self, va, n):
        return self.read(va, n).split(b"\0")[0].decode("utf-8", "replace")

    # --- tasks and modules
    def read_tasks(self):
        """{pid: (task address, comm)} of kpeek ps on the intact dump, each
        read back (pid, comm); init_task.tasks.next must be pid 1's node."""
        try:
            rows = json.loads(self.kp(["ps", "--json"]))["tasks"]
        except (ValueError, KeyError) as e:
            raise SetupError("kpeek ps --json on the intact dump: %s" % e)
        o = self.off
        tasks = {}
        for r in rows:
            a = int(r["task"], 16)
            pid = struct.unpack("<i", self.read(a + o["task.pid"], 4))[0]
            comm = self.cstr(a + o["task.comm"], 16)
            if pid != r["pid"] or comm != r["comm"]:
                raise SetupError("task 0x%x holds pid %d %r, kpeek ps said %d %r" % (
                    a, pid, comm, r["pid"], r["comm"]))
            tasks[pid] = (a, comm)
        first = self.u64(self.run.sym["init_task"] + o["task.tasks"]) - o["task.tasks"]
        if 1 not in tasks or first != tasks[1][0]:
            raise SetupError("init_task.tasks.next is task 0x%x, pid 1 is %s" % (first, tasks.get(1)))
        return tasks

    def pid_of(self, name):
        """The pid of the workload process called name in both listings."""
        pre, post = self.ctx.pre["threads"], self.ctx.post["threads"]
        pids = [t for t, x in pre.items() if x.name == name and x.tgid == t and t in post and t in self.tasks]
        if len(pids) != 1:
            raise SetupError("no one process %s in the guest's listings around the dump" % name)
        return pids[0]

    def read_modules(self):
        """{name: struct module address} from the guest's __this_module
        symbols, in /proc/modules order; their pages from kpeek vtop, each
        module's name read back."""
        this = {m: a for a, t, n, m in self.ctx.pre["modsyms"] if n == "__this_module"}
        names = [m["name"] for m in self.ctx.pre["modules"]]
        if [m["name"] for m in self.ctx.post["modules"]] != names or set(names) - set(this):
            raise SetupError("/proc/modules changed around the dump, or a module has no __this_module")
        mods = {n: this[n] for n in names}
        size = self.off["module.size"]
        addrs = sorted({a & ~0xFFF for a in mods.values()} | {(a + size - 1) & ~0xFFF for a in mods.values()})
        try:
            tr = json.loads(self.kp(["vtop", "--json"] + ["0x%x" % a for a in addrs]))["translations"]
            for a, x in zip(addrs, tr):
                self.pages[a] = int(x["paddr"], 16) & ~0xFFF
        except (ValueError, KeyError, TypeError) as e:
            raise SetupError("kpeek vtop of the modules' pages: %s" % e)
        for n, a in mods.items():
            got = self.cstr(a + self.off["module.name"], 56)
            if got != n:
                raise SetupError("struct module at 0x%x holds the name %r, not %r" % (a, got, n))
        return mods

    def module_node(self, name):
        return self.modules[name] + self.off["module.list"]


def allowed_missing(recon, page_va):
    """The pids whose task_struct may lie on the page at page_va."""
    size = recon.off["task.size"]
    return {pid for pid, (a, _) in recon.tasks.items() if a < page_va + 4096 and page_va < a + size}


# ---------------------------------------------------------------- the printk ring

class Ring:
    """The printk ring of the intact dump, from VMCOREINFO alone."""

    def __init__(self, recon):
        vi = recon.d.vmcoreinfo
        try:
            off = lambda k: int(vi["OFFSET(%s)" % k])
            size = lambda k: int(vi["SIZE(%s)" % k])
            prb = recon.u64(int(vi["SYMBOL(prb)"], 16))
            ring = prb + off("printk_ringbuffer.desc_ring")
            self.count_bits = recon.u32(ring + off("prb_desc_ring.count_bits"))
            self.descs = recon.u64(ring + off("prb_desc_ring.descs"))
            self.infos = recon.u64(ring + off("prb_desc_ring.infos"))
            self.head = recon.u64(ring + off("prb_desc_ring.head_id")) & MASK62
            self.tail = recon.u64(ring + off("prb_desc_ring.tail_id")) & MASK62
            self.desc_size, self.info_size = size("prb_desc"), size("printk_info")
            self.state_off = off("prb_desc.state_var")
            self.len_off = off("printk_info.text_len")
            lpos = off("prb_desc.text_blk_lpos")
            self.begin_off = lpos + off("prb_data_blk_lpos.begin")
            self.next_off = lpos + off("prb_data_blk_lpos.next")
            data = prb + off("printk_ringbuffer.text_data_ring")
            self.size_bits = recon.u32(data + off("prb_data_ring.size_bits"))
            self.data = recon.u64(data + off("prb_data_ring.data"))
        except (KeyError, ValueError) as e:
            raise SetupError("VMCOREINFO lacks the printk ring's %s" % e)
        self.recon = recon
        if not 0 < self.count_bits <= 22 or (self.head - self.tail) & MASK62 >= 1 << self.count_bits:
            raise SetupError("printk ring: count_bits %d, ids 0x%x..0x%x" % (self.count_bits, self.tail, self.head))

    def index(self, rid):
        return rid & ((1 << self.count_bits) - 1)

    def ids(self):
        """The ids of the records, oldest first (the tail itself left out:
        it may be the ring's reserved first descriptor)."""
        n = (self.head - self.tail) & MASK62
        return [(self.tail + i) & MASK62 for i in range(1, n + 1)]

    def desc(self, rid):
        return self.descs + self.index(rid) * self.desc_size + self.state_off

    def lines(self, rid):
        """The lines of record rid's text, read from the intact dump as
        kernel/printk/printk_ringbuffer.c lays them out (a block that would
        cross the end of the data array starts at its beginning)."""
        r = self.recon
        d = self.descs + self.index(rid) * self.desc_size
        begin, nxt = r.u64(d + self.begin_off), r.u64(d + self.next_off)
        n = struct.unpack("<H", r.read(self.infos + self.index(rid) * self.info_size + self.len_off, 2))[0]
        if begin & 1 and nxt & 1:
            return [""]  # no data block (an empty text, or lost)
        size = 1 << self.size_bits
        start = begin & (size - 1) if begin >> self.size_bits == (nxt - 1) >> self.size_bits else 0
        blk = self.data + start
        if r.u64(blk) & MASK62 != rid:
            return []  # overwritten by a newer record: no text (ck_dmesg_hole counts what it found)
        return r.read(blk + 8, n).decode("utf-8", "replace").split("\n")


def line_text(line):
    """The text of a dmesg -r line, without its "<level>[time] " prefix
    (the text's own leading blanks kept)."""
    m = TS_RE.match(line)
    if not m:
        return line
    return line[m.end() + 1:] if line[m.end():m.end() + 1] == " " else line[m.end():]


def is_subsequence(got, want):
    it = iter(want)
    return all(any(g == w for w in it) for g in got)


def ck_dmesg_hole(ring, lost_ids):
    """dmesg -r of a ring whose records lost_ids are lost: every other
    record dmesg -r showed before the dump, in order, the lost ones not
    (told apart by their texts, read from the intact dump: timestamps are
    not monotonic across CPUs; a text both a lost and a kept record have is
    neither required nor forbidden); a last stderr line 'kpeek: dmesg:
    incomplete:' that says so."""
    lost = {x for i in lost_ids for x in ring.lines(i)}
    kept = {x for i in ring.ids() if i not in set(lost_ids) for x in ring.lines(i)}

    def ck(res, c):
        rc, out, err = res
        got = [x for x in out.split("\n") if x]
        pre, post = c.pre["dmesg"], c.post["dmesg"]
        must = [x for x in pre if line_text(x) not in lost]
        never = [x for x in pre if line_text(x) in lost - kept]
        problems = []
        if len(never) < len(lost_ids) // 2:
            problems.append("setup: only %d lines of dmesg -r are texts of the %d lost records" % (
                len(never), len(lost_ids)))
        if rc != 1 or not incomplete_line(err, "dmesg"):
            problems.append("expected exit 1 and one stderr line 'kpeek: dmesg: incomplete: ...', %s" % ran(res))
        if not is_subsequence(got, post):
            problems.append("lines that dmesg -r did not show, or out of order")
        missing = [x for x in must if x not in got]
        if missing:
            problems.append("%d of the %d lines of kept records are not printed, the first: %r" % (
                len(missing), len(must), missing[0]))
        shown = [x for x in never if x in got]
        if shown:
            problems.append("%d of the %d lines of lost records printed, the first: %r" % (
                len(shown), len(never), shown[0]))
        if not problems:
            return True, ""
        return False, "; ".join(problems) + "\noutput (%d lines):\n%s" % (len(got), "\n".join(got[:5]))
    return ck


def ck_dmesg_json_hole(n_lost):
    def ck(res, c):
        rc, out, err = res
        try:
            doc = json.loads(out)
        except ValueError as e:
            return False, "not JSON (%s), %s: %s" % (e, ran(res), out[:300])
        st = walk_status(doc)
        if rc == 1 and st["complete"] is False and st["reason"] == "corrupt" and st["left_out"] == n_lost:
            return True, ""
        return False, "expected exit 1, complete false, reason corrupt, left_out %d; %s; %s" % (n_lost, ran(res), st)
    return ck


def ck_dmesg_none(res, c):
    """No descriptor holds its id: one error line naming the ring, no log."""
    rc, out, err = res
    ls = lines_of(err)
    if rc == 1 and not out.strip() and len(ls) == 1 and "corrupt" in ls[0] and "printk" in ls[0]:
        return True, ""
    return False, "expected exit 1, no output and one stderr line saying the printk ring is corrupt, " \
        "%s; output: %s" % (ran(res), out[:300])


# ---------------------------------------------------------------- tasks

def ck_ps_left_out(target, allowed, node):
    """ps --json on a dump without the page of target's task list node: every
    task of the listings but those whose task_struct is on that page, each
    right; target not listed; ppid unknown only for a lost task's children;
    exit 1, one stderr line naming the node; complete false, unreadable."""
    def ck(res, c):
        rc, out, err = res
        try:
            doc = json.loads(out)
            rows = doc["tasks"]
        except (ValueError, KeyError) as e:
            return False, "not ps --json output (%s), %s" % (e, ran(res))
        problems, _ = compare_tasks(rows, c, True, 0, True)
        missing = set()
        for p in list(problems):
            m = MISSING_RE.match(p)
            if m and int(m.group(1)) in allowed:
                problems.remove(p)
                missing.add(int(m.group(1)))
        listed = {r.get("pid") for r in rows}
        if target in listed:
            problems.append("pid %d is listed, yet its task list node is not in the dump" % target)
        for r in rows:
            t = c.pre["threads"].get(r.get("pid")) or c.post["threads"].get(r.get("pid"))
            if r.get("ppid") is None and t and t.ppid not in allowed:
                problems.append("pid %s: ppid unknown, yet its parent %d is in the dump" % (r.get("pid"), t.ppid))
        line = incomplete_line(err, "ps")
        st = walk_status(doc)
        if rc != 1 or not line or ("%x" % node) not in line:
            problems.append("expected exit 1 and one stderr line 'incomplete' naming 0x%x, %s" % (node, ran(res)))
        if st["complete"] is not False or st["reason"] != "unreadable":
            problems.append("expected complete false, reason unreadable: %s" % st)
        if not problems:
            return True, ""
        return False, "%d problems (left out: %s, allowed %s):\n%s" % (
            len(problems), sorted(missing), sorted(allowed), "\n".join(problems[:20]))
    return ck


def ck_ps_stops(names, reasons, node_after=None, hidden=None):
    """ps --json on a task list with a bad link: exit 1, one stderr line
    naming each of names (hex addresses), complete false with one of
    reasons; what is listed is right and listed once. node_after: every
    task of the listings must be listed (the walk recovered from the tail).
    hidden: a consistent list without that pid: exit 0, complete, every
    other task listed."""
    def ck(res, c):
        rc, out, err = res
        try:
            doc = json.loads(out)
            rows = doc["tasks"]
        except (ValueError, KeyError) as e:
            return False, "not ps --json output (%s), %s" % (e, ran(res))
        problems, _ = compare_tasks(rows, c, True, 0, False)
        if not node_after and hidden is None:
            problems = [p for p in problems if not MISSING_RE.match(p)]
        if hidden is not None:
            gone = [p for p in problems if MISSING_RE.match(p) and int(MISSING_RE.match(p).group(1)) == hidden]
            if len(gone) != 1:
                problems.append("pid %d (unlinked from the task list) is listed" % hidden)
            problems = [p for p in problems if p not in gone]
        st = walk_status(doc)
        if hidden is not None:
            if rc != 0 or err.strip() or st["complete"] is not True:
                problems.append("expected exit 0, no stderr, complete true: %s; %s" % (ran(res), st))
        else:
            line = incomplete_line(err, "ps")
            if rc != 1 or not line or not all(("%x" % n) in line for n in names):
                problems.append("expected exit 1 and one stderr line 'incomplete' naming %s, %s" % (
                    ", ".join("0x%x" % n for n in names), ran(res)))
            if st["complete"] is not False or st["reason"] not in reasons:
                problems.append("expected complete false, reason %s: %s" % (" or ".join(reasons), st))
        if not problems:
            return True, ""
        return False, "%d problems:\n%s" % (len(problems), "\n".join(problems[:20]))
    return ck


def ck_ps_runqueue(res, c):
    """ps --json on a dump without CPU 1's run queue pages: every task as
    /proc listed it. Those pages may hold more of CPU 1's per-CPU data (on
    arm64 its workqueue pools), so a worker of CPU 1 may be listed with its
    name unknown (null; its comm), each counted in the one stderr line
    'incomplete: N errors reading tasks' (exit 1, complete false); no other
    task may lose anything."""
    rc, out, err = res
    try:
        doc = json.loads(out)
        rows = doc["tasks"]
    except (ValueError, KeyError) as e:
        return False, "not ps --json output (%s), %s" % (e, ran(res))
    problems, _ = compare_tasks(rows, c, True, 0, False, unnamed_ok=True)
    unnamed = [r for r in rows if r.get("name") is None]
    problems += ["pid %s %r: name null, but it is no worker of CPU 1" % (r.get("pid"), r.get("comm"))
                 for r in unnamed if not str(r.get("comm")).startswith("kworker/1:")]
    if unnamed:
        m = re.match(r"^kpeek: incomplete: (\d+) errors? reading tasks, the first: task \d+ "
                     r"\(kworker/1:[^)]*\) at 0x[0-9a-f]+: its name: .*\n$", err)
        if rc != 1 or not m or int(m.group(1)) != len(unnamed) or doc.get("complete") is not False:
            problems.append("%d names null: expected exit 1, complete false and one stderr line counting "
                            "them, %s" % (len(unnamed), ran(res)))
    elif rc != 0 or err.strip() or doc.get("complete") is not True:
        problems.append("expected exit 0, no stderr, complete true: %s" % ran(res))
    if not problems:
        return True, ""
    return False, "%d problems:\n%s" % (len(problems), "\n".join(problems[:20]))


def ck_check_found(name, obj, why, address):
    """check --json NAME on a dump with one object hidden from one view:
    exit 1, exactly one finding, that object, suspicious."""
    def ck(res, c):
        rc, out, err = res
        try:
            doc = json.loads(out)
            x = {k["name"]: k for k in doc["checks"]}[name]
        except (ValueError, KeyError, TypeError) as e:
            return False, "no %s check in the JSON (%s), %s: %s" % (name, e, ran(res), out[:500])
        f = [f for f in x.get("findings", []) if f.get("why")]
        ok = rc == 1 and x.get("status") == "found" and len(f) == 1 and f[0].get("object") == obj and \
            why in f[0].get("why", "") and f[0].get("kind") == "suspicious" and \
            int(str(f[0].get("address")), 0) == address
        if ok:
            return True, ""
        return False, "expected exit 1 and one suspicious finding %r at 0x%x (%s), %s; check: %s" % (
            obj, address, why, ran(res), json.dumps(x)[:1500])
    return ck


def ck_check_cannot(name, says):
    """check --json NAME with a view it needs unreadable: it cannot decide
    (exit 2), says which view, finds nothing."""
    def ck(res, c):
        rc, out, err = res
        try:
            doc = json.loads(out)
            x = {k["name"]: k for k in doc["checks"]}[name]
        except (ValueError, KeyError, TypeError) as e:
            return False, "no %s check in the JSON (%s), %s: %s" % (name, e, ran(res), out[:500])
        if rc == 2 and x.get("status") == "cannot" and says in (x.get("reason") or "") and \
                not [f for f in x.get("findings", []) if f.get("why")]:
            return True, ""
        return False, "expected exit 2, status cannot naming %r and no finding, %s; check: %s" % (
            says, ran(res), json.dumps(x)[:1500])
    return ck


def ck_loadavg_unknown_running(res, c):
    """loadavg --json with a CPU's run queue unreadable: running unknown
    (null), never a sum of the others; the rest as /proc/loadavg said."""
    rc, out, err = res
    try:
        doc = json.loads(out)
    except ValueError:
        return False, "not JSON, %s: %s" % (ran(res), out[:300])
    a, b = c.pre["stamp"], c.post["stamp"]
    loads = ["%.2f" % doc.get(k, -1) for k in ("load1", "load5", "load15")]
    problems = []
    if rc != 0:
        problems.append(ran(res))
    if "running" not in doc or doc["running"] is not None:
        problems.append("running %r, expected null (a run queue is not in the dump)" % doc.get("running"))
    if loads not in (a.loads, b.loads):
        problems.append("loads %s, /proc/loadavg %s, %s" % (loads, a.loads, b.loads))
    if doc.get("threads") not in (a.total, b.total) and not a.total <= (doc.get("threads") or -1) <= b.total:
        problems.append("threads %r, /proc/loadavg %d, %d" % (doc.get("threads"), a.total, b.total))
    if not problems:
        return True, ""
    return False, "; ".join(problems) + "\n" + out


# ---------------------------------------------------------------- modules

def lsmod_rows(out):
    doc = json.loads(out)
    rows = []
    for r in doc["modules"]:
        rows.append({"name": r["name"], "size": int(r["size"]),
                     "refcnt": int(r["refcnt"]) if r["refcnt"] is not None else None,
                     "used_by": r["used_by"], "state": r["state"], "base": int(r["base"], 16),
                     "taints": r["taints"]})
    return doc, rows


def fmt_line(m):
    m = dict(m)
    m["refcnt"] = -999 if m["refcnt"] is None else m["refcnt"]
    m["used_by"] = "(null)" if m["used_by"] is None else m["used_by"]
    return module_line(m)


def ck_lsmod_left_out(name):
    """lsmod --json without the page of module name: every other module,
    each exactly as /proc/modules (used_by unknown, null, where one of its
    users is the lost module); exit 1, one stderr line; complete false,
    unreadable."""
    def ck(res, c):
        rc, out, err = res
        try:
            doc, rows = lsmod_rows(out)
        except (ValueError, KeyError, TypeError) as e:
            return False, "not lsmod --json output (%s), %s" % (e, ran(res))

        def unknown_users(m):
            if name in m["used_by"].split(","):
                m["used_by"] = None
        want = []
        for rows_t in (c.pre["modules"], c.post["modules"]):
            w = []
            for m in rows_t:
                if m["name"] == name:
                    continue
                m = dict(m)
                unknown_users(m)
                w.append(fmt_line(m))
            want.append(w)
        got = [fmt_line(r) for r in rows]
        st = walk_status(doc)
        problems = []
        if got not in want:
            problems.append("modules differ from /proc/modules without %s (used_by null where %s used "
                            "it):\n  want %s\n  got  %s" % (name, name, "\n       ".join(want[0]),
                                                            "\n       ".join(got)))
        if rc != 1 or not incomplete_line(err, "lsmod"):
            problems.append("expected exit 1 and one stderr line 'kpeek: lsmod: incomplete: ...', %s" % ran(res))
        if st["complete"] is not False or st["reason"] != "unreadable":
            problems.append("expected complete false, reason unreadable: %s" % st)
        if not problems:
            return True, ""
        return False, "\n".join(problems)
    return ck


def ck_lsmod_cycle(name, node):
    """lsmod --json of a modules list whose link after name goes back to
    the first module: the modules up to name exactly as /proc/modules, once
    each; exit 1, one stderr line naming the link; complete false, corrupt."""
    def ck(res, c):
        rc, out, err = res
        try:
            doc, rows = lsmod_rows(out)
        except (ValueError, KeyError, TypeError) as e:
            return False, "not lsmod --json output (%s), %s" % (e, ran(res))
        got = [fmt_line(r) for r in rows]
        want = []
        for rows_t in (c.pre["modules"], c.post["modules"]):
            names = [m["name"] for m in rows_t]
            want.append([fmt_line(m) for m in rows_t[:names.index(name) + 1]] if name in names else None)
        st = walk_status(doc)
        line = incomplete_line(err, "lsmod")
        problems = []
        if got not in want:
            problems.append("expected the modules of /proc/modules up to %s:\n  %s\ngot:\n  %s" % (
                name, "\n  ".join(want[0] or []), "\n  ".join(got)))
        if rc != 1 or not line or ("%x" % node) not in line or "corrupt" not in line:
            problems.append("expected exit 1 and one stderr line 'incomplete' saying the list is corrupt "
                            "at 0x%x, %s" % (node, ran(res)))
        if st["complete"] is not False or st["reason"] != "corrupt":
            problems.append("expected complete false, reason corrupt: %s" % st)
        return (True, "") if not problems else (False, "\n".join(problems))
    return ck


def ck_lsmod_as(drop=(), change=None):
    """lsmod --json of a consistent modules list: exit 0, complete, exactly
    /proc/modules without drop, with change applied."""
    def ck(res, c):
        rc, out, err = res
        try:
            doc, rows = lsmod_rows(out)
        except (ValueError, KeyError, TypeError) as e:
            return False, "not lsmod --json output (%s), %s" % (e, ran(res))
        want = []
        for rows_t in (c.pre["modules"], c.post["modules"]):
            w = []
            for m in rows_t:
                if m["name"] in drop:
                    continue
                m = dict(m)
                if change:
                    change(m)
                w.append(fmt_line(m))
            want.append(w)
        got = [fmt_line(r) for r in rows]
        if rc == 0 and not err.strip() and doc.get("complete") is True and got in want:
            return True, ""
        return False, "expected exit 0, complete and\n  %s\ngot (%s, complete %s):\n  %s" % (
            "\n  ".join(want[0]), ran(res), doc.get("complete"), "\n  ".join(got))
    return ck


# ---------------------------------------------------------------- the cases
# Each case: a name, its checks' names, and a builder(recon, ring) that
# returns (damage(path), [(kpeek args, check)]) in the order of the names,
# or raises SetupError (then each of its checks fails, saying why).

def task_page(pid_of):
    """The page of a task's task list node left out."""
    def build(r, ring):
        pid = pid_of(r)
        node = r.tasks[pid][0] + r.off["task.tasks"]
        page = node & ~0xFFF
        return (lambda p: dumpedit.drop_page(p, r.phys(page)),
                [(["ps", "--json"], ck_ps_left_out(pid, allowed_missing(r, page), node))])
    return build


def task_link(wild):
    """kp_sleeper_b's tasks.next rewritten: back to pid 1's node (a cycle the
    prev pointers disprove), or to an address nothing maps (pob + 1 TiB)."""
    def build(r, ring):
        off = r.off["task.tasks"]
        bnode, p1node = r.tasks[r.pid_of("kp_sleeper_b")][0] + off, r.tasks[1][0] + off
        to = r.run.pob + (1 << 40) + off if wild else p1node
        ck = ck_ps_stops([to], ("unreadable", "corrupt"), node_after=True) if wild else \
            ck_ps_stops([bnode, p1node], ("corrupt",))
        return lambda p: dumpedit.patch(p, r.phys(bnode), struct.pack("<Q", to)), [(["ps", "--json"], ck)]
    return build


def unlink(r, node):
    """A damage that takes the list node at node out of its list."""
    nxt, prv = r.u64(node), r.u64(node + 8)

    def damage(p):
        dumpedit.patch(p, r.phys(prv), struct.pack("<Q", nxt))
        dumpedit.patch(p, r.phys(nxt + 8), struct.pack("<Q", prv))
    return damage


def hidden_task(r, ring):
    """kp_sleeper_c unlinked from the task list, still in the PID table and
    its parent's children list: what a DKOM rootkit does."""
    pid = r.pid_of("kp_sleeper_c")
    task = r.tasks[pid][0]
    return (unlink(r, task + r.off["task.tasks"]),
            [(["check", "--json", "tasks"],
              ck_check_found("tasks", "pid %d (kp_sleeper_c)" % pid, "not in the task list", task)),
             (["ps", "--json"], ck_ps_stops([], (), hidden=pid))])


def runqueue(r, ring):
    """CPU 1's run queue left out (its pages with nr_running and curr)."""
    o = r.off
    rq1 = r.run.sym["runqueues"] + r.u64(r.run.sym["__per_cpu_offset"] + 8)
    if r.u32(rq1 + o["rq.cpu"]) != 1:
        raise SetupError("per_cpu(runqueues, 1) at 0x%x does not hold cpu 1" % rq1)
    pages = sorted({(rq1 + o["rq.nr_running"]) & ~0xFFF, (rq1 + o["rq.curr"]) & ~0xFFF})

    def damage(p):
        for a in pages:
            dumpedit.drop_page(p, r.phys(a))
    return damage, [(["loadavg", "--json"], ck_loadavg_unknown_running),
                    (["check", "--json", "tasks"], ck_check_cannot("tasks", "CPU 1")),
                    (["ps", "--json"], ck_ps_runqueue)]


def middle_ids(ring, n):
    ids = ring.ids()
    if len(ids) < 4 * n:
        raise SetupError("the printk ring holds %d records" % len(ids))
    return ids, ids[len(ids) // 2:len(ids) // 2 + n]


def dmesg_page(r, ring):
    """The page of printk descriptors holding the middle record left out."""
    ids, (mid,) = middle_ids(ring, 1)
    page = ring.desc(mid) & ~0xFFF
    # A descriptor with any of its bytes on the page is lost with it.
    start = lambda i: ring.desc(i) - ring.state_off
    on = [i for i in ids if start(i) < page + 4096 and page < start(i) + ring.desc_size]
    return (lambda p: dumpedit.drop_page(p, r.phys(page)),
            [(["dmesg", "-r"], ck_dmesg_hole(ring, on))])


def garble(r, ring, which):
    def damage(p):
        for i in which:
            a = r.phys(ring.desc(i))
            v = struct.unpack("<Q", dumpedit.read(p, a, 8))[0]
            dumpedit.patch(p, a, struct.pack("<Q", v ^ 1 << 24))
    return damage


def dmesg_ids(r, ring):
    """Ten descriptors in the middle no longer hold their ids."""
    _, ten = middle_ids(ring, 10)
    ck = ck_dmesg_hole(ring, ten)
    return garble(r, ring, ten), [(["dmesg", "-r"], ck), (["dmesg", "--json"], ck_dmesg_json_hole(10))]


def dmesg_ids_all(r, ring):
    """No descriptor holds its id."""
    ids, _ = middle_ids(ring, 1)
    return garble(r, ring, [ring.tail] + ids), [(["dmesg", "-r"], ck_dmesg_none)]


def module_roles(r):
    """(names newest first, {name: its users}, the modules that use others)."""
    names = list(r.modules)
    users = {m["name"]: [u for u in m["used_by"].split(",") if u and u != "-"] for m in r.ctx.pre["modules"]}
    return names, users, {u for us in users.values() for u in us}


def module_page(user):
    """A module's page left out: one nobody uses and that uses none (between
    others when there is one), or one that uses others (their used_by
    lists then name a module the dump lacks)."""
    def build(r, ring):
        names, users, uses = module_roles(r)
        if user:
            pick = [n for n in names if n in uses and not users[n]]
        else:
            pick = [n for n in names[1:-1] + names if not users[n] and n not in uses]
        if not pick:
            raise SetupError("no such module among %s" % users)
        node = r.module_node(pick[0])
        return lambda p: dumpedit.drop_page(p, r.phys(node)), [(["lsmod", "--json"], ck_lsmod_left_out(pick[0]))]
    return build


def module_cycle(r, ring):
    """The link after a middle module back to the first one."""
    names, _, _ = module_roles(r)
    mid = names[len(names) // 2]
    node, first = r.module_node(mid), r.module_node(names[0])
    return (lambda p: dumpedit.patch(p, r.phys(node), struct.pack("<Q", first)),
            [(["lsmod", "--json"], ck_lsmod_cycle(mid, node))])


def hidden_module(r, ring):
    """A module that uses others unlinked from the modules list, still in
    mod_tree and sysfs: what a module rootkit does to hide."""
    names, users, uses = module_roles(r)
    name = next((n for n in names if n in uses and not users[n]), None)
    if name is None:
        raise SetupError("no module using others: %s" % users)
    return (unlink(r, r.module_node(name)),
            [(["check", "--json", "modules"],
              ck_check_found("modules", "module %s" % name, "not in the modules list", r.modules[name])),
             (["lsmod", "--json"], ck_lsmod_as(drop=(name,)))])


def module_counts(r, ring):
    """refcnt INT_MIN and the taints O and E on a module without taints."""
    name = next((m["name"] for m in r.ctx.pre["modules"] if not m["taints"]), None)
    if name is None:
        raise SetupError("every module is tainted")
    base = r.modules[name]

    def damage(p):
        dumpedit.patch(p, r.phys(base + r.off["module.refcnt"]), struct.pack("<I", 0x80000000))
        dumpedit.patch(p, r.phys(base + r.off["module.taints"]),
                       struct.pack("<Q", 1 << TAINT_OOT_MODULE | 1 << TAINT_UNSIGNED_MODULE))

    def as_damaged(m):
        if m["name"] == name:
            m["refcnt"], m["taints"] = None, "(OE)"
    return damage, [(["lsmod", "--json"], ck_lsmod_as(change=as_damaged))]


CASES = [
    ("ps-page-first", ["ps-page-first"], task_page(lambda r: 1)),
    ("ps-page-middle", ["ps-page-middle"], task_page(lambda r: r.pid_of("kp_sleeper_b"))),
    ("ps-cycle", ["ps-cycle"], task_link(False)),
    ("ps-wild", ["ps-wild"], task_link(True)),
    ("hidden-task", ["check-hidden-task", "ps-hidden-task"], hidden_task),
    ("runqueue", ["loadavg-runqueue", "check-runqueue", "ps-runqueue"], runqueue),
    ("dmesg-page", ["dmesg-desc-page"], dmesg_page),
    ("dmesg-ids", ["dmesg-ids", "dmesg-ids-json"], dmesg_ids),
    ("dmesg-ids-all", ["dmesg-ids-all"], dmesg_ids_all),
    ("lsmod-page", ["lsmod-page"], module_page(False)),
    ("lsmod-page-user", ["lsmod-page-user"], module_page(True)),
    ("lsmod-cycle", ["lsmod-cycle"], module_cycle),
    ("hidden-module", ["check-hidden-module", "lsmod-hidden-module"], hidden_module),
    ("module-counts", ["lsmod-refcnt-int-min"], module_counts),
]


# ---------------------------------------------------------------- kdump -d 31 snapshots

def excluded_ranges(path):
    """The physical ranges a kdump-compressed file (standard layout) has in
    its RAM bitmap but not in its dumped bitmap: [(start, end)]."""
    with open(path, "rb") as f:
        h = f.read(448)
        if h[:8] != b"KDUMP   ":
            raise SetupError("%s: no KDUMP signature" % path)
        _status, block_size, sub_hdr_size, bitmap_blocks = struct.unpack_from("<IiiI", h, 424)
        f.seek(block_size * (1 + sub_hdr_size))
        bm = f.read(bitmap_blocks * block_size)
    half = len(bm) // 2
    bits = int.from_bytes(bm[:half], "little") & ~int.from_bytes(bm[half:], "little")
    return [(m.start() * block_size, m.end() * block_size)
            for m in re.finditer("1+", bin(bits)[2:][::-1])]


def ck_snapshot_lost(want, allow):
    """kpeek snapshot of a -d 31 dump: the excluded pages are lost ranges
    (JSON lost_ranges, unreadable_bytes); without --allow-holes exit 1 and
    one stderr line, the file written; with it exit 0."""
    nbytes = sum(e - s for s, e in want)

    def ck(res, c):
        rc, out, err = res
        try:
            doc = json.loads(out)
        except ValueError:
            return False, "not JSON, %s: %s" % (ran(res), out[:300])
        problems = []
        if doc.get("lost_ranges") != len(want) or doc.get("unreadable_bytes") != nbytes:
            problems.append("lost_ranges %s, unreadable_bytes %s; the dump excludes %d bytes in %d ranges" % (
                doc.get("lost_ranges"), doc.get("unreadable_bytes"), nbytes, len(want)))
        ls = lines_of(err)
        if allow and (rc != 0 or ls):
            problems.append("--allow-holes: expected exit 0 and no stderr, %s" % ran(res))
        if not allow and (rc != 1 or len(ls) != 1 or "--allow-holes" not in ls[0] or str(nbytes) not in ls[0]):
            problems.append("expected exit 1 and one stderr line counting %d bytes lost and naming "
                            "--allow-holes, %s" % (nbytes, ran(res)))
        if not os.path.isfile(doc.get("file") or ""):
            problems.append("no file %s" % doc.get("file"))
        return (True, "") if not problems else (False, "; ".join(problems))
    return ck


def ck_info_lost(want):
    def ck(res, c):
        rc, out, err = res
        try:
            got = [(int(x["start"], 16), int(x["end"], 16)) for x in json.loads(out)["lost"]]
        except (ValueError, KeyError, TypeError) as e:
            return False, "no lost ranges in info --json (%s), %s: %s" % (e, ran(res), out[:500])
        if rc == 0 and got == want:
            return True, ""
        diff = sorted(set(got) ^ set(want))[:5]
        return False, "%d lost ranges, the dump's bitmaps exclude %d; first differences %s" % (
            len(got), len(want), ["0x%x-0x%x" % d for d in diff])
    return ck


def ck_rd_lost(paddr):
    def ck(res, c):
        rc, out, err = res
        ls = lines_of(err)
        if rc == 1 and not out.strip() and len(ls) == 1 and "lost" in ls[0] and ("%x" % paddr) in ls[0]:
            return True, ""
        return False, "expected exit 1 and one stderr line saying 0x%x was lost, %s; output %s" % (
            paddr, ran(res), out[:200])
    return ck


def snapshot_jobs(run, kpeek, pool, ctx, spent):
    """kpeek snapshot of the kdump-d31 source, with and without
    --allow-holes, then info and rd on the result."""
    jobs = []
    if "kdump-d31" not in run.dumps:
        return jobs
    name = lambda ck: "%s:%s" % (run.prefix("kdump-d31"), ck)
    src = run.dumps["kdump-d31"][0]
    try:
        want = excluded_ranges(src)
        if not want:
            raise SetupError("makedumpfile -d 31 excluded no page")
    except (OSError, SetupError) as e:
        for ck in ("snapshot-lost", "snapshot-allow-holes", "snapshot-info-lost", "snapshot-rd-lost"):
            jobs.append((name(ck), None, lambda res, c: (False, res[2]), None, (None, "", "setup: %s" % e)))
        return jobs
    outs = {}
    for ck, allow in (("snapshot-lost", False), ("snapshot-allow-holes", True)):
        out = os.path.join(rig.BUILD, "%s.d31-%s.core" % (run.name, ck))
        if os.path.exists(out):
            os.unlink(out)
        outs[ck] = out
        res = run_bounded(kpeek, ["-c", src, "snapshot", "--json", "-o", out] +
                          (["--allow-holes"] if allow else []))
        jobs.append((name(ck), None, bounded(ck_snapshot_lost(want, allow), spent), ctx, res))
    snap = outs["snapshot-lost"]
    jobs.append((name("snapshot-info-lost"), pool.submit(run_bounded, kpeek, ["-c", snap, "info", "--json"]),
                 bounded(ck_info_lost(want), spent), ctx, None))
    paddr = want[len(want) // 2][0]
    jobs.append((name("snapshot-rd-lost"), pool.submit(run_bounded, kpeek, ["-c", snap, "rd", "-p", "0x%x" % paddr, "8"]),
                 bounded(ck_rd_lost(paddr), spent), ctx, None))
    return jobs


# ---------------------------------------------------------------- jobs

def corrupt_jobs(run, kpeek, pool):
    """The damaged copies of run's ELF dump and their checks."""
    if run.kernel.id not in KERNELS or not run.full:
        return []
    jobs = []
    name = lambda ck: "%s:%s" % (run.prefix(SOURCE), ck)
    # The plain build: its peak RSS is kpeek's own (ASan's is not).
    kpeek = plain = rig.find_kpeek(prefer_asan=False)
    spent = Spent(run.name)
    intact = {}  # kpeek args -> the future of their run on the intact dump (its peak RSS)
    t0 = time.monotonic()

    def fail_all(names, why):
        for n in names:
            jobs.append((name(n), None, lambda res, c: (False, res[2]), None, (None, "", why)))
    ctx = recon = ring = None
    try:
        if "elf" not in run.dumps or not run.files:
            raise SetupError("no ELF dump or no files of %s (see the rig checks)" % run.name)
        ctx = run.ctx("elf")
        recon = Recon(run, kpeek, run.dumps["elf"][0], ctx)
        ring = Ring(recon)
    except (T.TruthError, SetupError, rig.RigError, OSError) as e:
        if recon:
            recon.close()
        for _, names, _ in CASES:
            fail_all(names, "setup: %s" % e)
        return jobs + (snapshot_jobs(run, kpeek, pool, ctx, spent) if ctx else [])
    for case, names, build in CASES:
        path = os.path.join(rig.BUILD, "%s.%s-%s.core" % (run.name, SOURCE, case))
        try:
            damage, checks = build(recon, ring)
            dumpedit.copy(run.dumps["elf"][0], path)
            damage(path)
        except (dumpedit.EditError, SetupError, rig.RigError, OSError) as e:
            fail_all(names, "setup of %s: %s" % (case, e))
            continue
        for n, (args, ck) in zip(names, checks):
            key = tuple(args)
            if key not in intact:
                intact[key] = pool.submit(run_bounded, plain, ["-c", run.dumps["elf"][0]] + args)
            jobs.append((name(n), pool.submit(run_bounded, plain, ["-c", path] + args),
                         bounded(ck, spent, intact[key]), ctx, None))
    recon.close()
    jobs += snapshot_jobs(run, kpeek, pool, ctx, spent)
    timed("%s corrupt checks' setup (damaged copies, kdump-d31 snapshots)" % run.name, t0)
    return jobs
