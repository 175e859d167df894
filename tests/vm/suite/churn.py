# SPDX-License-Identifier: MIT
# Live churn (KERNEL:GUEST:live-churn:CHECK-N): in the live phase of a
# kernel's first guest, before its dumps, tests/vm/init's "churn ROUNDS"
# starts kp_churn (tests/vm/kp_churn.c: children and threads that exit at
# once, in a loop) and a loop that loads and unloads the module of
# churn.list, and runs kpeek: ps, ps -t, lsmod and check in each of ROUNDS
# rounds, bt --all, bt of kp_sleeper_a and watch in the first (on arm64
# ps -t, lsmod, check and bt --all only: RUNS). Every run
# must end in bounded time with exit 0 and well-formed output, or exit 0
# and the one stderr line of a walk that never settled (SECURITY.md: live
# passes); bt --all may exit 2 for stacks of tasks that ran while it read
# them (kpeek bt: "1 a stack that was not followed to its end"); what it lists must
# be right (every long-lived task and module of the listings around it,
# each as /proc says; nothing /proc did not show but the churn's own
# transient tasks); check may only report "possibly a live race". The
# walks' "complete" and "restarts" are summed up in a NOTE line.
import json
import re
import time

import truth as T

from .bt import bt_names, ck_bt_all, sched_ranges
from .checks import check_doc, findings
from .common import CHECKS, live_run, notes, ran, timed
from .modules import module_line, proc_used_by
from .results import limited, outcome_of
from .symbols import ck_watch
from .tasks import compare_tasks

ROUNDS = 1
SOURCE = "live-churn"
HZ = 250            # Debian's CONFIG_HZ (x86-64 and arm64)
MAX_SECONDS = 60    # a run under churn must end within this (guest time)
# Names of the churn's tasks: kp_churn's forks and threads (named by it
# after they start: "kp_churn" until then), the module loop's insmod and
# rmmod (a fork of /init is "init" until it execs). The long-lived ones
# among them (kp_churn, /init and its loop) are required by pid.
TRANSIENT = {"kp_churn", "kp_churn_child", "kp_churn_thr", "insmod", "rmmod", "init"}
LONG_LIVED = {"kp_churn", "init"}
CHANGED_RE = re.compile(r"^kpeek: (\S+): the live kernel changed during the walk \((\d+) restarts?\): "
                        r"the list may miss .* that appeared or went away meanwhile$")
# (check name, init tag, in every round or the first only, also in a short
# churn: the arm64 guests, where each kpeek run under churn takes 6-12 s of
# TCG time; ps walks the task list ps -t walks, bt PID the stacks of bt --all)
RUNS = [("ps", "churn-ps", True, False), ("ps-threads", "churn-ps-t", True, True),
        ("lsmod", "churn-lsmod", True, True), ("check", "churn-check", True, True),
        ("bt-all", "churn-bt-all", False, True), ("bt-pid", "churn-bt", False, False),
        ("watch", "churn-watch", False, False)]
STATE_RE = re.compile(r"^pid \d+ .*: state (\S+), /proc \[.*\] \(or R\)$")
STATES = set("RSDTtXZPI")


def enabled(run):
    return run.full  # every kernel's first guest


def short(run):
    return run.arch == "arm64"


def start(run, g):
    """In the live phase of run's guest g (before its dumps): the churn."""
    if not enabled(run):
        return
    t0 = time.monotonic()
    ok = g.command("churn %d%s" % (ROUNDS, " short" if short(run) else ""), 300 * ROUNDS)
    timed("%s live churn (%d rounds)" % (run.name, ROUNDS), t0)
    vals = g.vals()
    end = vals.get("churn:end", "")
    # The modules the loop loads and unloads: "modules=ts_kmp.ko ".
    run.churned = {ko[:-3] for ko in vals.get("churn:start", "").partition("modules=")[2].split()}
    run.check("churn", ok and "rounds=%d " % ROUNDS in end + " " and end.endswith("left="),
              "churn: %s; start %s; end %s" % (g.dead or "done", vals.get("churn:start"), end))


