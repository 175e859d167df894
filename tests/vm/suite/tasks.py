# SPDX-License-Identifier: MIT
# Checks of tasks: ps (every thread against the /proc listings around the
# source) and loadavg.
import json
import re

from .common import LIVE_OBSERVERS, json_of, ran
from .process_truth import rss_slack_kb
from .results import limited, passed


KWORKER_RE = re.compile(r"^(kworker/(?:R-)?[^+-]*)(?:[+-].*)?$")


def same_name_modulo_work(a, b):
    """Names equal, or the same workqueue worker with another +/- work
    description (it changes with every work item the worker runs)."""
    if a == b:
        return True
    ma, mb = KWORKER_RE.match(a), KWORKER_RE.match(b)
    return bool(ma and mb and ma.group(1) == mb.group(1))


def group_still(pre, post, tgid):
    """Whether no thread of the group tgid ran between the listings (its
    memory sizes then stood still, on these guests without reclaim)."""
    tids = {t for t, x in pre.items() if x.tgid == tgid} | {t for t, x in post.items() if x.tgid == tgid}
    return bool(tids) and all(t in pre and t in post and post[t].still_since(pre[t]) for t in tids)


def memory_problems(r, c, a, b, still):
    """vsz and rss against /proc/PID/stat's vsize and rss: 0 for a kernel
    thread; for a group that did not run (PID 1, which takes the readings,
    always runs), its VSZ exactly and its RSS within
    what the per-CPU parts of 6.2+'s counters allow (rss_slack_kb: /proc's
    stat shows their shared count alone)."""
    vsz, rss = r.get("vsz"), r.get("rss")
    if not (isinstance(vsz, int) and isinstance(rss, int)):
        return ["pid %s %r: vsz %r rss %r, not numbers" % (r.get("pid"), r.get("name"), vsz, rss)]
    if r.get("kthread"):
        return [] if vsz == rss == 0 else ["pid %s %r: a kernel thread with vsz %d rss %d" % (
            r["pid"], r["name"], vsz, rss)]
    if not (a and b and still):
        return []
    slack = rss_slack_kb(c.files, "VmRSS", stat=True)
    problems = []
    if vsz not in (a.vsz, b.vsz):
        problems.append("pid %d %r did not run, yet vsz %d kB, /proc %d kB" % (r["pid"], r["name"], vsz, a.vsz))
    if not min(a.rss, b.rss) - slack <= rss <= max(a.rss, b.rss) + slack:
        problems.append("pid %d %r did not run, yet rss %d kB, /proc %d..%d kB (+-%d)" % (
            r["pid"], r["name"], rss, a.rss, b.rss, slack))
    return problems


