# kpeek report on every dump of a panicked kernel, against the console the
# kernel printed the panic on: the panic's message, CPU, task and taint as
# the "CPU: ... Comm: ..." line says, the kind the test caused, the last log
# line, the signature's functions among the console's trace in its order;
# and one signature for one crash in every format of its dump (a real
# kdump's vmcore and makedumpfile -d 31 of it).
import json
import re

import rig
import truth as T
from . import contract
from .common import ran
from .console import CONSOLE_RIP_RE, CONSOLE_TS_RAW, console_trace
from .panic import console_panic, task_error_problems
from .process_truth import Workload, rss_slack_kb, stat_fields
from .results import passed
from .tasks import group_still

# How each guest panics (GuestRun.panic_command, KdumpRun.kind) and the kind
# kpeek must name: the test caused it, so it knows.
KINDS = {"panic-key": "sysrq", "panic-break": "sysrq", "panic-nmi": "NMI",
         "crash-softirq": "panic", "kdump-panic": "sysrq", "kdump-oops": "oops",
         "kdump-oom": "OOM", "kdump-hung": "hung task", "oom": "OOM"}
# The OOM report's task list (mm/oom_kill.c dump_task()): "[  pid  ]   uid
# tgid total_vm      rss ..." (6.x adds rss_anon rss_file rss_shmem), the
# name last; rss in pages.
OOM_TASK_RE = re.compile(CONSOLE_TS_RAW + r"\[\s*(\d+)\]\s+\d+\s+\d+\s+\d+\s+(\d+)\s.*\s(\S+)\s*$")
# kernel/hung_task.c: "INFO: task NAME:PID blocked for more than N seconds."
# (7.2: "blocked in I/O wait for more than" a task in io_schedule()).
HUNG_TASK_RE = re.compile(r"INFO: task (.+):(\d+) blocked (?:in I/O wait )?for more than \d+ seconds")

SIGNATURE_RE = re.compile(r"^[0-9a-f]{16}$")


def schema_errors(doc):
    return contract.schema_errors("report", doc)


def console_functions(console):
    """The functions of the console's first trace, innermost first, without
    offsets and compiler suffixes (".constprop.0"): an oops' "RIP:" function
    before it, then its "Call Trace:" frames."""
    names = []
    for l in console.replace("\r", "").splitlines():
        if re.match(CONSOLE_TS_RAW + r"Call [Tt]race:\s*$", l):
            break
        m = CONSOLE_RIP_RE.match(l)
        if m:
            names = [m.group(1)]
    names += console_trace(console)
    # A return address just past a call that ends its function is printed
    # as the next function's +0x0 where the kernel prints it with %pS (6.1
    # arm64: "sysrq_reset_seq_param_set+0x0/0x..." for sysrq_handle_crash's
    # call of panic()): that frame is any function (None).
    return [None if re.search(r"\+0x0/", n) else n.split("+")[0].split(".")[0] for n in names]


def in_order(sub, seq):
    """Whether sub is a subsequence of seq (None in seq matches anything)."""
    it = iter(seq)
    return all(any(y is None or x == y for y in it) for x in sub)


def oom_problems(d, console, files, partial=False):
    """An OOM: the process with the most RSS in the OOM report's task list
    is the first of report's largest, with that RSS (give or take what
    the per-CPU parts of 6.2+'s counters allow, rss_slack_kb). partial: a
    dump that lacks pages the kernel uses may lack that process's task or
    memory, if report says that an excluded page left processes out."""
    table = [(int(m.group(2)) * 4, int(m.group(1)), m.group(3))
             for m in map(OOM_TASK_RE.match, console.replace("\r", "").splitlines()) if m]
    if not table:
        return ["no task list in the console's OOM report"]
    rss, pid, name = max(table)
    largest = ((d.get("memory") or {}).get("largest") or {}).get("processes") or [{}]
    got = largest[0]
    section = (d.get("memory") or {}).get("largest") or {}
    why = "%s %s" % (section.get("unreadable_first"), section.get("error"))
    if partial and "excluded" in why and pid not in [p.get("pid") for p in largest]:
        return []
    slack = rss_slack_kb(files, "VmRSS", stat=True)
    if got.get("pid") != pid or not isinstance(got.get("rss"), int) or abs(got["rss"] - rss) > slack:
        return ["largest process %r, the OOM report's: pid %d %s with %d kB (+-%d)" % (
            got, pid, name, rss, slack)]
    return []


