# SPDX-License-Identifier: MIT
# Checks of symbols and values: info, sym, print, vtop, rd, watch, diff,
# against /proc/kallsyms, /proc/iomem and the stamps around each source.
import json
import re

import truth as T

from .common import INITIAL_JIFFIES, notes, numbers, print_int, print_value, ran
from .results import limited


SECTION_LETTERS = (("R", "__start_rodata", "__end_rodata"), ("D", "_sdata", "_edata"),
                   ("B", "__bss_start", "__bss_stop"))


def section_typed(core):
    """/proc/kallsyms' core symbols with the type letter of the section each
    lies in where kallsyms says 'T' or 't' in rodata, data or bss (7.x
    x86-64 letters some 20,000 variables such as panic_cpu 'T'; issue 33
    asks for their section's letter), lower case for 't', a section's first
    address left alone (the end marker of the section before, 6.12's
    _etext, sits there): the bounds from the guest's own markers."""
    at = {}
    for a, t, n in core:
        at.setdefault(n, a)
    ranges = [(L, at[s], at[e]) for L, s, e in SECTION_LETTERS if s in at and e in at and at[s] < at[e]]

    def letter(a, t):
        if t not in "Tt":
            return t
        for L, lo, hi in ranges:
            if lo < a < hi:
                return L if t == "T" else L.lower()
        return t
    return [(a, letter(a, t), n) for a, t, n in core]


def kallsyms_core(run):
    return section_typed([(a, t, n) for a, t, n, m in run.kallsyms if m is None])


def ck_sym_list(vmcoreinfo_extra):
    """kpeek sym -l lists every core-kernel symbol of /proc/kallsyms
    (address, type, name; the type of its section where kallsyms letters a
    variable 'T': section_typed), nothing missing, nothing changed; beyond them
    only symbols of other sources: VMCOREINFO's SYMBOL()s (type '?') and
    module symbols: on a dump exactly the module lines of /proc/kallsyms
    when it was taken (address, type, name, module), live those
    /proc/kallsyms itself gives."""
    def ck(res, c):
        rc, out, err = res
        if rc != 0:
            return False, ran(res)
        want = sorted(kallsyms_core(c.run))
        got, extra, bad, mods, recovered = [], [], [], [], []
        for line in out.split("\n"):
            if not line:
                continue
            m = T.KALLSYMS_RE.match(line)
            if not m:
                bad.append(line)
                continue
            a, t, n, mod = int(m.group(1), 16), m.group(2), m.group(3), m.group(4)
            if c.run.no_data_symbols and mod is None and t in "dDbBrR" and n not in c.run.sym:
                # A variable kpeek recovered (__ksymtab, BTF's per-CPU
                # section, the code that uses it: src/core/ksymtab.c,
                # derive*.c) that /proc/kallsyms does not list; the checks
                # that read it test it.
                recovered.append(n)
                continue
            if mod is not None:
                # kpeek's text output escapes control bytes (\xNN); module
                # names of recent compilers have some (".L14472\x021").
                n = re.sub(r"\\x([0-9a-f]{2})", lambda x: chr(int(x.group(1), 16)), n)
                mods.append((a, t, n, mod))
                continue
            if t == "?":
                if n not in vmcoreinfo_extra(c):
                    extra.append(line)
                continue
            got.append((a, t, n))
        got.sort()
        mod_problem = ""
        limit = ""
        if not c.live:
            # Between the truth readings around the dump no module comes
            # or goes: both readings list the same symbols.
            mw = set(c.pre["modsyms"])
            mg = set(mods)
            if c.run.no_data_symbols and not mg:
                limit = "module symbols need the modules list head (no CONFIG_KALLSYMS_ALL)"
            elif mg != mw or not mw:
                fmt4 = lambda x: "%016x %s %s [%s]" % x
                mod_problem = "module symbols: %d of /proc/kallsyms missing %s; %d not in it %s" % (
                    len(mw - mg), [fmt4(x) for x in sorted(mw - mg)[:5]],
                    len(mg - mw), [fmt4(x) for x in sorted(mg - mw)[:5]])
        if recovered:
            limit = "; ".join(x for x in (limit, "%d variables recovered that /proc/kallsyms does not list "
                                          "(no CONFIG_KALLSYMS_ALL)" % len(recovered)) if x)
        if not bad and not extra and got == want and not mod_problem:
            return limited(limit) if limit else (True, "")
        gs, ws = set(got), set(want)
        fmt = lambda x: "%016x %s %s" % x
        return False, ("%d lines not in /proc/kallsyms format %s; %d unexpected extra %s; "
                       "%d symbols of /proc/kallsyms missing %s; %d not in it %s; %s" % (
                           len(bad), bad[:3], len(extra), extra[:3],
                           len(ws - gs), [fmt(x) for x in sorted(ws - gs)[:5]],
                           len(gs - ws), [fmt(x) for x in sorted(gs - ws)[:5]], mod_problem))
    return ck