def live_end(res, cmd):
    """(None, changed) if stderr is empty (changed False) or the one line of
    a live walk that never settled (changed True); (why, _) otherwise."""
    rc, out, err = res
    lines = [x for x in err.split("\n") if x.strip()]
    if rc == 124:
        return "timed out (busybox timeout in the guest)", False
    if rc != 0:
        return "expected exit 0, %s" % ran(res), False
    if not lines:
        return None, False
    m = CHANGED_RE.match(lines[0]) if cmd else None
    if len(lines) == 1 and m and m.group(1) == cmd:
        return None, True
    if not cmd:
        return "expected no stderr, got: %s" % err.strip()[:500], False
    return "expected no stderr or one line saying the live %s walk never settled, got: %s" % (
        cmd, err.strip()[:500]), False


def walk_fields(doc, changed):
    """Problems of the listing's complete/reason against its stderr."""
    if changed and (doc.get("complete") is not False or doc.get("reason") != "live-changed"):
        return ["stderr says the walk never settled, JSON says complete %r, reason %r" % (
            doc.get("complete"), doc.get("reason"))]
    if not changed and doc.get("complete") is not True:
        return ["no stderr, yet JSON says complete %r, reason %r" % (doc.get("complete"), doc.get("reason"))]
    return []


def seconds(c):
    return (c.post["stamp"].jiffies - c.pre["stamp"].jiffies) / HZ


class Tally:
    """complete / live-changed / restarts of each kind of walk, and bt
    --all's exit statuses: one NOTE line, kept up to date as the checks run."""

    def __init__(self, run):
        self.run, self.rows, self.exits, self.races, self.at = run, {}, [], [], None

    def add(self, name, doc):
        if not isinstance(doc, dict) or "complete" not in doc:
            return
        t = self.rows.setdefault(name, [0, 0, []])
        t[0 if doc["complete"] else 1] += 1
        if doc.get("restarts") is not None:
            t[2].append(doc["restarts"])
        self.update()

    def exit(self, rc):
        self.exits.append(rc)
        self.update()

    def race(self, what):
        self.races.append(what)
        self.update()

    def update(self):
        parts = ["%s %d complete, %d live-changed%s" % (n, t[0], t[1], " (restarts %s)" % t[2] if t[2] else "")
                 for n, t in sorted(self.rows.items())]
        if self.exits:
            parts.append("bt --all exit statuses %s" % self.exits)
        if self.races:
            parts.append("check's live races %s" % ", ".join(self.races))
        line = "%s live churn: %s" % (self.run.name, "; ".join(parts))
        if self.at is None:
            self.at = len(notes)
            notes.append(line)
        else:
            notes[self.at] = line


def ck_tasks(name, leaders_only, tally):
    def ck(res, c):
        why, changed = live_end(res, "ps")
        if why:
            return False, why
        try:
            doc = json.loads(res[1])
            rows = doc["tasks"]
        except (ValueError, KeyError) as e:
            return False, "not ps --json output (%s): %s" % (e, res[1][:300])
        tally.add(name, doc)
        c.transient |= TRANSIENT
        problems, skipped = compare_tasks(rows, c, leaders_only)
        # A task that ran between the listings (only those get this
        # message) may have been in any state when kpeek read it.
        problems = [p for p in problems if not (STATE_RE.match(p) and STATE_RE.match(p).group(1) in STATES)]
        problems += walk_fields(doc, changed)
        listed = {r.get("pid") for r in rows}
        pre, post = c.pre["threads"], c.post["threads"]
        for tid in sorted(set(pre) & set(post)):
            t = pre[tid]
            if t.name in LONG_LIVED and (t.tgid == tid or not leaders_only) and tid not in listed:
                problems.append("pid %d %r (tgid %d) is in both /proc listings but not listed" % (tid, t.name, t.tgid))
        if seconds(c) > MAX_SECONDS:
            problems.append("took %.1f s" % seconds(c))
        if problems or skipped:
            return False, "%d differences from /proc (of %d rows, %s):\n%s" % (
                len(problems) + len(skipped), len(rows), "live-changed" if changed else "complete",
                "\n".join((problems + skipped)[:30]))
        return True, ""
    return ck


def ck_bt_all_churn(tally):
    """bt --all under churn: ck_bt_all (every thread that did not run has
    the frames of /proc/TID/stack, only one that ran may be refused or end
    early); exit 2 is only allowed without stderr (a stack of a task that
    ran while read), counted in the NOTE line."""
    def ck(res, c):
        tally.exit(res[0])
        if res[0] == 2 and not res[2].strip():
            why, changed = None, False
        else:
            why, changed = live_end(res, "bt")
        if why:
            return False, why
        try:
            doc = json.loads(res[1])
        except ValueError as e:
            return False, "not JSON (%s): %s" % (e, res[1][:300])
        tally.add("bt-all", doc)
        c.transient |= TRANSIENT
        problems = walk_fields(doc, changed)
        if seconds(c) > MAX_SECONDS:
            problems.append("took %.1f s" % seconds(c))
        o = outcome_of(ck_bt_all(res, c))
        if o.kind != "pass" or o.skipped:
            problems.append("%s %s" % (o.detail, "; ".join(o.skipped)))
        return (True, "") if not problems else (False, "\n".join(problems))
    return ck


