# SPDX-License-Identifier: MIT
# Dumps made on the host from QEMU's (makedumpfile -R, kpeek snapshot,
# makedumpfile -d 31) and the checks of their pages.
import json
import os
import re
import subprocess
import time

import rig

from .common import notes, timed
from .symbols import source_compression


def makedumpfile_compressors():
    """(source, flag) for makedumpfile -d 31: zlib always, and lzo, snappy,
    zstd when "makedumpfile -v" says the build has them (Debian 12: lzo)."""
    r = subprocess.run(["makedumpfile", "-v"], capture_output=True, text=True)
    enabled = set(re.findall(r"(?m)^(\w+)\s+enabled\s*$", r.stdout + r.stderr))
    comps = [("kdump-d31", "-c")]
    for name, flag in (("lzo", "-l"), ("snappy", "-p"), ("zstd", "-z")):
        if name in enabled:
            comps.append(("kdump-d31-" + name, flag))
        else:
            notes.append("makedumpfile has no %s (%s disabled in makedumpfile -v)" % (name, name))
    return comps


def ck_excluded(paddr):
    """Reading a page makedumpfile left out fails with one line that says so."""
    def ck(res, c):
        rc, out, err = res
        lines = err.rstrip("\n").split("\n") if err.strip() else []
        if rc == 2 and len(lines) == 1 and "excluded" in lines[0] and ("%x" % paddr) in lines[0]:
            return True, ""
        return False, ("expected exit 2 and one stderr line saying physical 0x%x was excluded "
                       "(the dump's bitmap leaves it out), got exit %s:\n%s" % (paddr, rc, err[:1000]))
    return ck


def ck_pages(elf_path, pages, oracle):
    """kpeek rd -p of each page equals the same page of the ELF dump taken
    in the same stop (the rig's own reader) and, for standard-layout kdump
    files, what libkdumpfile reads (python3-libkdumpfile, the independent
    reader of the format). oracle: (source path, use libkdumpfile)."""
    def ck(res_list, c):
        problems = []
        d = rig.ElfDump(elf_path)
        try:
            ctx = None
            if oracle[1]:
                import kdumpfile
                ctx = kdumpfile.kdumpfile(oracle[0])
            for paddr, res in zip(pages, res_list):
                want = d.read_phys(paddr, 4096)
                rc, out, err = res
                try:
                    got = bytes.fromhex(json.loads(out)["bytes"]) if rc == 0 else None
                except (ValueError, KeyError) as e:
                    got = None
                    err = "not rd --json output (%s)" % e
                if got != want:
                    problems.append("page 0x%x: kpeek %s" % (paddr, "differs from the ELF dump" if got
                                                            else "failed: " + err.strip()))
                if ctx is not None:
                    lib = ctx.read(kdumpfile.KDUMP_MACHPHYSADDR, paddr, 4096)
                    if lib != want:
                        problems.append("page 0x%x: libkdumpfile reads other bytes than the ELF dump" % paddr)
        except Exception as e:  # the oracle itself failing is a failure, named
            problems.append("%s: %s" % (type(e).__name__, e))
        finally:
            d.close()
        if not problems:
            return True, ""
        return False, "\n".join(problems[:20])
    return ck


def reassemble(run):
    """makedumpfile -R: QEMU's flattened kdump files to the standard layout."""
    for flat in [s for s in run.dumps if s.endswith("-flat")]:
        src, pre, post = run.dumps[flat]
        source = flat[:-len("-flat")]
        out = os.path.join(rig.BUILD, "%s.%s.core" % (run.name, source))
        if os.path.exists(out):
            os.unlink(out)
        t0 = time.monotonic()
        with open(src, "rb") as f:
            r = subprocess.run(["makedumpfile", "-R", out], stdin=f, capture_output=True, text=True)
        timed("%s makedumpfile -R %s" % (run.name, flat), t0)
        if run.check("reassemble-" + source, r.returncode == 0 and os.path.exists(out),
                      r.stderr.strip()):
            run.dumps[source] = (out, pre, post)
        if source != "kdump":
            # lzo and snappy are read in the standard layout only (zlib in both).
            del run.dumps[flat]
            os.unlink(src)

