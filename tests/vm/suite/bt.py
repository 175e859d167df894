# SPDX-License-Identifier: MIT
# Checks of kpeek bt: every sleeping thread against /proc/PID/stack, the
# panicking task against the console, one stack per CPU.
import re

import truth as T

from .common import json_of, ran
from .console import console_oops, console_trace, frame_name, same_regs
from .results import passed


def sched_ranges(run):
    """The code /proc/PID/stack leaves out (in_sched_functions(): the
    scheduler's and the lock functions' sections), from /proc/kallsyms."""
    a = {n: addr for addr, t, n, m in run.kallsyms if m is None}
    return [(a[lo], a[hi]) for lo, hi in (("__sched_text_start", "__sched_text_end"),
                                          ("__lock_text_start", "__lock_text_end"))
            if lo in a and hi in a]


def bt_names(row, ranges=()):
    """kpeek's frames as the kernel prints them ("name+0xoff/0xsize [mod]"),
    without the user-mode context and frames in ranges."""
    out = []
    for f in row.get("frames", []):
        if f.get("user"):
            continue
        pc = int(f["pc"], 16)
        if any(lo <= pc < hi for lo, hi in ranges):
            continue
        n = "%s+0x%x/0x%x" % (f["symbol"], f["offset"], f["size"] or 0) if f.get("symbol") else f["pc"]
        out.append(frame_name(n, f.get("module")))
    return out


# /proc/PID/stack prints at most MAX_STACK_TRACE_DEPTH entries.
PROC_STACK_MAX = 64
BT_MIN_COMPARED = 10


def ck_bt_all(res, c):
    """kpeek bt --all against /proc/TID/stack read just before it (live) or
    before the dump: every thread that did not run between the listings
    around it (schedstat) and is not runnable must have exactly the frames
    the kernel's own unwinder gave, scheduler functions left out as
    /proc does; every stack kpeek gives must reach its end, and only a
    thread that was running may be refused. On a dump that leaves out
    pages the kernel uses, the stacks it could not give are skipped
    entries; at least BT_MIN_COMPARED stacks must still be compared."""
    rc, out, err = res
    # Exit 1: some stack stopped early, or (a partial dump) tasks could not
    # be read; which, and whether they may, is below.
    if rc == 2 and err and not (c.partial and err.startswith("kpeek: incomplete: ")):
        return False, ran(res)
    rows, why = json_of((0, out, err) if rc == 2 else res, "stacks")
    if rows is None:
        return False, why
    stacks = c.pre.get("stacks")
    if stacks is None:
        return False, "no /proc stacks were read to compare with"
    pre, post = c.pre["threads"], c.post["threads"]
    ranges = sched_ranges(c.run)
    problems, compared, skipped = [], 0, []
    by_tid = {}
    for r in rows:
        tid = r.get("tid")
        by_tid[tid] = r
        a, b = pre.get(tid), post.get(tid)
        ran_ = not a or not b or not b.still_since(a) or "R" in (a.state, b.state)
        # A dump makedumpfile filtered without knowing the kernel lacks
        # pages the kernel uses (c.partial): kpeek must say which.
        excluded = c.partial and "excluded from the dump" in (r.get("error") or r.get("end") or "")
        if "error" in r:
            if not (ran_ or excluded or tid in c.readers or r.get("comm") in c.transient or tid == 0):
                problems.append("tid %s %r did not run, yet: %s" % (tid, r.get("comm"), r["error"]))
        elif not r.get("complete") and not ran_ and not excluded:
            problems.append("tid %s %r: stack incomplete: %s" % (tid, r.get("comm"), r.get("end")))
    for tid, want in sorted(stacks.items()):
        a, b = pre.get(tid), post.get(tid)
        if not a or not b or not b.still_since(a) or "R" in (a.state, b.state) or \
                tid in c.readers or a.name in c.transient or not want:
            continue
        r = by_tid.get(tid)
        if r is None:
            if not c.partial:
                problems.append("tid %d %r did not run, but kpeek lists no stack for it" % (tid, a.name))
            else:  # kpeek counted the tasks it could not read
                skipped.append("tid %d %r: no stack listed (a task the dump leaves out)" % (tid, a.name))
            continue
        if "error" in r or not r.get("complete"):
            why = r.get("error") or r.get("end") or ""
            if c.partial and "excluded from the dump" in why:
                skipped.append("tid %d %r: %s" % (tid, a.name, why))
            continue  # reported above, or a partial dump's missing page
        got = bt_names(r, ranges)[:PROC_STACK_MAX]
        compared += 1
        if got != want:
            problems.append("tid %d %r:\n    kpeek %s\n    /proc %s" % (tid, a.name, got, want))
    if compared < BT_MIN_COMPARED:
        problems.append("only %d threads did not run between the readings (need %d to compare)" % (
            compared, BT_MIN_COMPARED))
    # Issue 36: a dump of a stopped machine (each CPU's registers in its
    # note, nothing changing while it was written, no page it needs left
    # out) has every stack whole, the running tasks' too: exit 0 and no
    # stack that stops early.
    if not c.live and not c.between and not c.partial:
        if rc != 0:
            problems.append("exit %d on a dump of a stopped machine" % rc)
        for r in rows:
            if "error" in r or not r.get("complete"):
                problems.append("tid %s %r: not whole on a dump of a stopped machine: %s" % (
                    r.get("tid"), r.get("comm"), r.get("error") or r.get("end")))
    if problems:
        return False, "%d problems (%d stacks compared):\n%s" % (len(problems), compared,
                                                              "\n".join(problems[:20]))
    return passed("", skipped) if skipped else (True, "")


