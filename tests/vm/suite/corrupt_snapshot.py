# SPDX-License-Identifier: MIT
# kpeek snapshot of a kernel's makedumpfile -d 31 dump (corrupt.py): the
# pages the kdump file leaves out are listed as lost in the snapshot, and
# reading them there fails naming them (KERNEL:GUEST:kdump-d31:snapshot-*).
import json
import os
import re
import struct

import rig

from .common import ran
from .corrupt_checks import lines_of
from .corrupt_run import SetupError, bounded, run_bounded


def excluded_ranges(path):
    """The physical ranges a kdump-compressed file (standard layout) has in
    its RAM bitmap but not in its dumped bitmap: [(start, end)]."""
    with open(path, "rb") as f:
        h = f.read(448)
        if h[:8] != b"KDUMP   ":
            raise SetupError("%s: no KDUMP signature" % path)
        _status, block_size, sub_hdr_size, bitmap_blocks = struct.unpack_from("<IiiI", h, 424)
        f.seek(block_size * (1 + sub_hdr_size))
        bm = f.read(bitmap_blocks * block_size)
    half = len(bm) // 2
    bits = int.from_bytes(bm[:half], "little") & ~int.from_bytes(bm[half:], "little")
    return [(m.start() * block_size, m.end() * block_size)
            for m in re.finditer("1+", bin(bits)[2:][::-1])]


def ck_snapshot_lost(want, allow):
    """kpeek snapshot of a -d 31 dump: the excluded pages are lost ranges
    (JSON lost_ranges, unreadable_bytes); without --allow-holes exit 2 and
    one stderr line, the file written; with it exit 0."""
    nbytes = sum(e - s for s, e in want)

    def ck(res, c):
        rc, out, err = res
        try:
            doc = json.loads(out)
        except ValueError:
            return False, "not JSON, %s: %s" % (ran(res), out[:300])
        problems = []
        if doc.get("lost_ranges") != len(want) or doc.get("unreadable_bytes") != nbytes:
            problems.append("lost_ranges %s, unreadable_bytes %s; the dump excludes %d bytes in %d ranges" % (
                doc.get("lost_ranges"), doc.get("unreadable_bytes"), nbytes, len(want)))
        ls = lines_of(err)
        if allow and (rc != 0 or ls):
            problems.append("--allow-holes: expected exit 0 and no stderr, %s" % ran(res))
        if not allow and (rc != 2 or len(ls) != 1 or "--allow-holes" not in ls[0] or str(nbytes) not in ls[0]):
            problems.append("expected exit 2 and one stderr line counting %d bytes lost and naming "
                            "--allow-holes, %s" % (nbytes, ran(res)))
        if not os.path.isfile(doc.get("file") or ""):
            problems.append("no file %s" % doc.get("file"))
        return (True, "") if not problems else (False, "; ".join(problems))
    return ck


def ck_info_lost(want):
    def ck(res, c):
        rc, out, err = res
        try:
            got = [(int(x["start"], 16), int(x["end"], 16)) for x in json.loads(out)["lost"]]
        except (ValueError, KeyError, TypeError) as e:
            return False, "no lost ranges in info --json (%s), %s: %s" % (e, ran(res), out[:500])
        if rc == 0 and got == want:
            return True, ""
        diff = sorted(set(got) ^ set(want))[:5]
        return False, "%d lost ranges, the dump's bitmaps exclude %d; first differences %s" % (
            len(got), len(want), ["0x%x-0x%x" % d for d in diff])
    return ck


def ck_rd_lost(paddr):
    def ck(res, c):
        rc, out, err = res
        ls = lines_of(err)
        if rc == 2 and not out.strip() and len(ls) == 1 and "lost" in ls[0] and ("%x" % paddr) in ls[0]:
            return True, ""
        return False, "expected exit 2 and one stderr line saying 0x%x was lost, %s; output %s" % (
            paddr, ran(res), out[:200])
    return ck


def snapshot_jobs(run, kpeek, pool, ctx, spent):
    """kpeek snapshot of the kdump-d31 source, with and without
    --allow-holes, then info and rd on the result."""
    jobs = []
    if "kdump-d31" not in run.dumps:
        return jobs
    name = lambda ck: "%s:%s" % (run.prefix("kdump-d31"), ck)
    src = run.dumps["kdump-d31"][0]
    try:
        want = excluded_ranges(src)
        if not want:
            raise SetupError("makedumpfile -d 31 excluded no page")
    except (OSError, SetupError) as e:
        for ck in ("snapshot-lost", "snapshot-allow-holes", "snapshot-info-lost", "snapshot-rd-lost"):
            jobs.append((name(ck), None, lambda res, c: (False, res[2]), None, (None, "", "setup: %s" % e)))
        return jobs
    outs = {}
    for ck, allow in (("snapshot-lost", False), ("snapshot-allow-holes", True)):
        out = os.path.join(rig.BUILD, "%s.d31-%s.core" % (run.name, ck))
        if os.path.exists(out):
            os.unlink(out)
        outs[ck] = out
        res = run_bounded(kpeek, ["-c", src, "snapshot", "--json", "-o", out] +
                          (["--allow-holes"] if allow else []))
        jobs.append((name(ck), None, bounded(ck_snapshot_lost(want, allow), spent), ctx, res))
    snap = outs["snapshot-lost"]
    jobs.append((name("snapshot-info-lost"), pool.submit(run_bounded, kpeek, ["-c", snap, "info", "--json"]),
                 bounded(ck_info_lost(want), spent), ctx, None))
    paddr = want[len(want) // 2][0]
    jobs.append((name("snapshot-rd-lost"), pool.submit(run_bounded, kpeek, ["-c", snap, "rd", "-p", "0x%x" % paddr, "8"]),
                 bounded(ck_rd_lost(paddr), spent), ctx, None))
    return jobs
