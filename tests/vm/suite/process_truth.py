# SPDX-License-Identifier: MIT
# What the process checks (process.py) compare: the guest's own readings of
# its processes around a dump or a live run (the workload's truth), and
# kpeek's output taken apart per PID, with the rules that turn differences
# into a verdict.
import re

from .common import ran
from .results import limited, passed, skipped

UNKNOWN_PID = 99999    # above pid_max (32768 on these 2-CPU guests)
KTHREAD = 2            # kthreadd
# The keys of /proc/PID/status kpeek knows (kpeek status --help); each
# the truth has must be printed.
RUNNING, SLEEPING = "R (running)", "S (sleeping)"
STATUS_KEYS = ["Name", "Umask", "State", "Tgid", "Pid", "PPid", "TracerPid", "Uid", "Gid", "FDSize",
               "Groups", "NStgid", "NSpid", "NSpgid", "NSsid", "VmPeak", "VmSize", "VmLck", "VmPin",
               "VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem", "VmData", "VmStk", "VmExe", "VmLib",
               "VmPTE", "VmSwap", "Threads", "SigPnd", "ShdPnd", "SigBlk",
               "SigIgn", "SigCgt", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
               "Seccomp", "Seccomp_filters", "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"]
# What mountinfo's super options start with that kpeek knows (fs/proc_namespace.c
# show_sb_opts(): ro|rw, then sync, dirsync, mand, lazytime; mand went away
# in 5.15 and kpeek does not print it).
SB_GENERIC = ("ro", "rw", "sync", "dirsync", "mand", "lazytime")
# S_IFMT of the file -> kpeek files --json's kind; an anonymous inode has
# no file type in its mode: null there ("?" in text).
KINDS = {0o100000: "REG", 0o040000: "DIR", 0o020000: "CHR", 0o060000: "BLK", 0o010000: "FIFO",
         0o140000: "SOCK", 0o120000: "LNK", 0: None}
NO_STAT = "(no stat() of the file in the reading)"
# makedumpfile -d 31 leaves out user pages (dump level 8): the arguments and
# the environment are not in such a dump.
EXCLUDED_RE = re.compile(r"exclud", re.I)


def d31(source):
    return source.startswith("kdump-d31")


# ---------------------------------------------------------------- the truth

def split_nul(b):
    """/proc/PID/cmdline or environ as its NUL-separated strings."""
    if b.endswith(b"\0"):
        b = b[:-1]
    return [x.decode("utf-8", "surrogateescape") for x in b.split(b"\0")] if b else []


def stat_fields(b):
    """/proc/PID/stat as {field number: text} (1-based, as proc(5) numbers them)."""
    s = b.decode("utf-8", "replace")
    lp, rp = s.find("("), s.rfind(")")
    rest = s[rp + 2:].split()
    out = {1: s[:lp].strip(), 2: s[lp + 1:rp]}
    out.update({i + 3: v for i, v in enumerate(rest)})
    return out


class Workload:
    """proc.pids (kp_proc start's "ROLE PID" lines) and the PIDs the guest
    recorded; why: None, or why there is nothing to check."""

    def __init__(self, files):
        self.files = files
        self.roles, self.why = {}, None
        raw = files.get("proc.pids")
        if raw is None:
            self.why = "the guest started no process workload (no proc.pids; see %s)" % (
                "proc.start.log: " + files.get("proc.start.log", b"").decode("utf-8", "replace").strip()
                if "proc.start.log" in files else "the guest's files")
            return
        for line in raw.decode("utf-8", "replace").splitlines():
            p = line.split(None, 2)
            if len(p) >= 2 and p[1].isdigit():
                self.roles[p[0]] = int(p[1])
            else:
                self.why = "kp_proc start: %s" % line
        want = {"args", "title", "retitle", "files", "cred", "caps", "ns", "nschild", "cgroup", "userns",
                "net", "netchild", "blocked"}
        if not self.why and set(self.roles) != want:
            self.why = "kp_proc start reported %s, not %s" % (sorted(self.roles), sorted(want))
        # Every PID the guest's readings cover (PID 1, the roles, kp_threads),
        # but kthreadd, read for its open files only.
        self.pids = sorted({int(n.split(".")[2]) for n in files
                            if n.startswith("proc.boot.") and n.endswith(".stat")} - {KTHREAD})
        if not self.why and not {1} | set(self.roles.values()) <= set(self.pids):
            self.why = "no boot reading (proc.boot.PID.*) of some PIDs of %s" % self.pids
        if self.why:
            return
        st = stat_fields(files["proc.boot.%d.stat" % self.roles["args"]])
        # proc(5): 48 arg_start, 49 arg_end, 50 env_start, 51 env_end
        self.arg_start, self.env_start, self.env_end = int(st[48]), int(st[50]), int(st[51])

    @staticmethod
    def of(run):
        if getattr(run, "_workload", None) is None or run._workload.files is not run.files:
            run._workload = Workload(run.files)
        return run._workload


