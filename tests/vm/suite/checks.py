# SPDX-License-Identifier: MIT
# kpeek check: clean on a kernel without a rootkit, and the syscall hooks
# the rig writes into copies of the ELF dump (elf-patched-table,
# elf-patched-call).
import bisect
import json
import os
import re
import struct
import subprocess

import rig
import truth as T

from .common import CHECKS, notes, numbers, ran, udiff
from .results import limited, passed, skipped


# The hooks the rig writes into copies of the ELF dump (patch_syscalls below):
# execve's entry (arch/x86/entry/syscalls/syscall_64.tbl; arm64 uses the
# generic numbers of include/uapi/asm-generic/unistd.h).
PATCH = {"amd64": (59, "__x64_sys_execve"), "arm64": (221, "__arm64_sys_execve")}
PATCH_MODULE = "qemu_fw_cfg"   # loaded before the ELF dump


def ck_patched_text(where_re, where, target):
    """check syscalls on a dump with one hook: exit 1, and a line that names
    the hooked place, the hook's address and the module it points into."""
    def ck(res, c):
        rc, out, err = res
        hit = [x for x in out.split("\n")
               if re.search(where_re, x) and PATCH_MODULE in x and target in numbers(x)]
        if rc == 1 and hit:
            return True, ""
        return False, ("expected exit 1 and a line naming %s -> 0x%x in module %s (the rig's patch), "
                       "%s; output:\n%s" % (where, target, PATCH_MODULE, ran(res), out[-3000:]))
    return ck


def check_doc(res):
    """The checks of a kpeek check --json run: ({name: check}, None) or
    (None, why not)."""
    rc, out, err = res
    try:
        doc = json.loads(out)
    except ValueError as e:
        return None, "output is not JSON (%s), %s:\n%s" % (e, ran(res), out[:2000])
    checks = doc.get("checks") if isinstance(doc, dict) else None
    if not isinstance(checks, list) or not all(isinstance(x, dict) and "name" in x for x in checks):
        return None, "no \"checks\" list, %s:\n%s" % (ran(res), out[:2000])
    return {x["name"]: x for x in checks}, None


def findings(check):
    return [f for f in check.get("findings", []) if isinstance(f, dict) and f.get("why")]


def num(v):
    try:
        return int(v, 0) if isinstance(v, str) else int(v)
    except (TypeError, ValueError):
        return None


def ck_patched_json(table, nr, target):
    """check --json syscalls on a dump with one hook: exactly one finding,
    the patched place pointing at the rig's target in its module, and the
    table's summary line counting one anomaly."""
    def ck(res, c):
        checks, why = check_doc(res)
        if why:
            return False, why
        sc = checks.get("syscalls", {})
        bad = findings(sc)
        where = "%s+0x%x" % (table, nr) if table == "x64_sys_call" else "%s[%d]" % (table, nr)
        want = {"object": where, "address": "0x%x" % target, "module": PATCH_MODULE}
        got = [{"object": f.get("object"), "address": "0x%x" % (num(f.get("address")) or 0),
                "module": f.get("module")} for f in bad]
        summary = [x for x in sc.get("summary", []) if isinstance(x, str)]
        counted = [x for x in summary if x.startswith(table + ":") and "1 anomalous" in x]
        others = [x for x in summary if "anomalous" in x and not x.startswith(table + ":")]
        if res[0] == 1 and sc.get("status") == "found" and got == [want] and counted and not others:
            return True, ""
        return False, ("expected exit 1, exactly one finding %s and the summary of %s counting 1 "
                       "anomaly (no other table); %s; findings %s; summary %s\n" % (
                           want, table, ran(res), json.dumps(bad), summary) +
                       udiff([json.dumps(want, sort_keys=True)], [json.dumps(g, sort_keys=True) for g in got]))
    return ck


def ck_check_clean(run):
    """kpeek check --json on a kernel without a rootkit: every check ran and
    found nothing (exit 0); idt does not apply on arm64. On a kernel whose
    kallsyms has no variables the checks that need them say so (a limit);
    on a filtered dump that lacks pages the kernel uses (makedumpfile -d 31
    of a kernel it does not support) a check may say it could not read
    them, and must find nothing else: it is a skipped entry (all of them
    skipped: the check is a skip)."""
    def ck(res, c):
        checks, why = check_doc(res)
        if why:
            return False, why
        want = set(x for x in CHECKS)
        missing = want - set(checks)
        bad, limits, partial, applicable = [], [], [], 0
        for name, x in sorted(checks.items()):
            st = x.get("status")
            if st == "not-applicable" and name == "idt" and run.arch == "arm64":
                continue
            applicable += 1
            if st == "clean":
                continue
            if st == "cannot" and run.no_data_symbols:
                limits.append("%s: %s" % (name, x.get("reason")))
                continue
            if st == "cannot" and getattr(c, "partial", False) and \
                    "excluded from the dump" in (x.get("reason") or "") and not findings(x):
                partial.append("%s: %s" % (name, x.get("reason")))
                continue
            bad.append("%s: %s %s %s" % (name, st, x.get("reason") or "",
                                         json.dumps(findings(x))[:1500]))
        if missing:
            bad.append("checks missing from the output: %s" % ", ".join(sorted(missing)))
        if bad:
            return False, "expected every check clean, %s:\n%s" % (ran(res), "\n".join(bad))
        if res[0] not in ((2,) if limits or partial else (0,)):
            return False, "expected exit %d, %s" % (2 if limits or partial else 0, ran(res))
        if limits:
            return limited("; ".join(limits + partial))
        if partial:
            # makedumpfile -d 31 of a kernel it does not support drops pages
            # the kernel uses: kpeek must say which check it could not finish.
            entries = ["check " + p for p in partial]
            if len(partial) == applicable:
                return skipped("every check could not read what it needs: " + "; ".join(partial))
            return passed("", entries)
        return True, ""
    return ck