def module_function(run, tag):
    """A function of a loaded module with the address the guest gives it
    in the readings before the dump (truth TAG): qemu_fw_cfg's probe
    routine where it is loaded, else the first module function."""
    try:
        syms = T.kallsyms(run.files, "truth.%s.modsyms" % tag)
    except T.TruthError:
        return None
    # A name given once: arm64 modules have many "$x" mapping symbols.
    count = {}
    for s in syms:
        count[s[2]] = count.get(s[2], 0) + 1
    # ADDR+8 must still be inside the function: the next symbol of its
    # module is further on (7.2-arm64's ts_kmp has 8-byte functions).
    addrs = sorted({(s[3], s[0]) for s in syms})
    def room(s):
        later = [a for m, a in addrs if m == s[3] and a > s[0]]
        return not later or min(later) > s[0] + 8
    funcs = [s for s in syms if s[1] in "tT" and count[s[2]] == 1 and s[2][0] not in "$." and
             s[2] not in run.sym and room(s)]  # the core kernel's symbol wins by name
    for s in funcs:
        if s[2] == "fw_cfg_sysfs_probe":
            return s
    return funcs[0] if funcs else None


def ck_sym_module(want):
    """sym NAME and sym ADDR+8 of a module function: its address and
    [module], as /proc/kallsyms has them."""
    def ck(res, c):
        rc, out, err = res
        if want is None:
            return False, "the guest lists no module function"
        a, t, n, mod = want
        line = "%016x" % a
        if rc == 0 and out.count(line) >= 1 and out.count("[%s]" % mod) >= 2 and \
                re.search(r"\b%s\+0x8\b" % re.escape(n), out):
            return True, ""
        return False, "expected %s %s %s [%s] and %s+0x8 [%s]: %s; output:\n%s" % (
            line, t, n, mod, n, mod, ran(res), out)
    return ck


def ck_sym(name):
    def ck(res, c):
        rc, out, err = res
        want = c.run.sym.get(name)
        if want is None and c.run.no_data_symbols and rc == 0:
            # Recovered from the kernel's __ksymtab or found by its shape:
            # /proc/kallsyms has no address to compare, the checks that
            # read the variable (ps, loadavg, print-jiffies) check it.
            # sym says how it found it.
            if not re.search(r"\b%s.*, recovered from \S" % re.escape(name), out):
                return False, "%s found, but sym does not say how it was recovered: %s" % (name, out)
            return limited("%s recovered, not in /proc/kallsyms" % name)
        if want is None:
            return False, "/proc/kallsyms has no %s" % name
        if rc == 0 and want in numbers(out):
            return True, ""
        return False, "expected address %016x (/proc/kallsyms), %s; output:\n%s" % (want, ran(res), out)
    return ck


def ck_info_levels(res, c):
    rc, out, err = res
    m = re.search(r"(?i)paging[ _-]?levels\W*([45])\b", out) or \
        re.search(r"(?i)\b([45])-level", out)
    got = int(m.group(1)) if m else None
    if rc == 0 and got == c.run.levels:
        return True, ""
    return False, "expected paging levels %d, got %s (%s)\n%s" % (c.run.levels, got, ran(res), out)


def ck_info_value(key, attr):
    """kpeek info's KEY line shows the value the rig computed itself."""
    def ck(res, c):
        rc, out, err = res
        want = getattr(c.run, attr)
        if want is None:
            return False, "no ground truth for %s (needs the ELF dump's VMCOREINFO)" % key
        lines = [x for x in out.split("\n") if key in x]
        got = numbers(lines[0].split(key, 1)[1]) if lines else []
        if rc == 0 and want in got:
            return True, ""
        return False, "expected %s 0x%x, got %s (%s)\n%s" % (key, want, lines[:1], ran(res), out)
    return ck


def source_compression(source):
    for comp in ("lzo", "snappy", "zstd"):
        if source.endswith("-" + comp):
            return comp
    return "zlib"


def ck_info_format(source):
    """kpeek info's source line names the format the dump was made in."""
    if source.startswith("kdump"):
        want = "kdump-compressed (%s%s)" % ("flattened, " if source.endswith("-flat") else "",
                                           source_compression(source))
    else:
        want = "ELF vmcore"

    def ck(res, c):
        rc, out, err = res
        line = next((x for x in out.split("\n") if x.startswith("source:")), None)
        got = line.split(":", 1)[1].strip() if line else None
        if rc == 0 and got is not None and (got == want or want == "ELF vmcore" and got.startswith(want)):
            return True, ""
        return False, "expected source: %s, got %s (%s)" % (want, got, ran(res))
    return ck