def tags_of(run, source):
    """The truth readings around a source: (before, after)."""
    if source == "live":
        return "live", "live-after"
    if source not in run.dumps:
        raise MissingTruth("no %s dump of %s" % (source, run.name))
    _, pre, post = run.dumps[source]
    return pre, post


class Truth:
    """The two readings around one source."""

    def __init__(self, c, run, source):
        self.files = c.files
        self.tags = tags_of(run, source)

    def raw(self, pid, what):
        """[before, after] bytes of proc.TAG.PID.WHAT (TruthError-free:
        a missing file is None)."""
        return [self.files.get("proc.%s.%d.%s" % (t, pid, what)) for t in self.tags]

    def both(self, pid, what):
        got = self.raw(pid, what)
        if None in got:
            raise MissingTruth("the guest wrote no proc.%s.%d.%s" % (
                self.tags[got.index(None)], pid, what))
        return got

    def cmdlines(self):
        """{pid: (comm, cmdline bytes)} of both readings: [before, after]."""
        out = []
        for t in self.tags:
            raw = self.files.get("proc.%s.cmdlines" % t)
            if raw is None:
                raise MissingTruth("the guest wrote no proc.%s.cmdlines" % t)
            m = {}
            for line in raw.decode().splitlines():
                p = line.split(" ")
                if len(p) == 3:
                    m[int(p[0])] = (bytes.fromhex(p[1]).decode("utf-8", "replace"), bytes.fromhex(p[2]))
            out.append(m)
        return out


class MissingTruth(Exception):
    pass


def in_between(got, a, b, slack=0):
    """got equals a reading, or (numbers, "N kB" too) lies between the two,
    give or take slack."""
    if got in (a, b):
        return True
    try:
        g, x, y = (int(v[:-3] if v.endswith(" kB") else v) for v in (got, a, b))
    except (AttributeError, TypeError, ValueError):
        return False
    return min(x, y) - slack <= g <= max(x, y) + slack


# Which of /proc/PID/status's memory lines add how many of mm's resident
# counters (fs/proc/task_mmu.c task_mem()).
RSS_COUNTERS = {"VmRSS": 3, "VmHWM": 3, "RssAnon": 1, "RssFile": 1, "RssShmem": 1, "VmSwap": 1}


def rss_slack_kb(files, key, stat=False):
    """How far kpeek's memory line key may be from /proc's, in kB: 6.2
    (f1a7941243c1) made mm's resident counters percpu_counters, kpeek sums
    each with its CPUs' parts (each below a batch, max(32, 2 * CPUs)
    pages, either sign), and /proc/PID/status up to 6.15 (stat: /proc/PID/
    stat's rss, on every kernel since) shows the shared count alone; 6.16
    sums them in status too (get_mm_counter_sum()), earlier kernels have no
    per-CPU part. 4 kB pages (every kernel of the suite)."""
    if key not in RSS_COUNTERS:
        return 0
    release = files.get("boot.uname", b"").decode().strip()
    m = re.match(r"(\d+)\.(\d+)", release)
    v = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    if v < (6, 2) or (v > (6, 15) and not stat):
        return 0
    cpus = 0
    for part in files.get("boot.cpu-possible", b"0").decode().strip().split(","):
        lo, _, hi = part.partition("-")
        cpus += int(hi or lo) - int(lo) + 1
    return RSS_COUNTERS[key] * cpus * max(32, 2 * cpus) * 4


