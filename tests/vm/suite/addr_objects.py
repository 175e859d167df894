# SPDX-License-Identifier: MIT
# Address forensics on objects the guest names itself (issue 29), on the
# ELF and kdump-compressed dumps of every guest, each against the truth
# readings taken just before and after the dump (both must agree: a thing
# that moved between them is not compared):
#   addr-whatis-modules  whatis of each module's first function + 1 (at or
#                        above its /proc/modules base, in /proc/kallsyms):
#                        the module and the function named, offset 1;
#   addr-whatis-vmalloc  whatis of areas of /proc/vmallocinfo + 16: the
#                        area's start, end and caller;
#   addr-search-user     search -u of a variable of kp_args' environment:
#                        found at env_start (/proc/PID/stat field 50) plus
#                        its offset in /proc/PID/environ;
#   addr-search-kernel   search -k of the same bytes: found at the direct-map
#                        alias of the page frame /proc/PID/pagemap gives;
#   addr-page-envpage    page of that frame: the flags /proc/kpageflags
#                        gives (uptodate, lru, swapbacked, anon, mapped,
#                        slab, buddy, compound head and tail).
# Slab objects (sockets): addr_slab.py.
import json

import truth as T

from .common import ran
from .process_truth import Workload
from .results import limited, passed, skipped

PER_KIND = 8
PAGE = 4096                        # the suite's kernels' page size (Debian x86-64, arm64)
# A kernel address has its top bit set (x86-64 4- and 5-level, arm64); a
# hashed %pK is a 32-bit number.
KERNEL_ADDR = 1 << 63
# /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h) and what
# kpeek's page says for each.
KPF = {3: "uptodate", 5: "lru", 14: "swapbacked", 12: "anon", 11: "mapped", 7: "slab", 10: "buddy",
       15: "compound head", 16: "compound tail"}


def text(files, name):
    if name not in files:
        raise T.TruthError("the guest wrote no %s" % name)
    return files[name].decode("utf-8", "replace")


# The readings around the live whatis, slab, search and page runs
# (tests/vm/init addr_live_commands).
LIVE_READINGS = ("live-addr", "live-addr-after")
# The variable of kp_args' environment the live search looks for (kp_proc.c).
LIVE_MARKER = "PATH=/bin:/usr/bin"


def readings(run, source):
    if source == "live":
        if "sys.%s.crash_notes" % LIVE_READINGS[0] not in run.files:
            raise T.TruthError("the guest wrote no sys.%s.* readings" % LIVE_READINGS[0])
        return LIVE_READINGS
    if source not in run.dumps:
        raise T.TruthError("no %s dump of %s" % (source, run.name))
    _, pre, post = run.dumps[source]
    return pre, post


def stable(run, source, parse):
    """What parse(files, tag) gives for both readings around the dump, the
    items of the first that the second has too."""
    pre, post = readings(run, source)
    a, b = parse(run.files, pre), set(parse(run.files, post))
    return [x for x in a if x in b]


