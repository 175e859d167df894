# SPDX-License-Identifier: MIT
# Per-CPU areas and task stacks (issue 29), against the guest's readings
# around each dump (and around the live runs):
#   addr-whatis-percpu  whatis -p of each CPU's crash notes
#                       (/sys/devices/system/cpu/cpuN/crash_notes: the
#                       physical address of CPU N's copy of an alloc_percpu()
#                       object, sys.TAG.crash_notes): CPU N's per-CPU area,
#                       past its static variables (the boot log's "percpu:
#                       Embedded ... sSTATIC ... uUNIT" line), in a unit of
#                       UNIT bytes;
#   addr-whatis-stack   whatis of every task stack of /proc/vmallocinfo
#                       (CONFIG_VMAP_STACK: areas made by the fork path) + 16:
#                       the stack of a thread /proc lists under that command
#                       (its first 15 bytes: /proc shows kernel threads' full
#                       names, and a worker's work item changes),
#                       starting at the area's start, its size without the
#                       guard page; no thread named twice, and every thread of
#                       both readings named. An area may have no task: the
#                       idle tasks of the other CPUs (on no task list) and the
#                       stacks kernel/fork.c keeps for reuse (NR_CACHED_STACKS,
#                       2 a CPU);
import re

import truth as T

from .addr_objects import EXCLUDED, PAGE, fact, num, readings, stable, text, vmalloc_areas, whatis_answers
from .results import limited, passed, skipped
from .tasks import same_name_modulo_work

PERCPU_LINE = re.compile(r"percpu: Embedded \d+ pages/cpu s(\d+) r\d+ d\d+ u(\d+)")
# The function /proc/vmallocinfo names as a stack area's caller: the fork
# path's first one not inlined (5.10 .. 7.2, x86-64 and arm64).
STACK_CALLERS = {"alloc_thread_stack_node", "dup_task_struct", "copy_process", "kernel_clone", "fork_idle"}
CACHED_STACKS = 2


def crash_notes(files, tag):
    """[(cpu, physical address)] of sys.TAG.crash_notes."""
    out = []
    for line in text(files, "sys.%s.crash_notes" % tag).splitlines():
        p = line.split()
        if len(p) == 2:
            out.append((int(p[0]), int(p[1], 16)))
    if not out:
        raise T.TruthError("sys.%s.crash_notes lists no CPU (no /sys/devices/system/cpu/cpu*/crash_notes)" % tag)
    return out


def percpu_sizes(files):
    """(static size, unit size) of the boot log's percpu line."""
    for name in ("truth.boot.dmesg", "boot.dmesg"):
        if name in files:
            m = PERCPU_LINE.search(text(files, name))
            if m:
                return int(m.group(1)), int(m.group(2))
    raise T.TruthError("the boot log has no \"percpu: Embedded\" line")


def ck_percpu(picks, sizes):
    static, unit = sizes

    def ck(res, c):
        got, why = whatis_answers(res, picks)
        if got is None:
            return False, why
        problems = []
        for (cpu, pa), a in zip(picks, got):
            f = fact(a, "percpu")
            if f is None:
                problems.append("0x%x (crash notes of CPU %d): no percpu fact: %s" % (pa, cpu, a.get("facts")))
            elif (f.get("cpu"), f.get("symbol"), f.get("size")) != (cpu, None, unit) or \
                    not static <= (f.get("offset") or 0) < unit:
                problems.append("0x%x: CPU %s %s+0x%x of a %s-byte unit; the guest: CPU %d, past %d static "
                                "bytes of %d" % (pa, f.get("cpu"), f.get("symbol"), f.get("offset") or 0,
                                                 f.get("size"), cpu, static, unit))
        if problems and c.run.no_data_symbols and not any(fact(a, "percpu") for a in got):
            # Without CONFIG_KALLSYMS_ALL (Debian 12 arm64) no symbol table
            # has __per_cpu_start: the areas' bounds are unknown (issue 36).
            return limited("no __per_cpu_start: no per-CPU area named (%d CPUs)" % len(picks))
        if problems:
            return False, "%d of %d differ:\n%s" % (len(problems), len(picks), "\n".join(problems))
        return True, "%d CPUs' crash notes in their per-CPU areas" % len(picks)
    return ck


