# SPDX-License-Identifier: MIT
# Address forensics (issue 29) against what the guest said of itself:
#   addr-whatis-symbols  whatis of global text and data symbols of the
#                        guest's /proc/kallsyms (boot.kallsyms), each at its
#                        address + 1: the symbol named, offset 1, in a text
#                        or data section as its type letter says;
#   addr-whatis-iomem    whatis -p of an address inside each top-level
#                        "System RAM" and "Reserved" entry of the guest's
#                        /proc/iomem (boot.iomem): that entry named.
# Both read what the guest printed at boot, which no dump changes; the
# other checks: addr_tasks.py, addr_objects.py, addr_slab.py. The
# addresses are chosen here from the guest's files (never from kpeek). The
# virtual addresses of every whatis check of a source go to one kpeek run,
# each check reading its own answers (merge_whatis()). Every dump kind
# (its own format reader under the same walks) runs the whatis checks and
# slab and page, and but the -d 31 ones search -u; search -k runs on the
# ELF and kdump dumps; live, what tests/vm/init addr_live_commands runs
# (LIVE). A -d 31 dump of a kernel makedumpfile does not know runs them
# too: whatis must give right facts where it could not do a walk
# (tolerate_excluded()).
import json
import re

import truth as T

from .addr_objects import EXCLUDED, num, object_checks, readings, whatis_answers
from .addr_slab import slab_checks
from .addr_tasks import task_checks
from .results import limited, skipped

# The sources that also search all kernel memory (search -k); the others
# run the walk of one cache, and but the -d 31 ones those of one process.
WALK_SOURCES = ("elf", "kdump")
USER_WALKS = ("addr-search-user", "addr-page-envpage")
WHATIS = ["whatis", "--json"]
PER_KIND = 4
TEXT_TYPES = "T"
DATA_TYPES = "DBR"
# Global symbols only: a local one's letter follows its section's flags
# (7.2's static trace_event_type_funcs_* are 't' in .data).
SECTION_OF = {"T": "text", "D": "data", "B": "bss", "R": "rodata"}
IOMEM_KINDS = ("System RAM", "Reserved")
IOMEM_RE = re.compile(r"^(\s*)([0-9a-f]+)-([0-9a-f]+) : (.*)$")