def spread(items, n=PER_KIND):
    step = max(1, len(items) // n)
    return items[::step][:n]


def whatis_json(res):
    rc, out, err = res
    if rc != 0:
        return None, ran(res)
    try:
        return json.loads(out)["addresses"], ""
    except (ValueError, KeyError) as e:
        return None, "not whatis JSON (%s): %s" % (e, out[:300])


def whatis_answers(res, picks):
    """The answers of a whatis --json run, one per pick, or (None, why)."""
    addrs, why = whatis_json(res)
    if addrs is not None and len(addrs) != len(picks):
        return None, "%d answers for %d addresses" % (len(addrs), len(picks))
    return addrs, why


def fact(got, kind):
    return next((f for f in got.get("facts", []) if f.get("kind") == kind), None)


def num(v):
    return int(v, 16) if isinstance(v, str) else v


# What kpeek says of a page a -d 31 dump of a kernel makedumpfile does not
# know left out, though the kernel uses it.
EXCLUDED = "excluded from the dump"


class Unchecked(str):
    """one()'s verdict on an answer that could not be compared: kpeek said
    the fact is unknown because a page it needs was excluded from the dump
    (a skipped entry, never a pass)."""


def slab_unknown(got):
    """Unchecked if whatis's slab fact says allocated or free is unknown
    for a page excluded from the dump, or there is no slab fact and the
    answer says the slab could not be looked at for one; else None."""
    f = fact(got, "slab")
    at = num(got.get("address")) or 0
    if f and (f.get("slab") or {}).get("allocated") is None and EXCLUDED in (f.get("note") or ""):
        return Unchecked("0x%x: allocated or free unknown: %s" % (at, f["note"][:200]))
    note = got.get("note") or ""
    if not f and "the slab: " in note and EXCLUDED in note:
        return Unchecked("0x%x: the slab could not be looked at: %s" % (at, note[note.index("the slab: "):][:200]))
    return None


def answer(res, picks, one):
    """Compares whatis's answers with picks, one(pick, answer) -> problem,
    Unchecked or None per address."""
    addrs, why = whatis_answers(res, picks)
    if addrs is None:
        return False, why
    verdicts = [v for v in (one(pick, got) for pick, got in zip(picks, addrs)) if v]
    problems = [v for v in verdicts if not isinstance(v, Unchecked)]
    unchecked = [v for v in verdicts if isinstance(v, Unchecked)]
    if problems:
        return False, "%d of %d differ:\n%s" % (len(problems), len(picks), "\n".join(problems))
    if unchecked and len(unchecked) == len(picks):
        return skipped("no answer could be compared: %s" % unchecked[0])
    if unchecked:
        return passed("%d addresses" % (len(picks) - len(unchecked)), unchecked)
    return True, "%d addresses" % len(picks)


# ---------------------------------------------------------------- modules

def module_picks(run, source):
    def parse(files, tag):
        return [(m["name"], m["base"]) for m in T.modules(files, "truth.%s.modules" % tag)
                if m["state"] == "Live" and m["base"]]
    picks = spread(stable(run, source, parse), 6)
    pre, _ = readings(run, source)
    syms = T.kallsyms(run.files, "truth.%s.modsyms" % pre)
    out = []
    for name, base in picks:
        # The first function at or above the base, + 1.
        # (Not arm64's mapping symbols, $x and $d: no lookup returns them.)
        text = sorted(a for a, t, n, m in syms if m == name and a >= base and t in "tT"
                      and not n.startswith("$"))
        if not text:
            continue
        q = text[0] + 1
        out.append((name, q, text[0], {n for a, t, n, m in syms if m == name and a == text[0]
                                       and not n.startswith("$")}))
    return out


# The callers /proc/vmallocinfo names for module memory (module_alloc()
# until 6.9, execmem_alloc() since).
MODULE_ALLOCATORS = ("load_module", "module_alloc", "move_module", "execmem_alloc")


def ck_modules(picks):
    def one(pick, got):
        name, q, top, names = pick
        f = fact(got, "module")
        if not f or f.get("module") != name:
            return "0x%x (%s's first function + 1): not in module %s: %s" % (q, name, name, got.get("facts"))
        if top is not None and (f.get("symbol") not in names or f.get("offset") != q - top):
            return "0x%x: %s+%s, /proc/kallsyms %s+%d" % (q, f.get("symbol"), f.get("offset"),
                                                           "/".join(sorted(names)), q - top)
        return None

    def module_memory(got):
        v = fact(got, "vmalloc") or {}
        return not fact(got, "module") and (v.get("caller_symbol") or "").startswith(MODULE_ALLOCATORS)

    def ck(res, c):
        addrs, _ = whatis_json(res)
        # Without CONFIG_KALLSYMS_ALL the modules list head is in no
        # symbol table: the precise answer is the module memory's vmalloc
        # area, allocated by the module loader, for every address.
        if addrs and len(addrs) == len(picks) and c.run.no_data_symbols and all(map(module_memory, addrs)):
            return limited("every address is module memory (a vmalloc area of %s), no module named" %
                           fact(addrs[0], "vmalloc").get("caller_symbol"))
        return answer(res, picks, one)
    return ck


# ---------------------------------------------------------------- vmalloc

def vmalloc_areas(files, tag):
    """[(start, end, caller function)] of /proc/vmallocinfo's areas with a
    caller."""
    out = []
    for line in text(files, "sys.%s.vmallocinfo" % tag).splitlines():
        p = line.split()
        if len(p) < 3 or "-" not in p[0] or "+" not in p[2]:
            continue
        lo, _, hi = p[0].partition("-")
        start, end = int(lo, 16), int(hi, 16)
        if start >= KERNEL_ADDR:
            out.append((start, end, p[2].partition("+")[0]))
    if not out:
        raise T.TruthError("sys.%s.vmallocinfo: no area with a real address and a caller" % tag)
    return out


def ck_vmalloc(picks):
    def one(pick, got):
        start, end, caller = pick
        note = got.get("note") or ""
        if not fact(got, "vmalloc") and "the vmalloc areas: " in note and EXCLUDED in note:
            return Unchecked("0x%x + 16: %s" % (start, note[note.index("the vmalloc areas: "):][:200]))
        f = fact(got, "vmalloc") or {}
        s = num(f.get("start"))
        have = (s, s + f["size"] if s is not None and isinstance(f.get("size"), int) else None,
                (f.get("caller_symbol") or "").partition("+")[0])
        if have != (start, end, caller):
            return "0x%x + 16: whatis %s, /proc/vmallocinfo 0x%x-0x%x %s" % (start, f or got.get("facts"),
                                                                           start, end, caller)
        return None
    return lambda res, c: answer(res, picks, one)


# ---------------------------------------------------------------- search and page

def env_pages(files, tag, pid):
    """{page address: (pfn, kpageflags)} of proc.TAG.PID.envpages, the
    pages present."""
    out = {}
    for line in text(files, "proc.%s.%d.envpages" % (tag, pid)).splitlines():
        p = line.split()
        if len(p) == 3:
            out[int(p[0], 16)] = (int(p[1], 16), int(p[2], 16))
    return out


def marker(run, source):
    """(pid, string, user address, page address, pfn, kpageflags) of a
    variable of kp_args' environment: printable, found once in its
    /proc/PID/environ, within one page that both readings saw at the same
    frame with the same flags (live: the one the guest searched); or a
    TruthError."""
    w = Workload.of(run)
    if w.why:
        raise T.TruthError(w.why)
    pid = w.roles["args"]
    pre, post = readings(run, source)
    env = run.files.get("proc.%s.%d.environ" % (pre, pid))
    if env is None:
        raise T.TruthError("the guest wrote no proc.%s.%d.environ" % (pre, pid))
    a, b = env_pages(run.files, pre, pid), env_pages(run.files, post, pid)
    page = PAGE
    cands = []
    off = 0
    for var in env.split(b"\0"):
        addr = w.env_start + off
        off += len(var) + 1
        first = addr & ~(page - 1)
        if (not 12 <= len(var) <= 64 or not all(0x21 <= ch < 0x7f for ch in var) or env.count(var) != 1
                or (addr + len(var) - 1) & ~(page - 1) != first or first not in a or a[first] != b.get(first)
                or (source == "live" and var.decode() != LIVE_MARKER)):
            continue
        cands.append((pid, var.decode(), addr, first) + a[first])
    if not cands:
        raise T.TruthError("no variable of pid %d's environment is printable, unique and on one stable "
                           "page (proc.%s.%d.envpages)" % (pid, pre, pid))
    return cands[len(cands) // 2]


def search_json(res):
    """The hits of a search --json run (each {"address", "what", ...}), or
    (None, why)."""
    rc, out, err = res
    if rc != 0:
        return None, ran(res)
    try:
        hits = json.loads(out)["hits"]
        return hits, "" if all("address" in h for h in hits) else "a hit without an address: %s" % out[:300]
    except (ValueError, KeyError, TypeError) as e:
        return None, "not search JSON (%s): %s" % (e, out[:300])


def search_hits(res):
    hits, why = search_json(res)
    return ([num(h["address"]) for h in hits], "") if hits is not None and not why else (None, why)


def ck_search(m, where, what):
    def ck(res, c):
        hits, why = search_hits(res)
        if hits is None:
            return False, why
        if where not in hits:
            return False, "%r (pid %d's environment) not found at 0x%x (%s); hits: %s" % (
                m[1], m[0], where, what, ", ".join("0x%x" % h for h in hits[:20]))
        return True, "found at 0x%x (%s) among %d hits" % (where, what, len(hits))
    return ck


def page_says(p):
    """The KPF names of kpeek's page JSON object p."""
    names = set(p.get("flag_names") or [])
    tail = bool(p.get("tail"))
    has = {"uptodate": "uptodate" in names, "lru": "lru" in names, "swapbacked": "swapbacked" in names,
           "anon": p.get("mapping_kind") == "anon", "mapped": (p.get("mapcount") or 0) > 0,
           "slab": p.get("type") == "slab", "buddy": p.get("type") == "buddy",
           "compound head": bool(p.get("compound")) and not tail, "compound tail": tail}
    return {n for n, v in has.items() if v}


def ck_page(m):
    pfn, flags = m[4], m[5]
    want = {n for bit, n in KPF.items() if flags >> bit & 1}

    def ck(res, c):
        rc, out, err = res
        try:
            pages = json.loads(out)["pages"] if rc == 0 else None
        except (ValueError, KeyError):
            pages = None
        if not pages:
            return False, "not page JSON: %s" % ran(res)
        # Live: the guest asked for every frame of the environment.
        mine = [p for p in pages if num(p.get("pfn")) == pfn]
        if not mine:
            return False, "no answer for pfn 0x%x among %d pages" % (pfn, len(pages))
        got = page_says(mine[0])
        if got != want:
            return False, "pfn 0x%x: kpeek %s, /proc/kpageflags 0x%x: %s" % (pfn, sorted(got), flags,
                                                                            sorted(want))
        return True, "pfn 0x%x: %s" % (pfn, ", ".join(sorted(want)))
    return ck


def search_page_checks(run, source):
    try:
        m = marker(run, source)
    except T.TruthError as e:
        why = str(e)
        return [(n, ["info"], lambda res, c: (False, why))
                for n in ("addr-search-user", "addr-search-kernel", "addr-page-envpage")]
    pid, s, addr, first, pfn, _ = m
    out = [("addr-search-user", ["search", "-u", str(pid), "--json", "-s", s], ck_search(m, addr, "user"))]
    if run.direct:
        alias = (pfn * PAGE + addr - first) + run.direct[0] - run.direct[1]
        out.append(("addr-search-kernel", ["search", "-k", "--json", "-s", s],
                    ck_search(m, alias, "direct map of pfn 0x%x" % pfn)))
    else:
        out.append(("addr-search-kernel", ["info"], lambda res, c: (False, "no direct-map address known")))
    out.append(("addr-page-envpage", ["page", "--json", "0x%x" % pfn], ck_page(m)))
    return out


def object_checks(run, source):
    """[(check name, kpeek args, check)] of one dump source."""
    out = []
    for name, pick, args, check in (
            ("addr-whatis-modules", module_picks, lambda p: ["0x%x" % x[1] for x in p], ck_modules),
            ("addr-whatis-vmalloc", lambda r, s: spread(stable(r, s, vmalloc_areas)),
             lambda p: ["0x%x" % (x[0] + 16) for x in p], ck_vmalloc)):
        try:
            picks = pick(run, source)
        except T.TruthError as e:
            picks, why = [], str(e)
        else:
            why = "nothing to pick in the guest's readings"
        if picks:
            out.append((name, ["whatis", "--json"] + args(picks), check(picks)))
        else:
            out.append((name, ["info"], lambda res, c, why=why: (False, why)))
    return out + search_page_checks(run, source)
