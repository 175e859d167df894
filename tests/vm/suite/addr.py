# SPDX-License-Identifier: MIT
# Address forensics (issue 29) against what the guest said of itself, on
# the ELF and kdump-compressed dumps of every guest:
#   addr-whatis-symbols  whatis of global text and data symbols of the
#                        guest's /proc/kallsyms (boot.kallsyms), each at its
#                        address + 1: the symbol named, offset 1, in a text
#                        or data section as its type letter says;
#   addr-whatis-iomem    whatis -p of an address inside each top-level
#                        "System RAM" and "Reserved" entry of the guest's
#                        /proc/iomem (boot.iomem): that entry named.
# Both read what the guest printed at boot, which no dump changes. The
# addresses are chosen here from the guest's files (never from kpeek), a
# few kpeek runs per source: one whatis with every address.
import re

import truth as T

from .addr_objects import object_checks, whatis_json
from .addr_slab import slab_checks
from .results import limited

SOURCES = ("elf", "kdump")
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
        addrs, why = whatis_json(res)
        if addrs is None:
            return False, why
        if len(addrs) != len(picks):
            return False, "%d answers for %d addresses" % (len(addrs), len(picks))
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
        addrs, why = whatis_json(res)
        if addrs is None:
            return False, why
        if len(addrs) != len(picks):
            return False, "%d answers for %d addresses" % (len(addrs), len(picks))
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


def addr_checks(run, source):
    """[(check name, kpeek args, check)] of one source."""
    if source not in SOURCES:
        return []
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
    return out + object_checks(run, source) + slab_checks(run, source)
