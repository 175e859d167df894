# SPDX-License-Identifier: MIT
# The suite's main loop: kernels, their guests, their jobs, the verdicts
# and the summary.
import concurrent.futures
import importlib
import json
import os
import shutil
import time
import traceback

import kernels
import rig
import truth as T

from .checks import patch_syscalls
from .churn import churn_jobs
from .common import HERE, notes, timed, timings
from .contract import run_errors
from .corrupt import corrupt_jobs
from .dumps import derive, makedumpfile_compressors
from .errors import error_jobs
from .guest import GuestRun
from .kdump import KdumpRun
from .memory import memory_check, memory_note
from .results import Results
from .rootkit import RootkitRun
from .python import python_jobs
from .sources import guest_jobs


def finish(jobs, results):
    """Waits for each job's kpeek runs and reports its check's verdict. A
    job: (name, a future of kpeek's (rc, stdout, stderr), a list of them or
    None, check, ctx, the result to check when there is no future)."""
    for name, fut, ck, ctx, res in jobs:
        try:
            if isinstance(fut, list):
                res = [f.result() for f in fut]
            elif fut is not None:
                res = fut.result()
            verdict = ck(res, ctx)
            broken = [e for r in (res if isinstance(res, list) else [res]) if isinstance(r, rig.Run)
                      for e in run_errors(r.args, r[0], r[1])]
            if broken:
                verdict = False, "; ".join(x for x in (verdict[1] if not verdict[0] else "",
                                                       "JSON contract: " + "; ".join(broken[:10])) if x)
        except (T.TruthError, rig.RigError, OSError) as e:
            verdict = False, "%s: %s" % (type(e).__name__, e)
        results.report(name, verdict, res)