def ck_bt_pid(res, c):
    """bt of kp_sleeper_a (asleep in wait4 the whole time): the frames
    /proc/PID/stack gave just before."""
    why, changed = live_end(res, "bt")
    if why:
        return False, why
    try:
        rows = json.loads(res[1])["stacks"]
    except (ValueError, KeyError) as e:
        return False, "not bt --json output (%s): %s" % (e, res[1][:300])
    pre, post = c.pre["threads"], c.post["threads"]
    if len(rows) != 1:
        return False, "%d stacks, expected kp_sleeper_a's" % len(rows)
    tid = rows[0].get("tid")
    a, b = pre.get(tid), post.get(tid)
    if not a or a.name != "kp_sleeper_a":
        return False, "a stack of tid %s %r, expected kp_sleeper_a's" % (tid, rows[0].get("comm"))
    if not b or not b.still_since(a):
        return False, "kp_sleeper_a ran between the listings: nothing to compare"
    want = (c.pre["stacks"] or {}).get(tid)
    got = bt_names(rows[0], sched_ranges(c.run))
    if rows[0].get("complete") and want and got[:len(want)] == want and len(got) == len(want):
        return True, ""
    return False, "tid %d:\n    kpeek %s (complete %s)\n    /proc %s" % (tid, got, rows[0].get("complete"), want)


def ck_lsmod_churn(module_names, tally):
    """Every module of /proc/modules but the churned ones, as /proc says;
    a churned one may be there, in any state."""
    def ck(res, c):
        why, changed = live_end(res, "lsmod")
        if why:
            return False, why
        try:
            doc = json.loads(res[1])
            rows = doc["modules"]
            got = [module_line({"name": r["name"], "size": int(r["size"]), "refcnt": int(r["refcnt"]),
                                "used_by": proc_used_by(r), "state": r["state"], "base": int(r["base"], 16),
                                "taints": r["taints"]}) for r in rows if r["name"] not in module_names]
        except (ValueError, KeyError, TypeError) as e:
            return False, "not lsmod --json output (%s): %s" % (e, res[1][:300])
        tally.add("lsmod", doc)
        want = [[module_line(m) for m in x["modules"] if m["name"] not in module_names] for x in (c.pre, c.post)]
        problems = walk_fields(doc, changed)
        if got not in want:
            problems.append("modules other than %s differ from /proc/modules:\n  want %s\n  got  %s" % (
                sorted(module_names), "\n       ".join(want[0]), "\n       ".join(got)))
        bad = [r for r in rows if r["name"] in module_names and r["state"] not in ("Live", "Loading", "Unloading")]
        if bad:
            problems.append("churned module in state %s" % bad[0]["state"])
        return (True, "") if not problems else (False, "\n".join(problems))
    return ck


def ck_check_churn(run, tally):
    """kpeek check --json under churn: exit 0, every check clean (idt not
    applicable on arm64), no finding but "possibly a live race". On a
    kernel whose kallsyms has no variables the checks that need them say
    so, with exit 2 (a limit, as ck_check_clean has it)."""
    def ck(res, c):
        checks, why = check_doc(res)
        if why:
            return False, why
        problems, limits = [], []
        for name in CHECKS:
            x = checks.get(name)
            if x is None:
                problems.append("no %s check" % name)
                continue
            st = x.get("status")
            if st == "cannot" and run.no_data_symbols:
                limits.append("%s: %s" % (name, x.get("reason")))
            elif not (st == "clean" or st == "not-applicable" and name == "idt" and run.arch == "arm64"):
                problems.append("%s: %s %s" % (name, st, x.get("reason") or ""))
            bad = [f for f in findings(x) if f.get("kind") != "live-race"]
            for f in findings(x):
                if f.get("kind") == "live-race":
                    tally.race("%s: %s" % (name, f.get("object")))
            if bad:
                problems.append("%s: findings other than live races: %s" % (name, json.dumps(bad)[:1000]))
        if res[0] != (2 if limits else 0):
            problems.append("expected exit %d, %s" % (2 if limits else 0, ran(res)))
        if seconds(c) > MAX_SECONDS:
            problems.append("took %.1f s" % seconds(c))
        if problems:
            return False, "\n".join(problems)
        return limited("; ".join(limits)) if limits else (True, "")
    return ck