def d31_compressors(run, compressors):
    """makedumpfile filters dumps of its own architecture only (Debian's
    is built for the host: "check_release: Can't get the address of
    system_utsname" on an arm64 dump)."""
    if run.arch != "amd64":
        notes.append("makedumpfile (built for x86-64) cannot filter %s dumps: no kdump-d31 "
                     "sources for them" % run.arch)
        return []
    return compressors

# What the stream's reassembled file must answer as the ELF dump does.
STREAM_COMMANDS = (["ps"], ["lsmod"], ["dmesg"], ["print", "init_task.comm"], ["bt", "1"])


def snapshot_stream(run, kpeek, src):
    """kpeek snapshot -o - of the ELF dump (makedumpfile's flattened
    format) piped into makedumpfile -R: the kdump file it reassembles has,
    by its own header (read without libkpeek), zlib pages and every page of
    RAM dumped, and kpeek reads it as it reads the ELF dump (stdout and
    exit status of STREAM_COMMANDS)."""
    out_path = os.path.join(rig.BUILD, "%s.snap-stream.core" % run.name)
    if os.path.exists(out_path):
        os.unlink(out_path)
    t0 = time.monotonic()
    with open(os.path.join(rig.BUILD, "%s.snap-stream.err" % run.name), "w+") as err:
        p1 = subprocess.Popen([kpeek, "-c", src, "snapshot", "-q", "-o", "-"], stdout=subprocess.PIPE,
                              stderr=err, stdin=subprocess.DEVNULL)
        p2 = subprocess.run(["makedumpfile", "-R", out_path], stdin=p1.stdout, capture_output=True,
                            text=True, errors="replace")
        p1.stdout.close()
        rc1 = p1.wait()
        err.seek(0)
        why = err.read().strip()
    timed("%s kpeek snapshot -o - | makedumpfile -R" % run.name, t0)
    if not run.check("snapshot-stream", rc1 == 0 and p2.returncode == 0 and os.path.isfile(out_path),
                     "kpeek snapshot -o - of %s: exit %s (%s); makedumpfile -R: exit %d (%s)" % (
                         src, rc1, why, p2.returncode, (p2.stderr or p2.stdout).strip()[-300:])):
        return
    try:
        h = rig.kdump_header(out_path)
        ok = h["compression"] == "zlib" and h["dump_level"] == 0 and h["dumped_pages"] == h["ram_pages"] > 0
        detail = "expected zlib, dump level 0 and every RAM page dumped; header: %s" % h
    except (OSError, rig.RigError) as e:
        ok, detail = False, str(e)
    run.check("snapshot-stream-header", ok, detail)
    differ = []
    for args in STREAM_COMMANDS:
        a = rig.run_kpeek(kpeek, ["-c", src] + args)
        b = rig.run_kpeek(kpeek, ["-c", out_path] + args)
        if a[0] != b[0] or a[1] != b[1]:
            differ.append("kpeek %s: exit %s on the ELF dump, %s on the stream's file%s" % (
                " ".join(args), a[0], b[0], "" if a[1] == b[1] else ", stdout differs"))
    run.check("snapshot-stream-same", not differ, "; ".join(differ))
    os.unlink(out_path)