def hung_problems(d, console):
    """A hung task: every task the kernel named blocked is among report's
    blocked tasks, by PID and comm."""
    named = {int(m.group(2)): m.group(1) for m in HUNG_TASK_RE.finditer(console)}
    if not named:
        return ["no \"INFO: task ... blocked\" line on the console"]
    got = {t.get("pid"): t.get("comm") for t in (d.get("blocked") or {}).get("tasks") or []}
    return ["pid %d (%s), named blocked by the kernel, is %s among report's blocked tasks %s" % (
        pid, comm, "not" if pid not in got else "%r" % got[pid], sorted(got))
        for pid, comm in named.items() if got.get(pid) != comm]


# The in-guest kpeek snapshot copies a running kernel page by page: a
# structure that changed during the copy is torn in it, and kpeek says so
# (6.12 arm64: a run queue's rbtree "deeper than 64 ... (corrupt?)").
TORN_SOURCES = ("snap",)


def section_errors(res, d, partial, torn):
    """(problems, sections not compared) of a report's exit status: one
    that exits non-zero must be one whose every section in error says why
    it may be: its memory was excluded from the dump (partial) or what it
    walked was corrupt in a snapshot copied from the running kernel (torn:
    6.12 arm64, CPU 0's fair rbtree looped, "more than 65536 nodes
    (corrupt?)"). Those sections are skipped entries of the check."""
    rc = res[0]
    errors = {k: v["error"] for k, v in d.items() if isinstance(v, dict) and "error" in v}
    why = ("excluded",) * partial + ("corrupt",) * torn
    if rc == 0:
        return [], []
    if rc == 2 and errors and all(any(w in e for w in why) for e in errors.values()):
        return [], ["section %s: %s" % kv for kv in sorted(errors.items())]
    return ["%s (sections in error: %s)" % (ran(res), errors)], []