def compare_tasks(rows, c, leaders_only, left_out=0, unknown_ppid=False, unnamed_ok=False,
                  memory_unknown_ok=False):
    """kpeek's tasks against the thread listings before and after it. A
    thread whose schedstat run count and run time did not change between
    them did not run (Thread.still_since): its state, CPU and name must be exactly those of the listings.
    One that ran must still be the same thread (tgid, ppid) with a state
    it had or R, and its name modulo the worker's work description.
    Returns (problems, skipped): skipped are what a dump without their
    memory kept from being compared (left_out, unknown_ppid)."""
    pre, post = c.pre["threads"], c.post["threads"]
    problems, skipped = [], []
    seen = {}
    for r in rows:
        try:
            tid, tgid = int(r["pid"]), int(r["tgid"])
            # null: the parent's task_struct is not in the dump, which
            # kpeek must have said (unknown_ppid).
            ppid = None if r["ppid"] is None and unknown_ppid else int(r["ppid"])
            state, name, cpu, comm = r["state"], r["name"], r["cpu"], r["comm"]
        except (KeyError, TypeError, ValueError) as e:
            return ["row without pid/tgid/ppid/state/name/comm/cpu (%s): %s" % (e, r)], []
        # null: the full name is not in the dump, which kpeek must have said
        # (counted in its error line); the comm is then the name's first 15
        # characters, as the kernel cut it.
        cut = name is None
        if cut and not unnamed_ok:
            problems.append("pid %d %r: name null, but kpeek said nothing is missing" % (tid, comm))
            continue
        if cut:
            name = comm
        if tid in seen:
            problems.append("pid %d listed twice" % tid)
        seen[tid] = r
        if tid == 0:
            if name != "swapper/0" or state != "R":
                problems.append("pid 0 is %r %s, expected the idle task swapper/0 R" % (name, state))
            continue
        if leaders_only and tid != tgid:
            problems.append("thread %d of %d listed without -t" % (tid, tgid))
        a, b = pre.get(tid), post.get(tid)
        if name in c.transient and (a or b) and (a or b).name in c.transient:
            continue
        if a is None and b is None:
            if name not in c.transient:
                problems.append("pid %d %r (tgid %d) is in neither /proc listing" % (tid, name, tgid))
            continue
        if cpu is None:
            problems.append("pid %d %r: no CPU" % (tid, name))
            continue
        t = a or b
        if tgid != t.tgid:
            problems.append("pid %d %r: tgid %d, /proc %d" % (tid, name, tgid, t.tgid))
        if ppid is None:
            skipped.append("pid %d %r: ppid not compared (its parent is not in the dump)" % (tid, name))
        elif ppid not in {x.ppid for x in (a, b) if x}:
            problems.append("pid %d %r: ppid %d, /proc %s" % (tid, name, ppid,
                                                            sorted({x.ppid for x in (a, b) if x})))
        if not (memory_unknown_ok and r.get("vsz") is None and r.get("rss") is None):
            problems += memory_problems(r, c, a, b, tid not in c.readers and group_still(pre, post, tgid))
        if a and b and b.still_since(a) and tid not in c.readers:
            for field, got, want in (("state", state, a.state), ("cpu", cpu, a.cpu),
                                     ("name", name, a.name)):
                if field == "name" and cut and want.startswith(got):
                    continue  # the comm: the name's start (a worker's without its work)
                if got != want:
                    problems.append("pid %d %r did not run, yet %s %r, /proc %r" % (
                        tid, name, field, got, want))
        else:
            states = {x.state for x in (a, b) if x} | {"R"}
            if state not in states and tid not in c.readers:
                problems.append("pid %d %r: state %s, /proc %s (or R)" % (tid, name, state, sorted(states)))
            if not any(x.name.startswith(name) if cut else same_name_modulo_work(name, x.name)
                       for x in (a, b) if x):
                problems.append("pid %d: name %r, /proc %s" % (tid, name,
                                                              sorted({x.name for x in (a, b) if x})))
    missing = []
    for tid in sorted(set(pre) & set(post)):
        t = pre[tid]
        if leaders_only and t.tgid != tid or tid in seen or t.name in c.transient:
            continue
        if left_out and t.tgid != tid and t.tgid in seen:
            # a thread of a group whose thread list kpeek could not read
            skipped.append("pid %d %r (tgid %d): not listed, its group's thread list is not in the dump" % (
                tid, t.name, t.tgid))
            continue
        missing.append("pid %d %r (tgid %d) is in both /proc listings but not listed" % (
            tid, t.name, t.tgid))
    # kpeek said how many tasks it left out (their memory is not in the dump).
    if missing and len(missing) <= left_out:
        skipped += [m.replace(" is in both /proc listings but not listed", ": not listed, left out of the dump")
                    for m in missing]
        missing = []
    problems += missing
    if "0" not in [str(r.get("pid")) for r in rows]:
        problems.append("no idle task (pid 0)")
    return problems, skipped