def patch_syscalls(run):
    """Copies of the ELF dump with one syscall hook each, at places the
    rig computes from /proc/kallsyms and /proc/modules:
      elf-patched-table  sys_call_table[59] (execve) = qemu_fw_cfg's base + 0x10
      elf-patched-call   the rel32 of x64_sys_call's call/jmp to
                         __x64_sys_execve retargeted to qemu_fw_cfg's base
                         (kernels with the x64_sys_call() dispatcher)
    Physical = vaddr - __START_KERNEL_map + phys_base (VMCOREINFO),
    file offset from the PT_LOADs."""
    run.patched = {}
    if "elf" not in run.dumps:
        return
    if run.no_data_symbols:
        notes.append("%s: no syscall hooks written (its kallsyms has no sys_call_table)" %
                     run.kernel.id)
        return
    PATCH_NR, PATCH_HANDLER = PATCH[run.arch]
    src, pre, _ = run.dumps["elf"]
    try:
        mods = T.modules(run.files, "truth.%s.modules" % pre)
    except T.TruthError as e:
        run.check("patch-ground-truth", False, str(e))
        return
    base = next((m["base"] for m in mods if m["name"] == PATCH_MODULE), 0)
    missing = [n for n in ("sys_call_table", PATCH_HANDLER) if n not in run.sym] + \
        (["the kernel image mapping"] if run.phys_base is None and run.kimage_voffset is None else []) + \
        (["%s in /proc/modules" % PATCH_MODULE] if not base else [])
    if not run.check("patch-ground-truth", not missing, "no ground truth for " + ", ".join(missing)):
        return
    addrs = sorted({a for a, t, n, m in run.kallsyms if m is None})
    handler = run.sym[PATCH_HANDLER]
    d = rig.ElfDump(src)
    sites = []
    try:
        entry = run.image_phys(run.sym["sys_call_table"] + 8 * PATCH_NR)
        table_off = d.file_offset(entry, 8)
        orig, = struct.unpack("<Q", d.read_phys(entry, 8))
        ok_table = run.check("patch-table-original", orig == handler,
                              "sys_call_table[%d] holds 0x%x, not %s 0x%x" % (
                                  PATCH_NR, orig, PATCH_HANDLER, handler))
        ok_call = False
        if "x64_sys_call" in run.sym and run.arch == "amd64":
            fn = run.sym["x64_sys_call"]
            nxt = addrs[bisect.bisect_right(addrs, fn)] if addrs[-1] > fn else fn
            size = nxt - fn
            code = d.read_phys(run.image_phys(fn), size) if 5 <= size <= 1 << 18 else b""
            sites = [i for i in range(len(code) - 4) if code[i] in (0xE8, 0xE9) and
                     (fn + i + 5 + struct.unpack_from("<i", code, i + 1)[0]) & rig.MASK64 == handler]
            rel = base - (fn + sites[0] + 5) if sites else 0
            ok_call = run.check("patch-call-site", bool(sites) and -(1 << 31) <= rel < 1 << 31,
                                 "no call/jmp rel32 to %s in x64_sys_call (%d bytes)" % (PATCH_HANDLER, size))
            call_off = d.file_offset(run.image_phys(fn + sites[0] + 1), 4) if ok_call else 0
    except (OSError, rig.RigError) as e:
        run.check("patch-offsets", False, "reading %s: %s" % (src, e))
        return
    finally:
        d.close()
    todo = [("elf-patched-table", ok_table, table_off, struct.pack("<Q", base + 0x10),
             (r"(?<!\w)sys_call_table\[%d\]" % PATCH_NR, "sys_call_table[%d]" % PATCH_NR,
              "sys_call_table", PATCH_NR, base + 0x10))]
    if ok_call:
        todo.append(("elf-patched-call", True, call_off, struct.pack("<i", rel),
                     (r"(?<!\w)x64_sys_call\+0x%x(?![0-9a-fA-F])" % sites[0],
                      "x64_sys_call+0x%x" % sites[0], "x64_sys_call", sites[0], base)))
    for source, ok, off, data, hook in todo:
        if not ok:
            continue
        path = os.path.join(rig.BUILD, "%s.%s.core" % (run.name, source))
        if os.path.exists(path):
            os.unlink(path)
        r = subprocess.run(["cp", "--sparse=always", src, path], capture_output=True, text=True)
        err = r.stderr.strip() or "exit %d" % r.returncode
        if r.returncode == 0:
            try:
                os.chmod(path, 0o600)  # cp keeps QEMU's read-only mode
                with open(path, "r+b") as f:
                    f.seek(off)
                    f.write(data)
            except OSError as e:
                r.returncode, err = 1, str(e)
        if run.check("patch-" + source, r.returncode == 0, "cp and patch %s: %s" % (path, err)):
            run.patched[source] = (path,) + hook