def ck_stacks(picks, ncpus):
    def ck(res, c):
        got, why = whatis_answers(res, picks)
        if got is None:
            return False, why
        pre, post = c.pre["threads"], c.post["threads"]
        problems, named, unowned, unwalked = [], {}, 0, []
        for (start, end, caller), a in zip(picks, got):
            f = fact(a, "stack")
            note = a.get("note") or ""
            if f is None and c.partial and "the task list: " in note and EXCLUDED in note:
                # A -d 31 dump of a kernel makedumpfile does not know: the
                # walk stopped at an excluded page before this area's task.
                unwalked.append("stack area 0x%x: %s" % (start, note[note.index("the task list: "):][:200]))
                continue
            if f is None:
                unowned += 1
                continue
            t = f.get("task") or {}
            pid, comm = t.get("pid"), t.get("comm")
            th = pre.get(pid) or post.get(pid)
            if th is None and comm in c.transient:
                continue    # kpeek itself and its watchers (a snapshot, live)
            if num(f.get("stack")) != start or f.get("stack_size") != end - start - PAGE:
                problems.append("0x%x: stack 0x%x, %s bytes; /proc/vmallocinfo 0x%x-0x%x" % (
                    start + 16, num(f.get("stack")) or 0, f.get("stack_size"), start, end))
            elif th is None or not (same_name_modulo_work(comm or "", th.name[:15]) or
                                    same_name_modulo_work(comm or "", th.name)):
                problems.append("0x%x: stack of %s (%s), /proc: %s" % (start + 16, pid, comm,
                                                                     th.name if th else "no such thread"))
            elif pid in named:
                problems.append("0x%x and 0x%x: both the stack of %s" % (named[pid] + 16, start + 16, pid))
            named.setdefault(pid, start)
        missing = sorted(set(pre) & set(post) - set(named))
        if missing and not unwalked:
            problems.append("threads of both readings whose stack no area gave: %s" % missing[:20])
        if unowned > (CACHED_STACKS + 1) * ncpus:
            problems.append("%d stack areas of no task (at most %d: idle and cached stacks)" % (
                unowned, (CACHED_STACKS + 1) * ncpus))
        if problems:
            return False, "%d problems (%d areas):\n%s" % (len(problems), len(picks), "\n".join(problems[:30]))
        if unwalked and not named:
            return skipped("no area's task could be walked to: %s" % unwalked[0])
        if unwalked:
            return passed("%d stacks named, %d areas of no task" % (len(named), unowned),
                          unwalked + ["thread %d: its stack not named" % p for p in missing])
        return True, "%d stacks named, %d areas of no task" % (len(named), unowned)
    return ck


def stack_picks(run, source):
    out = [a for a in stable(run, source, vmalloc_areas) if a[2] in STACK_CALLERS]
    if not out:
        raise T.TruthError("no task stack among the areas of both readings of /proc/vmallocinfo")
    return out


def task_checks(run, source):
    """[(check name, kpeek args, check)] of one source."""
    out = []
    try:
        pre, post = readings(run, source)
        b = set(crash_notes(run.files, post))
        picks = [x for x in crash_notes(run.files, pre) if x in b]
        ck = ck_percpu(picks, percpu_sizes(run.files))
        out.append(("addr-whatis-percpu", ["whatis", "-p", "--json"] + ["0x%x" % pa for _, pa in picks], ck))
    except T.TruthError as e:
        why = str(e)
        out.append(("addr-whatis-percpu", ["info"], lambda res, c: (False, why)))
    try:
        sp = stack_picks(run, source)
        ncpus = len(crash_notes(run.files, readings(run, source)[0]))
        out.append(("addr-whatis-stack", ["whatis", "--json"] + ["0x%x" % (a[0] + 16) for a in sp],
                    ck_stacks(sp, ncpus)))
    except T.TruthError as e:
        why2 = str(e)
        out.append(("addr-whatis-stack", ["info"], lambda res, c: (False, why2)))
    return out
