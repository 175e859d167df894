# SPDX-License-Identifier: MIT
# The checks of the corrupt-state cases (corrupt.py): each compares kpeek's
# answer on a damaged dump with what the guest said of itself and with the
# damage (what must be left out, named, or found), and the helpers they
# share to read kpeek's one-line errors and walk statuses.
import json
import re

from .common import ran
from .modules import module_line, proc_used_by
from .tasks import compare_tasks
MISSING_RE = re.compile(r"^pid (\d+) .* is in both /proc listings but not listed$")
TS_RE = re.compile(r"^<\d+>\[\s*(\d+)\.(\d{6})\]")


def lines_of(err):
    return [x for x in err.split("\n") if x.strip()]


def incomplete_line(err, cmd):
    """The one stderr line of a walk that stopped: 'kpeek: CMD: incomplete:
    ...' (ps says 'kpeek: incomplete: ...'), or None."""
    ls = lines_of(err)
    if len(ls) == 1 and re.match(r"^kpeek: (%s: )?incomplete: " % re.escape(cmd), ls[0]):
        return ls[0]
    return None


def walk_status(doc):
    return {k: doc.get(k) for k in ("complete", "reason", "error", "left_out", "restarts")}


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
        if rc != 2 or not incomplete_line(err, "dmesg"):
            problems.append("expected exit 2 and one stderr line 'kpeek: dmesg: incomplete: ...', %s" % ran(res))
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
        if rc == 2 and st["complete"] is False and st["reason"] == "corrupt" and st["left_out"] == n_lost:
            return True, ""
        return False, "expected exit 2, complete false, reason corrupt, left_out %d; %s; %s" % (n_lost, ran(res), st)
    return ck


def ck_dmesg_none(res, c):
    """No descriptor holds its id: one error line naming the ring, no log."""
    rc, out, err = res
    ls = lines_of(err)
    if rc == 2 and not out.strip() and len(ls) == 1 and "corrupt" in ls[0] and "printk" in ls[0]:
        return True, ""
    return False, "expected exit 2, no output and one stderr line saying the printk ring is corrupt, " \
        "%s; output: %s" % (ran(res), out[:300])


# ---------------------------------------------------------------- tasks

def ck_ps_left_out(target, allowed, node):
    """ps --json on a dump without the page of target's task list node: every
    task of the listings but those whose task_struct is on that page, each
    right; target not listed; ppid unknown only for a lost task's children;
    exit 2, one stderr line naming the node; complete false, unreadable."""
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
        # The first read that failed may be of another task_struct on the
        # same page (slab placement varies from boot to boot: 7.2-arm64's
        # pid 7 shared pid 1's page once): any address on that page is right.
        page = node & ~0xFFF
        named = [int(x, 16) for x in re.findall(r"0x([0-9a-f]+)", line or "")]
        if rc != 2 or not line or not any(page <= a < page + 0x1000 for a in named):
            problems.append("expected exit 2 and one stderr line 'incomplete' naming 0x%x or another "
                            "address on its page, %s" % (node, ran(res)))
        if st["complete"] is not False or st["reason"] != "unreadable":
            problems.append("expected complete false, reason unreadable: %s" % st)
        if not problems:
            return True, ""
        return False, "%d problems (left out: %s, allowed %s):\n%s" % (
            len(problems), sorted(missing), sorted(allowed), "\n".join(problems[:20]))
    return ck


def ck_ps_stops(names, reasons, node_after=None, hidden=None):
    """ps --json on a task list with a bad link: exit 2, one stderr line
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
            if rc != 2 or not line or not all(("%x" % n) in line for n in names):
                problems.append("expected exit 2 and one stderr line 'incomplete' naming %s, %s" % (
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
    'incomplete: N errors reading tasks' (exit 2, complete false); no other
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
        if rc != 2 or not m or int(m.group(1)) != len(unnamed) or doc.get("complete") is not False:
            problems.append("%d names null: expected exit 2, complete false and one stderr line counting "
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
                     "used_by": proc_used_by(r), "state": r["state"], "base": int(r["base"], 16),
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
    users is the lost module); exit 2, one stderr line; complete false,
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
        if rc != 2 or not incomplete_line(err, "lsmod"):
            problems.append("expected exit 2 and one stderr line 'kpeek: lsmod: incomplete: ...', %s" % ran(res))
        if st["complete"] is not False or st["reason"] != "unreadable":
            problems.append("expected complete false, reason unreadable: %s" % st)
        if not problems:
            return True, ""
        return False, "\n".join(problems)
    return ck


def ck_lsmod_cycle(name, node):
    """lsmod --json of a modules list whose link after name goes back to
    the first module: the modules up to name exactly as /proc/modules, once
    each; exit 2, one stderr line naming the link; complete false, corrupt."""
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
        if rc != 2 or not line or ("%x" % node) not in line or "corrupt" not in line:
            problems.append("expected exit 2 and one stderr line 'incomplete' saying the list is corrupt "
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