def ck_print_string(what, want_fn):
    def ck(res, c):
        rc, out, err = res
        want = want_fn(c)
        got = print_value(out)
        if rc == 0 and got == '"%s"' % want:
            return True, ""
        return False, 'expected "%s" (%s), got %s (%s)' % (want, what, got, ran(res))
    return ck


def ck_print_nr_cpu_ids(res, c):
    rc, out, err = res
    want = T.cpu_count(c.files)
    if rc == 0 and print_int(out) == want:
        return True, ""
    return False, "expected %d (/sys/devices/system/cpu/possible), got %s (%s)" % (
        want, print_value(out), ran(res))


def ck_print_jiffies(res, c):
    rc, out, err = res
    got = print_int(out)
    lo, hi = c.pre["stamp"].jiffies, c.post["stamp"].jiffies
    if rc == 0 and got is not None and INITIAL_JIFFIES <= got and lo <= got <= hi:
        return True, ""
    return False, "expected jiffies in [%d, %d] (/proc/schedstat before and after), got %s (%s)\n%s" % (
        lo, hi, got, ran(res), out)


def ck_vtop(kind):
    def ck(res, c):
        rc, out, err = res
        r = c.run
        if kind == "_text":
            want, what = r.kcode, "_text -> physical start of 'Kernel code' in /proc/iomem"
        else:
            want = r.direct[1] if r.direct else None
            what = "direct-map 0x%x -> page_offset_base + physical" % (r.direct[0] if r.direct else 0)
        if want is None:
            return False, "no ground truth for %s" % what
        lines = [x for x in out.split("\n") if re.search(r"(?i)phys|paddr", x)] or [out]
        if rc == 0 and want in numbers("\n".join(lines)):
            return True, ""
        return False, "expected physical 0x%x (%s), %s; output:\n%s" % (want, what, ran(res), out)
    return ck


def ck_rd_banner(res, c):
    """rd -a linux_banner is /proc/version (the kernel prints the banner
    there)."""
    rc, out, err = res
    want = T.text(c.files, "boot.version")
    try:
        got = json.loads(out)["string"] if rc == 0 else None
    except (ValueError, KeyError) as e:
        return False, "not rd --json -a output (%s): %s" % (e, out[:300])
    if got == want:
        return True, ""
    return False, "expected /proc/version %r, got %r (%s)" % (want, got, ran(res))


def ck_diff_jiffies(a, b):
    """kpeek diff jiffies DUMP_A DUMP_B: each side within its own dump's
    brackets, and exit 1 (they differ: time passed between the dumps)."""
    def ck(res, c):
        rc, out, err = res
        try:
            doc = json.loads(out)
            num = lambda v: int(v, 0) if isinstance(v, str) else int(v)
            va, vb = num(doc["a"]["value"]), num(doc["b"]["value"])
        except (ValueError, KeyError, TypeError) as e:
            return False, "not diff --json output (%s, %s): %s" % (e, ran(res), out[:300])
        ok = rc == 1 and doc.get("same") is False and \
            a[0].jiffies <= va <= a[1].jiffies and b[0].jiffies <= vb <= b[1].jiffies
        if ok:
            return True, ""
        return False, "expected exit 1, a in [%d, %d], b in [%d, %d]; got %s, %d, %d" % (
            a[0].jiffies, a[1].jiffies, b[0].jiffies, b[1].jiffies, ran(res), va, vb)
    return ck


def ck_watch(res, c, shift=0):
    """5 samples of jiffies >> shift, increasing, within the stamps taken
    around the command (so they were read, not repeated from the first)."""
    rc, out, err = res
    samples = []
    for line in out.split("\n"):
        last = line.split()[-1] if line.split() else ""
        if re.fullmatch(r"\d+|0x[0-9a-fA-F]+", last):
            samples.append(int(last, 0))
    inc = all(a <= b for a, b in zip(samples, samples[1:]))
    lo, hi = c.pre["stamp"].jiffies >> shift, c.post["stamp"].jiffies >> shift
    if rc == 0 and len(samples) == 5 and inc and samples[-1] > samples[0] and \
            lo <= samples[0] and samples[-1] <= hi:
        return True, ""
    return False, "expected exactly 5 increasing samples of jiffies >> %d within [%d, %d], got %s (%s)\n%s" % (
        shift, lo, hi, samples, ran(res), out)