def ck_report(console, release, kind, partial=False, files=None, torn=False):
    """partial: a dump that makedumpfile wrote for a kernel it does not
    support, which lacks pages the kernel uses: a section may then say that
    its memory was excluded (exit 2), the others must be right. torn: a
    snapshot of a running kernel, where a section may say that what it
    walked is corrupt (exit 2), the others must be right. An OOM and
    a hung task are also checked for what they are about (oom_problems,
    hung_problems)."""
    def ck(res, c):
        rc, out, err = res
        try:
            d = json.loads(out)
        except ValueError:
            return False, "not JSON: %s; output:\n%s" % (ran(res), out[-2000:])
        msg, cpu, _ = console_panic(console, release)
        if cpu is None:
            return False, "the console shows no CPU/PID/Comm line:\n%s" % console[-2000:]
        panic, system = d.get("panic") or {}, d.get("system") or {}
        task = panic.get("task") or {}
        got = {"release": system.get("release"), "taint": system.get("taint"), "kind": panic.get("kind"),
               "message": panic.get("message"), "cpu": panic.get("cpu"), "pid": task.get("pid"),
               "comm": task.get("comm")}
        want = {"release": release, "taint": cpu[3], "kind": kind, "message": msg[1] if msg else None,
                "cpu": cpu[0], "pid": cpu[1], "comm": cpu[2]}
        bad = ["%s: kpeek %r, console %r" % (k, got[k], want[k]) for k in want if got[k] != want[k]]
        bad += schema_errors(d)
        bad += task_error_problems(panic.get("task_error"), partial)
        problems, unread = section_errors(res, d, partial, torn)
        bad += problems
        sig, inp = d.get("signature"), d.get("signature_input") or {}
        frames = inp.get("frames") or []
        if not isinstance(sig, str) or not SIGNATURE_RE.match(sig):
            bad.append("signature %r is not 16 hex digits" % (sig,))
        functions = console_functions(console)
        # A dump without the pages of the stack the signature takes (a hung
        # task's, in makedumpfile -d 31 of a kernel it does not know) has a
        # signature without frames, and says why.
        lost = partial and not frames and "excluded" in str(inp.get("no_stack"))
        if not lost and (not frames or not in_order(frames, functions)):
            bad.append("the signature's functions %s are not, in order, among the console's trace %s" % (
                frames, functions))
        # The oops' faulting address, as its first record on the console says.
        m = re.search(r"^(?:\[\s*\d+\.\d+\]\s*)?(?:BUG: |Unable to handle kernel ).*address:? (?:0x)?([0-9a-f]+)",
                      console, re.M)
        if m and kind == "oops" and panic.get("fault_address") != "0x%x" % int(m.group(1), 16):
            bad.append("fault_address %r, the console's %r" % (panic.get("fault_address"), m.group(0)))
        lines = (d.get("log") or {}).get("lines") or []
        if msg and (not lines or lines[-1].get("text") != msg[1]):
            bad.append("the log's last line %r, not the console's panic line %r" % (
                lines[-1].get("text") if lines else None, msg[1]))
        stack = d.get("stack") or {}
        if not stack.get("frames") or stack.get("complete") is not True:
            bad.append("the panicking CPU's stack: %s" % (stack.get("error") or stack.get("end")))
        if kind == "OOM":
            bad += oom_problems(d, console, files or {}, partial)
        if kind == "hung task":
            bad += hung_problems(d, console)
        return passed("", unread) if not bad else (False, "\n".join(bad))
    return ck


def report_jobs(prefix, paths, console, release, kind, kpeek, pool, partial=(), files=None):
    """The report check of each dump (source -> path) of one crash (partial:
    the sources that lack pages the kernel uses), and, with more than one,
    that they have one signature."""
    jobs = []
    for source, path in paths.items():
        jobs.append(("%s:report" % prefix(source),
                     pool.submit(rig.run_kpeek, kpeek, ["-c", path, "report", "--json"]),
                     ck_report(console, release, kind, source in partial, files, source in TORN_SOURCES),
                     None, None))
    if len(paths) > 1:
        def signatures():
            outs = [rig.run_kpeek(kpeek, ["report", "--signature-only", p]) for p in paths.values()]
            bad = [r for r in outs if r[0] != 0]
            text = "; ".join("%s: %s%s" % (s, r[1].strip(), " (no stack)" if no_stack(s, p) else "")
                             for (s, p), r in zip(paths.items(), outs))
            return (0 if not bad else 1, text, bad[0][2] if bad else "")

        def no_stack(source, path):
            """Whether the dump (one that lacks pages the kernel uses) has
            no pages of the stack its signature takes, as its report says."""
            if source not in partial:
                return False
            r = rig.run_kpeek(kpeek, ["-c", path, "report", "--json", "--sections", "panic"])
            try:
                why = (json.loads(r[1]).get("signature_input") or {}).get("no_stack")
            except ValueError:
                return False
            return "excluded" in str(why)

        def same(res, c):
            rc, out, err = res
            entries = out.split("; ") if rc == 0 else []
            sigs = {s.split(": ", 1)[1] for s in entries if not s.endswith(" (no stack)")}
            ok = rc == 0 and len(sigs) == 1 and SIGNATURE_RE.match(next(iter(sigs)))
            if not ok:
                return False, "%s; %s" % (ran(res), out)
            lost = [s for s in entries if s.endswith(" (no stack)")]
            return passed("", ["%s: the dump lacks the stack's pages" % s for s in lost]) if lost else (True, "")
        jobs.append(("%s:report-signature-formats" % prefix("+".join(paths)), pool.submit(signatures),
                     same, None, None))
    return jobs