def quiet(ck, exits=(0,)):
    """A check of a run that must write nothing on stderr, and exit with
    one of exits (ck decides which of them is right)."""
    def wrapped(res, c):
        why, _ = live_end(res if res[0] not in exits else (0,) + tuple(res[1:]), None)
        if not why:
            return ck(res, c)
        # Say what the output held too: an exit of 1 from check is a finding.
        ok, more = ck(res, c) if res[0] != 124 else (True, "")
        return False, why if ok or not more else "%s\n%s" % (why, more)
    return wrapped


def churn_jobs(run):
    """The checks of the churn's kpeek runs (results from the guest's files)."""
    if not enabled(run):
        return []
    jobs, tally = [], Tally(run)
    churned = getattr(run, "churned", set())
    for i in range(1, ROUNDS + 1):
        for name, tag, every, in_short in RUNS:
            if not every and i > 1 or short(run) and not in_short:
                continue
            check = "%s:%s-%d" % (run.prefix(SOURCE), name, i)
            tag = "%s-%d" % (tag, i)
            ck = {"ps": ck_tasks("ps", True, tally), "ps-threads": ck_tasks("ps-threads", False, tally),
                  "bt-all": ck_bt_all_churn(tally), "bt-pid": ck_bt_pid,
                  "lsmod": ck_lsmod_churn(churned, tally), "check": quiet(ck_check_churn(run, tally), (0, 2)),
                  "watch": quiet(ck_watch)}[name]
            try:
                ctx = run.live_ctx(tag)
            except T.TruthError as e:
                jobs.append((check, None, lambda res, c: (False, res[2]), None,
                             (None, "", "no ground truth (see the rig check churn): %s" % e)))
                continue
            jobs.append((check, None, ck, ctx, run.live_result(tag)))
    return jobs


# ---------------------------------------------------------------- the rootkit guest

def start_rootkit(rr, g):
    """In the rootkit guest, after the rootkit is loaded: check under churn."""
    t0 = time.monotonic()
    ok = g.command("churn 1 check", 300)
    timed("%s live churn (check)" % rr.name, t0)
    end = g.vals().get("churn:end", "")
    rr.check("churn", ok and end.startswith("rounds=1 ") and end.endswith("left="),
             "churn: %s; end %s" % (g.dead or "done", end))


def rootkit_jobs(rr):
    """KERNEL:rootkit:live-churn:check-NAME: check --json run under churn
    finds exactly what the rootkit did (ck_rootkit), its live races left
    aside (counted in a NOTE line); nothing on stderr."""
    from .rootkit import ck_rootkit  # rootkit.py imports this module
    f = rr.files
    if "live.churn-check-1.rc" in f:
        res = live_run(f, "churn-check-1")
    else:
        res = (None, "", "no live.churn-check-1 from the rootkit guest (see its rig check churn)")
    noted = []

    def without_races(ck):
        def wrapped(res, c):
            # ck_rootkit wants exit 1 (findings); nothing on stderr.
            if res[0] == 124:
                return False, "timed out (busybox timeout in the guest)"
            if res[2].strip():
                return False, "expected no stderr, got: %s" % res[2].strip()[:500]
            try:
                doc = json.loads(res[1])
                races = ["%s: %s" % (x["name"], r.get("object")) for x in doc["checks"]
                         for r in x.get("findings", []) if r.get("kind") == "live-race"]
                for x in doc["checks"]:
                    x["findings"] = [r for r in x.get("findings", []) if r.get("kind") != "live-race"]
            except (ValueError, KeyError, TypeError) as e:
                return False, "not check --json output (%s): %s" % (e, res[1][:300])
            if not noted:
                noted.append(True)
                notes.append("%s live churn: check's live races (not findings): %s" % (
                    rr.name, ", ".join(races) or "none"))
            return ck((res[0], json.dumps(doc), res[2]), c)
        return wrapped
    return [("%s:check-%s" % (rr.prefix(SOURCE), name), None, without_races(ck_rootkit(rr, name)), None, res)
            for name in CHECKS]