def symbol_picks(run):
    """(name, address, type) of PER_KIND text and PER_KIND data symbols of
    the core kernel, each alone at its address with another symbol at
    least 2 bytes after it (address + 1 is inside it), spread over the
    table; data symbols only where kallsyms has them."""
    core = sorted((a, t, n) for a, t, n, m in run.kallsyms if m is None and a)
    # Per-CPU variables are the template of every CPU's area (zero-based
    # until 6.14 on x86-64, in the init data since): not compared here.
    pcpu = {n: a for a, t, n in core if n in ("__per_cpu_start", "__per_cpu_end")}
    lo, hi = pcpu.get("__per_cpu_start", 0), pcpu.get("__per_cpu_end", 0)
    alone = []
    for i, (a, t, n) in enumerate(core):
        if lo <= a < hi or (lo == 0 and a < 1 << 32):
            continue
        if i and core[i - 1][0] == a:
            continue
        if i + 1 < len(core) and core[i + 1][0] < a + 2:
            continue
        if n.startswith(("__", "_", ".")) or "." in n:
            continue
        alone.append((n, a, t))
    picks = []
    for types in (TEXT_TYPES, DATA_TYPES):
        cands = [s for s in alone if s[2] in types]
        step = max(1, len(cands) // (PER_KIND + 1))
        picks += cands[step::step][:PER_KIND]
    return picks


def iomem_picks(files):
    """(name, physical address) of the middle of each top-level System RAM
    and Reserved entry of /proc/iomem, at most 8."""
    out = []
    for line in T.text(files, "boot.iomem").splitlines():
        m = IOMEM_RE.match(line)
        if m and not m.group(1) and m.group(4) in IOMEM_KINDS:
            lo, hi = int(m.group(2), 16), int(m.group(3), 16)
            out.append((m.group(4), lo + (hi - lo) // 2))
    return out[:8]


def ck_symbols(picks):
    def ck(res, c):
        addrs, why = whatis_answers(res, picks)
        if addrs is None:
            return False, why
        problems = []
        for (name, a, t), got in zip(picks, addrs):
            syms = [f for f in got["facts"] if f["kind"] == "symbol"]
            want = SECTION_OF.get(t)
            if not syms:
                problems.append("%s+1 (0x%x, %s): no symbol fact: %s" % (name, a + 1, t, got))
            elif (syms[0]["symbol"], syms[0]["offset"]) != (name, 1):
                problems.append("%s+1: named %s+%s" % (name, syms[0]["symbol"], syms[0]["offset"]))
            elif syms[0]["section"] != want and not (want == "data" and syms[0]["section"] in ("bss", "rodata")):
                problems.append("%s+1 (type %s): section %s" % (name, t, syms[0]["section"]))
        if problems:
            return False, "\n".join(problems)
        return True, "%d symbols named (%s)" % (len(picks), ", ".join(p[0] for p in picks))
    return ck


def ck_iomem(picks):
    def ck(res, c):
        addrs, why = whatis_answers(res, picks)
        if addrs is None:
            return False, why
        problems, notes = [], set()
        for (name, pa), got in zip(picks, addrs):
            phys = [f for f in got["facts"] if f["kind"] == "physical"]
            mem = phys[0].get("memory") if phys else None
            if mem is None and phys and "CONFIG_KALLSYMS_ALL" in (phys[0].get("note") or ""):
                notes.add(phys[0]["note"])
            elif mem != name:
                problems.append("0x%x: /proc/iomem says %s, whatis %r" % (pa, name, mem))
        if problems:
            return False, "\n".join(problems)
        if notes:
            # Without CONFIG_KALLSYMS_ALL (6.1 arm64) iomem_resource has no
            # address: every answer must say so, none may name another entry.
            if len(notes) == 1 and c.run.no_data_symbols:
                return limited("iomem_resource is in no symbol table: %s" % notes.pop())
            return False, "whatis says %s" % "; ".join(sorted(notes))
        return True, "%d iomem entries named" % len(picks)
    return ck


def by_address(check, queries):
    """check over the answers of its own queries, taken by address from a
    whatis run of those and more (merged, or the guest's live run)."""
    def ck(res, c):
        rc, out, err = res
        if rc not in (0, 2):    # 2: whatis could not do every walk (tolerate_excluded())
            return check(res, c)
        try:
            doc = json.loads(out)
            got = {num(a["address"]): a for a in doc["addresses"]}
        except (ValueError, KeyError, TypeError):
            return check(res, c)
        missing = [q for q in queries if q not in got]
        if missing:
            return False, "whatis answered no query %s (of %d answers)" % (
                ", ".join("0x%x" % q for q in missing[:8]), len(got))
        doc["addresses"] = [got[q] for q in queries]
        return check((rc, json.dumps(doc), err), c)
    return ck


def merge_whatis(checks):
    """The whatis --json checks of one source as one run of every address,
    each check given its own answers; the other checks as they are."""
    merged, rest, addrs = [], [], []
    for name, args, ck in checks:
        if args[:2] == WHATIS and len(args) > 2 and all(a.startswith("0x") for a in args[2:]):
            merged.append((name, [int(a, 16) for a in args[2:]], ck))
            addrs += [a for a in args[2:] if a not in addrs]
        else:
            rest.append((name, args, ck))
    return [(name, WHATIS + addrs, by_address(ck, qs)) for name, qs, ck in merged] + rest


# Live (tests/vm/init addr_live_commands): the guest asks whatis of every
# candidate of its readings (addr-whatis), the checks take their picks'
# answers by address; slab, search -u and page of the environment's frames.
# search -k of all memory live too: the first guest of every kernel runs it
# (tests/vm/init kp_search_k; ~3 s of a TCG guest reading 512 MB through
# /proc/kcore on two CPUs).
LIVE = ("addr-whatis-percpu", "addr-whatis-stack", "addr-whatis-sockets", "addr-whatis-kmalloc",
        "addr-whatis-freed", "addr-whatis-vmalloc", "addr-slab-tcp", "addr-search-user", "addr-page-envpage",
        "addr-search-socket")


def live_checks(run):
    try:
        readings(run, "live")
    except T.TruthError as e:
        why = str(e)
        return [(n, ["info"], lambda res, c: (False, why)) for n in LIVE]
    out = task_checks(run, "live") + object_checks(run, "live") + slab_checks(run, "live")
    return merge_whatis([x for x in out if x[0] in LIVE])


# What whatis says on stderr of an address it could not check all of: the
# walks it could not do ("the task list: ...; the vmalloc areas: ...").
UNCHECKED_RE = re.compile(r"^kpeek: whatis \S+: incomplete: not checked: ")


def tolerate_excluded(check):
    """check, where a -d 31 dump of a kernel makedumpfile does not know
    (c.partial) left out pages the kernel uses. whatis then says, exit 2
    and a line an address, which walk a page it needed was excluded from
    (JSON: the answer's note): the check compares every answer, and takes
    as a skipped entry (addr_objects.Unchecked) only a fact missing or
    unknown where the note says its walk could not be done. Another
    command (slab, page) that stopped at an excluded page is a skip."""
    def ck(res, c):
        rc, out, err = res
        if not c.partial or rc != 2:
            return check(res, c)
        lines = err.strip().splitlines()
        if not lines or any(EXCLUDED not in x for x in lines):
            return check(res, c)
        if all(UNCHECKED_RE.match(x) for x in lines):
            return check((0, out, err), c)
        return skipped("kpeek says a page it needs was excluded: %s" % lines[0][:300])
    return ck


def addr_checks(run, source):
    """[(check name, kpeek args, check)] of one dump source."""
    if source == "live":
        return live_checks(run)
    out = []
    picks = symbol_picks(run) if run.files else []
    if picks:
        out.append(("addr-whatis-symbols", ["whatis", "--json"] + ["0x%x" % (a + 1) for _, a, _ in picks],
                    ck_symbols(picks)))
    else:
        out.append(("addr-whatis-symbols", ["whatis", "--json", "0"],
                    lambda res, c: (False, "no symbols to pick in the guest's /proc/kallsyms")))
    try:
        ip = iomem_picks(run.files)
    except T.TruthError as e:
        ip, why = [], str(e)
    else:
        why = "no System RAM or Reserved entry in the guest's /proc/iomem"
    if ip:
        out.append(("addr-whatis-iomem", ["whatis", "-p", "--json"] + ["0x%x" % pa for _, pa in ip],
                    ck_iomem(ip)))
    else:
        out.append(("addr-whatis-iomem", ["whatis", "-p", "--json", "0"], lambda res, c: (False, why)))
    out += task_checks(run, source) + object_checks(run, source) + slab_checks(run, source)
    if source not in WALK_SOURCES:
        # A -d 31 dump has no user pages: no environment to search (the
        # struct page of its frame is the kernel's: page runs).
        out = [x for x in out if x[0].startswith("addr-whatis-") or x[0] in ("addr-slab-tcp", "addr-page-envpage")
               or (x[0] in USER_WALKS and not source.startswith("kdump-d31"))]
    return merge_whatis([(name, args, tolerate_excluded(ck)) for name, args, ck in out])