def ck_report_running(res, c):
    """kpeek report of a kernel that did not panic (live, or a dump of the
    running guest) against the guest's view around it: its release, taint
    mask and modules; no panic (live: no panic section); the checks of a
    clean guest find nothing; every section readable (section_errors: a
    dump that lacks pages the kernel uses, or a snapshot copied while the
    guest ran, may say why a section could not be read)."""
    rc, out, err = res
    try:
        d = json.loads(out)
    except ValueError:
        return False, "not JSON: %s; output:\n%s" % (ran(res), out[-2000:])
    problems, unread = section_errors(res, d, c.partial, c.between)
    bad = schema_errors(d) + problems
    system = d.get("system") or {}
    release = T.text(c.files, "boot.uname").strip()
    if system.get("release") != release:
        bad.append("release %r, uname -r %r" % (system.get("release"), release))
    if system.get("live") is not bool(c.live):
        bad.append("live %r" % system.get("live"))
    mask = system.get("tainted_mask")
    want = {s.tainted for s in (c.pre["stamp"], c.post["stamp"])}
    if not (mask is None and c.run.no_data_symbols) and (not isinstance(mask, str) or int(mask, 16) not in want):
        bad.append("tainted_mask %r, /proc/sys/kernel/tainted %s" % (mask, sorted(want)))
    if c.live and "panic" in d:
        bad.append("a live report has a panic section: %r" % d["panic"])
    elif not c.live and ((d.get("panic") or {}).get("kind") != "none" or d.get("signature") is not None):
        bad.append("panic %r, signature %r of a kernel that did not panic" % (d.get("panic"), d.get("signature")))
    loaded = (d.get("modules") or {}).get("loaded")
    lo, hi = sorted((len(c.pre["modules"]), len(c.post["modules"])))
    if not isinstance(loaded, int) or not lo <= loaded <= hi:
        bad.append("%r modules loaded, /proc/modules %d and %d" % (loaded, lo, hi))
    found = (d.get("checks") or {}).get("found")
    if "checks" in d and found != [] and "error" not in d["checks"]:
        bad.append("checks found %r on a clean kernel" % found)
    if "blocked" in d and "error" not in d["blocked"]:
        bad += blocked_problems(d["blocked"], c)
    largest = (d.get("memory") or {}).get("largest")
    if "memory" in d and (largest is None or "error" not in largest):
        bad += largest_problems(largest, c)
    return passed("", unread) if not bad else (False, "\n".join(bad))