def main():
    t_all = time.monotonic()
    os.makedirs(rig.BUILD, exist_ok=True)
    try:
        results = Results(os.path.join(HERE, "limits"), os.path.join(HERE, "xfail"),
                          os.path.join(HERE, "floors"))
    except (OSError, ValueError) as e:
        print("FAIL rig:declarations\n    %s" % e)
        print("vm: 0 passed, 1 failed, 0 skipped, 0 xfail, 0 xpass")
        return 1
    # A kernel's first guest checks the ASan+UBSan build, its second guest
    # (other paging levels) the build users run: each build meets every
    # kernel, and the second guest's checks cost a third of the CPU time.
    kpeek = rig.find_kpeek()
    kpeek_plain = rig.find_kpeek(prefer_asan=False) or kpeek
    print("vm: host kpeek: %s (a kernel's first guest), %s (its others)" % (
        kpeek or "none (every check fails)", kpeek_plain or "none"), flush=True)

    missing = [t for t in ("qemu-system-x86_64", "qemu-system-aarch64", "aarch64-linux-gnu-gcc",
                           "readelf", "makedumpfile", "gcc", "cpio", "diff", "xz", "zstd", "depmod",
                           "dpkg-deb", "apt-get") if not shutil.which(t)]
    try:
        importlib.import_module("kdumpfile")  # the kdump oracle, python3-libkdumpfile
    except ImportError as e:
        missing.append("python3-libkdumpfile (%s)" % e)
    t0 = time.monotonic()
    try:
        ids = os.environ.get("KP_VM_KERNELS", "").split() or None
        ks = kernels.get(ids, log=lambda s: print("vm: " + s, flush=True))
    except (kernels.KernelError, OSError) as e:
        missing.append("kernels: %s" % e)
        ks = []
    timed("kernels (fetch or cache)", t0)
    results.report("rig:prerequisites", (not missing, "missing: " + ", ".join(missing)))
    if missing:
        return results.summary([])
    compressors = makedumpfile_compressors()
    only = os.environ.get("KP_VM_ONLY", "").split()  # guests to run (a developer's shortcut)
    all_jobs_done = 0
    first_guest = True
    with concurrent.futures.ThreadPoolExecutor(max_workers=int(os.environ.get("KP_VM_JOBS", "2"))) as pool:
        for k in ks:
            print("vm: kernel %s: %s" % (k.id, k.release), flush=True)
            t0 = time.monotonic()
            initrd_dir = os.path.join(rig.BUILD, "k-" + k.id)
            try:
                userland = kernels.userland(k.arch, log=lambda m: print("vm: " + m, flush=True)) \
                    if k.arch != "amd64" else None
                rig.build_initrd(k, initrd_dir, userland)
                ok, why = True, ""
            except (rig.RigError, kernels.KernelError, OSError) as e:
                ok, why = False, str(e)
            timed("%s mkinitrd" % k.id, t0)
            results.report("%s:rig:initrd" % k.id, (ok, why))
            if not ok:
                continue
            for i, paging in enumerate(k.paging if not only or "guest" in only else []):
                r = GuestRun(k, paging, full=i == 0, initrd_dir=initrd_dir)
                # Whether this QEMU can write lzo or snappy is asked once a run.
                optional = [("kdump-lzo-flat", "-l"), ("kdump-snappy-flat", "-s")] if first_guest else []
                first_guest = False
                r.run(optional)
                if r.files:
                    r.finish_direct()
                t0 = time.monotonic()
                if r.full:
                    derive(r, kpeek, compressors)
                    if r.files:
                        patch_syscalls(r)
                timed("%s host-made dumps" % r.name, t0)
                for name, ok, detail in r.rig:
                    results.report(name, (ok, detail))
                t0 = time.monotonic()
                kp = kpeek if i == 0 else kpeek_plain
                try:
                    jobs = guest_jobs(r, kp, pool, compressors)
                    jobs += python_jobs(r, kp, pool)
                    jobs += churn_jobs(r) + corrupt_jobs(r, kp, pool)
                    if i == 0:
                        jobs += error_jobs(r, kp, pool)
                except Exception:
                    # A defect of the suite fails this guest, loudly, and
                    # leaves the other guests' results standing (their
                    # counts are checked against the floors).
                    results.report("%s:rig:suite-error" % r.prefix("-")[:-2], (False, traceback.format_exc()))
                    jobs = []
                finish(jobs, results)
                all_jobs_done += len(jobs)
                if r.files:
                    results.report(*memory_check(r))
                note = memory_note(r) if r.files else None
                if note:
                    notes.append(note)
                timed("%s host-side checks (%d)" % (r.name, len(jobs)), t0)
                if os.environ.get("KEEP_DUMPS") != "1":
                    for p in os.listdir(rig.BUILD):
                        if p.endswith(".core") or p.endswith(".out.img"):
                            os.unlink(os.path.join(rig.BUILD, p))
            # The test rootkit where it could be built (the kernel's headers
            # and compiler: the installed 6.1); required for 6.1.
            has = os.path.exists(os.path.join(initrd_dir, "has-rootkit"))
            if (k.id == "6.1" or has) and (not only or "rootkit" in only):
                results.report("%s:rootkit:rig:built" % k.id, (has,
                               "no test rootkit for %s: /usr/src/linux-headers-%s missing "
                               "(scripts/install-deps installs linux-headers-amd64)" % (k.id, k.release)))
                if not has:
                    continue
                t0 = time.monotonic()
                rr = RootkitRun(k, initrd_dir)
                rr.run()
                for name, ok, detail in rr.rig:
                    results.report(name, (ok, detail))
                jobs = rr.jobs(kpeek, pool)
                finish(jobs, results)
                timed("%s rootkit guest and checks" % k.id, t0)
                if os.environ.get("KEEP_DUMPS") != "1":
                    for p in rr.dumps.values():
                        if os.path.exists(p):
                            os.unlink(p)
            # A real kdump where mkinitrd could put kexec and makedumpfile
            # into the initrd (x86-64), once per kernel release: the -rt and
            # -cloud flavours of 6.1 share 6.1's crash path (crash_kexec(),
            # crash_notes, __crash_kexec without ORC), and the suite's time
            # budget (README) has no room for two more crash kernels.
            if os.path.exists(os.path.join(initrd_dir, "has-kdump")) and \
                    k.meta == "linux-image-amd64" and (not only or "kdump" in only):
                t0 = time.monotonic()
                kr = KdumpRun(k, initrd_dir)
                kr.run()
                for name, ok, detail in kr.rig:
                    results.report(name, (ok, detail))
                finish(kr.jobs(kpeek, pool), results)
                timed("%s kdump guest and checks" % k.id, t0)
                if os.environ.get("KEEP_DUMPS") != "1":
                    for p in kr.dumps.values():
                        if os.path.exists(p):
                            os.unlink(p)
    timed("whole suite", t_all)
    with open(os.path.join(rig.BUILD, "results.json"), "w") as f:
        json.dump({"kernels": {k.id: {"release": k.release, "packages": k.packages} for k in ks},
                   "verdicts": results.verdicts,
                   "floors": {k: v[0] for k, v in results.floors.items()}}, f, indent=0)
    print("vm: timings:")
    for what, dt in timings:
        print("vm:   %6.1f s  %s" % (dt, what))
    for line in sorted(set(notes)):
        print("NOTE " + line)
    if not os.environ.get("KP_VM_KERNELS") and not only:
        for e in results.expect:
            if not e.used:
                print("NOTE %s declares %r, which matched no check of this run" % (e.where(), e.pattern))
    return results.summary([k.id for k in ks], enforce_floors=not only)