def split_set(run, kpeek, snap, src):
    """makedumpfile --split of elf-snap in 3 parts (64 MiB split blocks, so
    that each part holds frames of the guest's 512 MiB): the parts given in
    another order answer STREAM_COMMANDS as the ELF dump does; each part
    alone answers the same or fails saying it is a part of a split dump
    (its own frames, or the frame another part holds), in each line: one
    for the task list, one for the processes' memory sizes (ps's VSZ and
    RSS) where those lie in another part."""
    parts = [os.path.join(rig.BUILD, "%s.split%d.core" % (run.name, i)) for i in (1, 2, 3)]
    for p in parts:
        if os.path.exists(p):
            os.unlink(p)
    t0 = time.monotonic()
    r = subprocess.run(["makedumpfile", "--split", "--splitblock-size", "65536", "-c", "-d", "1", snap] + parts,
                       capture_output=True, text=True, errors="replace", stdin=subprocess.DEVNULL)
    timed("%s makedumpfile --split of elf-snap" % run.name, t0)
    # -d 1 (zero pages only) needs none of the kernel's structures: it works
    # where makedumpfile warns that it does not know the kernel version.
    if not run.check("split-dump", r.returncode == 0 and all(os.path.isfile(p) for p in parts),
                     "makedumpfile --split: exit %d: %s" % (r.returncode, (r.stderr or r.stdout).strip()[-300:])):
        return
    differ = []
    shuffled = [parts[2], parts[0], parts[1]]
    for args in STREAM_COMMANDS:
        a = rig.run_kpeek(kpeek, ["-c", src] + args)
        b = rig.run_kpeek(kpeek, sum([["-c", p] for p in shuffled], []) + args)
        if a[0] != b[0] or a[1] != b[1]:
            differ.append("kpeek %s: exit %s on the ELF dump, %s on the 3 parts (%s)%s" % (
                " ".join(args), a[0], b[0], b[2].strip()[:200], "" if a[1] == b[1] else ", stdout differs"))
    run.check("split-set-same", not differ, "; ".join(differ))
    whole = rig.run_kpeek(kpeek, ["-c", src, "ps"])
    wrong = []
    for p in parts:
        rc, out, err = rig.run_kpeek(kpeek, ["-c", p, "ps"])
        lines = err.strip().splitlines()
        if (rc, out) == whole[:2] and not err:
            continue
        if rc == 0 or not 1 <= len(lines) <= 2 or not all(
                "is part of a split dump" in ln or "another file of the split dump" in ln for ln in lines):
            wrong.append("%s alone: exit %s, %d stderr lines: %s" % (os.path.basename(p), rc, len(lines),
                                                                    err.strip()[:300]))
    run.check("split-part-alone", not wrong, "; ".join(wrong))
    for p in parts:
        os.unlink(p)


def derive(run, kpeek, compressors):
    """elf-snap (kpeek snapshot of the ELF dump) and makedumpfile -d 31
    of it with each compression it supports."""
    if "elf" not in run.dumps:
        return
    src, pre, post = run.dumps["elf"]
    snap = os.path.join(rig.BUILD, "%s.elf-snap.core" % run.name)
    if os.path.exists(snap):
        os.unlink(snap)
    t0 = time.monotonic()
    rc, out, err = rig.run_kpeek(kpeek, ["-c", src, "snapshot", "-q", "-o", snap], timeout=600)
    timed("%s kpeek snapshot of the ELF dump" % run.name, t0)
    if not run.check("snapshot-of-elf", rc == 0 and os.path.isfile(snap),
                      "kpeek -c %s snapshot: exit %s, stderr: %s" % (src, rc, err.strip())):
        return
    run.dumps["elf-snap"] = (snap, pre, post)
    snapshot_stream(run, kpeek, src)
    if run.arch == "amd64":
        split_set(run, kpeek, snap, src)
    for source, flag in d31_compressors(run, compressors):
        out_path = os.path.join(rig.BUILD, "%s.%s.core" % (run.name, source))
        if os.path.exists(out_path):
            os.unlink(out_path)
        t0 = time.monotonic()
        r = subprocess.run(["makedumpfile", flag, "-d", "31", snap, out_path],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        timed("%s makedumpfile %s -d 31 of elf-snap" % (run.name, flag), t0)
        msg = (r.stderr.strip() or r.stdout.strip()).split("\n")[-1]
        if "kernel version is not supported" in r.stderr + r.stdout:
            run.unsupported.add(source)
            notes.append("makedumpfile does not support %s (%s): its -d 31 dumps lack pages "
                         "the kernel uses; ps must say what it leaves out" % (
                             run.kernel.id, run.kernel.release))
        if not run.check("makedumpfile-" + source, r.returncode == 0 and os.path.isfile(out_path),
                          "makedumpfile %s -d 31 %s: exit %d: %s" % (flag, snap, r.returncode, msg)):
            continue
        try:
            h = rig.kdump_header(out_path)
            want = source_compression(source)
            ok = h["compression"] == want and h["dump_level"] == 31 and \
                0 < h["dumped_pages"] < h["ram_pages"]
            detail = "expected %s, dump level 31 and fewer pages dumped than in RAM; header: %s" % (want, h)
        except (OSError, rig.RigError) as e:
            ok, detail = False, str(e)
        if run.check("header-" + source, ok, detail):
            if h["excluded_pfn"] is not None:
                run.excluded[source] = h["excluded_pfn"] << 12
        run.dumps[source] = (out_path, pre, post)