# ---------------------------------------------------------------- kpeek's output

def per_pid(doc, key):
    """{pid: object} of a JSON output for one or several PIDs."""
    objs = doc.get("processes", [doc]) if isinstance(doc, dict) else doc
    out = {}
    for o in objs if isinstance(objs, list) else []:
        if isinstance(o, dict) and "pid" in o:
            out[int(o["pid"])] = o
    return out


def text_blocks(out, pids):
    """{pid: [lines]} of a text output for several PIDs ("PID:" heads each
    block; one PID: no head)."""
    if len(pids) == 1:
        return {pids[0]: out.split("\n")[:-1] if out.endswith("\n") else out.split("\n")}
    blocks, cur = {}, None
    for line in out.split("\n"):
        m = re.fullmatch(r"(\d+):", line)
        if m:
            cur = blocks.setdefault(int(m.group(1)), [])
        elif cur is not None:
            cur.append(line)
    for lines in blocks.values():
        # blocks are separated by an empty line, and the output ends with \n
        while lines and lines[-1] == "":
            lines.pop()
    return blocks


def err_lines(err):
    return [x for x in err.strip().split("\n") if x] if err.strip() else []


def pid_errors(err, pids):
    """{pid: stderr line} of the lines that name "CMD PID:"."""
    out = {}
    for line in err_lines(err):
        m = re.match(r"^kpeek: \S+(?: --pid)? (\d+): ", line)
        if m and int(m.group(1)) in pids:
            out[int(m.group(1))] = line
    return out


def left_out(err, pids, c):
    """On a dump that lacks pages the kernel uses (makedumpfile -d 31 of a
    kernel it does not know: Ctx.partial), the PIDs kpeek said it could not
    read whole because a page was excluded: {pid: its stderr line}. Their
    output is still compared where there is some, and the PID is a skipped
    entry, never a pass. Elsewhere (and for any other error) nothing: an
    error is a failure."""
    if not c.partial:
        return {}
    return {p: x for p, x in pid_errors(err, pids).items() if EXCLUDED_RE.search(x)}


def subsequence(got, want):
    """Whether got's lines are some of want's, in want's order."""
    it = iter(want)
    return all(any(g == w for w in it) for g in got)


def guarded(fn):
    """A check that needs the workload: a failure naming why it cannot run."""
    def wrap(run, source):
        def ck(res, c):
            w = Workload.of(run)
            if w.why:
                return False, w.why
            try:
                return fn(res, c, w, Truth(c, run, source), source)
            except MissingTruth as e:
                return False, "no ground truth: %s" % e
        return ck
    return wrap


def verdict(problems, compared, skips=(), what="processes"):
    if problems:
        return False, "%d differences from /proc:\n%s" % (len(problems), "\n".join(problems[:60]))
    if not compared:
        return skipped("nothing compared: " + "; ".join(skips[:5]))
    return passed("", skips) if skips else (True, "")


def excluded_limit(res, pids, what):
    """On a dump without user pages: every PID's error says its page was
    excluded. limited(...) if so, else (False, why)."""
    rc, out, err = res
    errs = pid_errors(err, pids)
    bad = [p for p in pids if p not in errs or not EXCLUDED_RE.search(errs[p])]
    if rc == 2 and not bad and len(err_lines(err)) == len(pids):
        return limited("every %s read says its page was excluded: %s" % (what, errs[pids[0]]))
    return False, ("expected exit 2 and one line per PID saying the page of its %s was excluded "
                   "(makedumpfile -d 31 leaves out user pages), %s; no such line for %s:\n%s" % (
                       what, ran(res), bad, err[:2000]))