FRAME_PARTS_RE = re.compile(r"(\S+)\+0x([0-9a-f]+)/0x([0-9a-f]+)")


def same_return(got, want):
    """A frame of kpeek's (the function containing the call, like %pB and
    /proc/PID/stack) against the console's. arm64 6.1's dump_backtrace()
    prints return addresses with %pS: one right after a call to a noreturn
    function (panic()) shows as the next function +0x0. The same address is
    kpeek's "caller+SIZE/SIZE"."""
    if got == want:
        return True
    g, w = FRAME_PARTS_RE.match(got), FRAME_PARTS_RE.match(want)
    return bool(g and w and int(w.group(2), 16) == 0 and g.group(2) == g.group(3) and
                got.endswith("]") == want.endswith("]"))


def ck_panic_bt(console, arch="amd64"):
    """kpeek bt (the panicking task, from the panic CPU's registers in the
    dump) against the Call Trace the kernel printed in panic(): from panic()
    (vpanic() where panic() calls it, 6.13+) on, the same functions, and
    below it the same return addresses; an interrupt or exception frame
    on the way (a panic in an interrupt handler: the keyboard's sysrq on
    x86-64, a break and sysrq c on arm64's console UART) is the interrupted
    function's exact pc with the registers the console printed (x86-64). (The CPU stayed in panic()'s loop: above it kpeek sees the
    delay loop, the console the dump_stack() that printed it.)"""
    def start(frames):
        names = [f.split("+")[0] for f in frames]
        for i, n in enumerate(names):
            if n in ("vpanic", "panic"):
                return i
        return None

    # An OOM and a hung task print other traces first (the allocation's,
    # the blocked task's): panic()'s follows its "Kernel panic" line.
    at = console.find("Kernel panic - not syncing")
    panic_part = console[at:] if at >= 0 else console

    def ck(res, c):
        rows, why = json_of(res, "stacks")
        if rows is None:
            return False, why
        want_regs = []
        want = console_trace(panic_part, want_regs)
        if start(want) is None:
            return False, "no Call Trace through panic() on the console:\n%s" % console[-3000:]
        want = want[start(want):]
        if len(rows) != 1 or "error" in rows[0]:
            return False, "expected one stack; output:\n%s" % res[1][-3000:]
        got = bt_names(rows[0])
        if start(got) is None:
            return False, "kpeek's stack has no panic():\n  kpeek %s\n  console %s" % (got, want)
        got = got[start(got):]
        same = len(got) == len(want) and got[0].split("+")[0] == want[0].split("+")[0] and \
            all(same_return(g, w) for g, w in zip(got[1:], want[1:]))
        # The frames entered by an interrupt or exception (the first frame's
        # registers are the CPU's, at the dump).
        got_regs = [f.get("regs") or {} for f in rows[0].get("frames", [])[1:] if f.get("regs")]
        bad = []
        # arm64's dump_backtrace() prints no registers of the exception
        # frames it crosses (x86-64's show_trace_log_lvl() does): there
        # the frames' names are the whole comparison.
        if len(got_regs) != len(want_regs) and not (arch == "arm64" and not want_regs):
            bad.append("%d exception frames, the console %d" % (len(got_regs), len(want_regs)))
        for i, (g, w) in enumerate(zip(got_regs, want_regs)):
            bad += ["exception frame %d: %s" % (i, b) for b in same_regs(g, w)]
        if same and rows[0].get("complete") and not bad:
            return True, ""
        return False, "%skpeek %s (%s)\n  console %s" % (
            "".join(b + "\n" for b in bad), got, rows[0].get("end"), want)
    return ck


def ck_bt_cpus(res, c):
    """kpeek bt -a on the panicked guest's dump: one stack per CPU, each
    followed to its end."""
    rows, why = json_of(res, "stacks")
    if rows is None:
        return False, why
    bad = ["CPU %s: %s" % (r.get("cpu"), r.get("error") or r.get("end")) for r in rows
           if "error" in r or not r.get("complete") or not r.get("frames")]
    n = T.cpu_count(c.run.files) if c and c.run.files else None
    if not bad and rows and (n is None or len(rows) == n):
        return True, ""
    return False, "%d stacks for %s CPUs; %s; output:\n%s" % (len(rows), n, "; ".join(bad), res[1][-2000:])


def ck_oops_bt(console):
    """kpeek bt on a real kdump of an oops: the crash notes hold the oops'
    registers, so kpeek's stack starts at the faulting instruction (the
    console's "RIP: 0010:..." line) and goes on with exactly the console's
    Call Trace, which the kernel unwound from the same registers."""
    def ck(res, c):
        rows, why = json_of(res, "stacks")
        if rows is None:
            return False, why
        rip = console_oops(console)[0]
        want = console_trace(console)
        if rip is None or not want:
            return False, "no RIP line or no Call Trace on the console:\n%s" % console[-3000:]
        want = [rip] + want
        if len(rows) != 1 or "error" in rows[0]:
            return False, "expected one stack; output:\n%s" % res[1][-3000:]
        got = bt_names(rows[0])
        if got == want and rows[0].get("complete"):
            return True, ""
        return False, "kpeek %s (%s)\n  console %s" % (got, rows[0].get("end"), want)
    return ck


def ck_module_frames(ck, console, module):
    """ck, on a console whose Call Trace has frames of module (at least the
    three nested functions): the oracle must cover module frames."""
    def wrapped(res, c):
        frames = [f for f in console_trace(console) if f.endswith(" [%s]" % module)]
        if len(frames) < 3:
            return False, "the console's Call Trace has %d frames of %s (expected its 3 nested functions):\n%s" % (
                len(frames), module, console[-3000:])
        return ck(res, c)
    return wrapped