def largest_problems(largest, c):
    """report's largest processes against /proc/PID/stat's rss in the
    readings around it: each listed one (that did not run) with its RSS,
    and no process that did not run, left out, above the smallest listed
    (give or take the per-CPU parts of 6.2+'s counters, rss_slack_kb).
    A live report, or one of a snapshot taken in the guest, may list
    processes no reading saw (kpeek itself, the readers: c.transient); PID
    1 takes the readings (c.readers): its RSS moves with them (5.10 live:
    1920 kB between readings of 1860) and is not compared."""
    if not isinstance(largest, dict) or not isinstance(largest.get("processes"), list):
        return ["memory.largest %r is not an object with a processes list" % (largest,)]
    pre, post = c.pre["threads"], c.post["threads"]
    slack = rss_slack_kb(c.files, "VmRSS", stat=True)
    listed = {p.get("pid"): p for p in largest["processes"]}
    bad = []
    if not 0 < len(listed) <= 5:
        bad.append("%d largest processes, not 1 to 5" % len(listed))
    for pid, p in listed.items():
        a, b = pre.get(pid), post.get(pid)
        if a is None and b is None:
            if not c.live and p.get("comm") not in c.transient:
                bad.append("pid %r %r: in no /proc listing" % (pid, p.get("comm")))
        elif a and b and pid not in c.readers and group_still(pre, post, pid) and \
                not min(a.rss, b.rss) - slack <= p.get("rss", -1) <= max(a.rss, b.rss) + slack:
            bad.append("pid %d %r: rss %r kB, /proc %d..%d kB (+-%d)" % (pid, a.name, p.get("rss"), a.rss, b.rss, slack))
    rss = [p.get("rss") for p in listed.values()]
    if not all(isinstance(x, int) for x in rss) or rss != sorted(rss, reverse=True):
        bad.append("largest rss %r, not numbers largest first" % rss)
    elif len(listed) == 5:
        for tid, a in pre.items():
            b = post.get(tid)
            if tid == a.tgid and tid not in listed and tid not in c.readers and b and group_still(pre, post, tid) and \
                    min(a.rss, b.rss) > rss[-1] + 2 * slack:
                bad.append("pid %d %r: rss %d kB in /proc, above the listed %d kB, not listed" % (
                    tid, a.name, a.rss, rss[-1]))
    return bad


def blocked_problems(blocked, c):
    """kp_proc's blocked role (tests/vm/kp_blocked.c) in report's blocked
    tasks as its /proc readings show it: state D, the function it waits
    in one of /proc/PID/stack's, when it last ran se.exec_start of
    /proc/PID/sched (it never runs again: every reading holds it)."""
    w = Workload.of(c.run)
    pid = w.roles.get("blocked") if not w.why else None
    if pid is None:
        return ["no blocked role to look for: %s" % (w.why or "kp_proc started none")]
    readings = sorted(n for n in c.files if n.startswith("proc.") and n.endswith(".%d.sched" % pid))
    if not readings:
        return ["no /proc/%d/sched reading (proc.TAG.%d.sched) of the blocked role" % (pid, pid)]
    text = lambda n: c.files[n].decode("utf-8", "replace")
    states = {stat_fields(c.files[n[:-5] + "stat"])[3] for n in readings if n[:-5] + "stat" in c.files}
    m = [re.search(r"^se\.exec_start\s*:\s*(\d+)\.(\d{6})$", text(n), re.M) for n in readings]
    starts = {int(x.group(1)) * 1000000 + int(x.group(2)) for x in m if x}  # ns
    stack = {ln.split("]", 1)[-1].strip().split("+")[0] for n in readings
             for ln in text(n[:-5] + "stack").splitlines() if n[:-5] + "stack" in c.files}
    if states != {"D"} or len(starts) != 1:
        return ["the blocked role (pid %d) is not in D state with one se.exec_start in every reading: "
                "states %s, exec_start %s" % (pid, sorted(states), sorted(starts))]
    mine = [t for t in blocked.get("tasks", []) if t.get("pid") == pid]
    if len(mine) != 1:
        return ["pid %d (kp_blocked, D in /proc) not once among the blocked tasks %r" % (pid, blocked.get("tasks"))]
    t, start = mine[0], starts.pop()
    bad = []
    if t.get("comm") != "kp_blocked":
        bad.append("comm %r, not kp_blocked" % t.get("comm"))
    if (t.get("waits_in") or "+").split("+")[0] not in stack:
        bad.append("waits in %r, /proc/%d/stack: %s" % (t.get("waits_in"), pid, sorted(stack)))
    last, since = t.get("last_ran"), t.get("since_ran")
    if not isinstance(last, (int, float)) or abs(round(last * 1e6) - start // 1000) > 1:
        bad.append("last_ran %r s, /proc/%d/sched se.exec_start %d.%06d ms" % (
            last, pid, start // 1000000, start % 1000000))
    if not isinstance(since, (int, float)) or since < 0:
        bad.append("since_ran %r" % since)
    return bad