def ck_ps(leaders_only):
    def ck(res, c):
        rc, out, err = res
        left_out = 0
        # On a dump that lacks pages the kernel uses, kpeek must say what
        # it could not read: tasks it left out (and how many), or where the
        # task list could not be followed, and the tasks whose memory sizes
        # it could not read (VSZ and RSS null, as many as it says); what it
        # lists must still be right.
        mem = re.search(r"^kpeek: ps: the memory sizes of (\d+) tasks? could not be read, the first: "
                        r".*excluded from the dump.*\n", err, re.M) if c.partial else None
        no_memory = int(mem.group(1)) if mem else 0
        if mem:
            err = err.replace(mem.group(0), "")
            res = (rc, out, err) if err else (0, out, "")
        m = re.match(r"^kpeek: incomplete: (\d+) errors? reading tasks(?: \(and the parent of (\d+) tasks? "
                     r"unreadable\))?, the first: (.*excluded from the dump.*)\n$", err)
        orphans = re.match(r"^kpeek: incomplete: the parent of \d+ tasks? could not be read, the first: task \d+ .*\n$", err)
        if c.partial and rc == 2 and m:
            # Missing tasks are then allowed (a gap in the task list loses
            # more tasks than it counts errors), wrong ones never.
            left_out = 1 << 30
            res = (0, out, "")
        elif c.partial and rc == 2 and orphans:
            res = (0, out, "")  # ppid null where the parent is missing
        rows, why = json_of(res, "tasks")
        if rows is None:
            return False, why
        unread = len([r for r in rows if r.get("vsz") is None and r.get("rss") is None])
        if unread != no_memory:
            return False, "%d tasks with vsz and rss null, kpeek said %d could not be read" % (
                unread, no_memory)
        # PPID null only where kpeek said a parent could not be read.
        problems, skips = compare_tasks(rows, c, leaders_only, left_out,
                                        bool(orphans) or bool(m and m.group(2)), unnamed_ok=bool(m),
                                        memory_unknown_ok=bool(no_memory))
        if not problems:
            return passed("", skips) if skips else (True, "")
        return False, "%d differences from /proc (of %d rows):\n%s" % (
            len(problems), len(rows), "\n".join(problems[:40]))
    return ck


def ck_loadavg(res, c):
    doc_rc, out, err = res
    try:
        doc = json.loads(out) if doc_rc == 0 else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return False, "%s; output:\n%s" % (ran(res), out[:500])
    a, b = c.pre["stamp"], c.post["stamp"]
    got = ["%.2f" % doc.get(k, -1) for k in ("load1", "load5", "load15")]
    problems = []
    if c.between:
        # Over the ~30 s a snapshot inside the guest takes under TCG, the
        # load can rise and fall back between the two stamps: kpeek's copy
        # of avenrun is one of the values /proc/loadavg showed, each for 5 s,
        # to a reader sampling it every half second.
        seen = [a.loads, b.loads] + c.load_samples
        for i, g in enumerate(got):
            vals = [float(x[i]) for x in seen]
            if not min(vals) <= float(g) <= max(vals):
                problems.append("load %s not between %s and %s (%d readings)" % (
                    g, min(vals), max(vals), len(seen)))
    elif got not in (a.loads, b.loads):
        problems.append("loads %s, /proc/loadavg %s before, %s after" % (got, a.loads, b.loads))
    # Threads: a live kpeek adds kp()'s processes (itself among them) to the
    # count /proc/loadavg showed just before it.
    extra = len(LIVE_OBSERVERS) if c.live or c.between else 0
    lo, hi = min(a.total, b.total), max(a.total, b.total) + extra
    num = lambda k: doc.get(k) if isinstance(doc.get(k), int) else -2  # null: unknown
    limit = ""
    if doc.get("threads") is None and c.run.no_data_symbols:
        # nr_threads is static in kernel/fork.c: no table kpeek reads names it.
        limit = "threads unknown (nr_threads is in no symbol table)"
    elif not lo <= num("threads") <= hi:
        problems.append("threads %s, /proc/loadavg %d before, %d after" % (doc.get("threads"), a.total, b.total))
    # Running: kp_spin always; the reader of /proc/loadavg counts itself.
    if not 1 <= num("running") <= max(a.running, b.running) + extra:
        problems.append("running %s, /proc/loadavg %d before, %d after" % (doc.get("running"), a.running, b.running))
    if not a.last_pid <= num("last_pid") <= b.last_pid:
        problems.append("last_pid %s, /proc/loadavg %d before, %d after" % (doc.get("last_pid"), a.last_pid, b.last_pid))
    if not problems:
        return limited(limit) if limit else (True, "")
    return False, "; ".join(problems) + "\n" + out