# The variables every kernel's recovery must give from a kallsyms of
# functions only (recovered, or named by VMCOREINFO): exported ones
# (__ksymtab), those found in the code that uses them
# (src/core/derive_refs.c), the banner, and per-CPU ones (BTF) but where
# the kernel's BTF has no .data..percpu section.
RECOVER_ALWAYS = ["jiffies", "avenrun", "init_task", "init_uts_ns", "nr_cpu_ids", "modules",
                  "slab_caches", "taint_flags", "tainted_mask", "linux_banner", "module_kset",
                  "chained_action", "ftrace_ops_list", "ftrace_list_end", "prog_idr",
                  "__start___tracepoints_ptrs", "__stop___tracepoints_ptrs"]
RECOVER_PERCPU = ["runqueues", "__per_cpu_start"]
NO_PERCPU_BTF = {"5.10": "Debian 11's pahole put no per-CPU variables in BTF"}
# arm64's syscall table is passed by do_el0_svc(); x86-64 indexes it in
# do_syscall_64() only before the branch-history mitigation (6.9,
# backported to Debian's 6.1): not required there. nr_threads and
# kprobe_table are read by small functions whose x86-64 code (calls, imul,
# movabs) the x86-64 decoder does not follow: found on arm64 only. _text:
# x86-64's kallsyms of functions lists it (it is _stext's address).
RECOVER_ARM64 = ["sys_call_table", "nr_threads", "kprobe_table", "_text"]


def functions_only(kallsyms):
    """The lines of /proc/kallsyms a kernel built without CONFIG_KALLSYMS_ALL
    would list: core-kernel symbols inside [_stext, _etext) and
    [_sinittext, _einittext) (scripts/kallsyms.c's text ranges), or None
    without those markers."""
    at = {}
    for a, t, n, m in kallsyms:
        if m is None:
            at.setdefault(n, a)
    if not all(k in at for k in ("_stext", "_etext", "_sinittext", "_einittext")):
        return None
    ranges = ((at["_stext"], at["_etext"]), (at["_sinittext"], at["_einittext"]))
    return ["%016x %s %s" % (a, t, n) for a, t, n, m in kallsyms
            if m is None and any(lo <= a <= hi for lo, hi in ranges)]


def ck_sym_recovered(res, c):
    """kpeek given the guest's kallsyms cut to functions (as a kernel built
    without CONFIG_KALLSYMS_ALL lists them) recovers variables from the dump
    (issue 36): every symbol sym -l marks recovered (saying how) is at an
    address /proc/kallsyms gives that name, and RECOVER_* are all given
    (recovered, or VMCOREINFO's) at /proc/kallsyms' address."""
    rc, out, err = res
    try:
        doc = json.loads(out) if rc == 0 else None
        rows = doc["symbols"]
    except (ValueError, KeyError, TypeError) as e:
        return False, "%s; not sym -l --json output (%s)" % (ran(res), e)
    truth = {}
    for a, t, n, m in c.run.kallsyms:
        if m is None:
            truth.setdefault(n, set()).add(a)
    problems, found, kinds = [], set(), {}
    for r in rows:
        how = r.get("recovered")
        if not how:
            continue
        name, addr = r.get("name"), int(r.get("address", "0"), 16)
        found.add(name)
        kind = how.split(" in ")[0] if how.startswith("references in ") else how
        kinds[kind] = kinds.get(kind, 0) + 1
        if name not in truth:
            problems.append("%s at %016x (%s): /proc/kallsyms has no such name" % (name, addr, how))
        elif addr not in truth[name]:
            problems.append("%s at %016x (%s), /proc/kallsyms %s" % (
                name, addr, how, " ".join("%016x" % x for x in sorted(truth[name]))))
    want = RECOVER_ALWAYS + (RECOVER_ARM64 if c.run.arch == "arm64" else []) + \
        ([] if c.run.kernel.id in NO_PERCPU_BTF else RECOVER_PERCPU)
    given = {r.get("name"): int(r.get("address", "0"), 16) for r in rows}
    missing = [n for n in want if n not in given]
    if missing:
        problems.append("not recovered: %s" % ", ".join(missing))
    problems += ["%s at %016x (%s), /proc/kallsyms %s" % (n, given[n], "VMCOREINFO", sorted(truth.get(n, ())))
                 for n in want if n in given and n not in found and given[n] not in truth.get(n, ())]
    if problems:
        return False, "%d recovered, %d wrong or missing:\n%s" % (
            len(found), len(problems), "\n".join(problems[:30]))
    notes.append("%s: %d variables recovered from a kallsyms of functions only, all at /proc/kallsyms' "
                 "addresses (%s)" % (c.run.name, len(found),
                                     ", ".join("%d %s" % (v, k) for k, v in sorted(kinds.items()))))
    return True, ""
