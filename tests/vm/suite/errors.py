# SPDX-License-Identifier: MIT
# Bad input on the host (KERNEL:err:NAME): kpeek must fail with one line.
import os

import rig


def ck_error(res, c=None):
    rc, out, err = res
    lines = err.rstrip("\n").split("\n") if err.strip() else []
    if rc is not None and rc != 0 and len(lines) == 1:
        return True, ""
    return False, "expected a non-zero exit and exactly one line on stderr, got exit %s and %d lines:\n%s" % (
        rc, len(lines), err[:1000])


def error_jobs(r, kpeek, pool):
    """Bad input on the host, with the first guest's ELF dump."""
    jobs = []
    elf = r.dumps.get("elf", (None,))[0]
    missing_path = os.path.join(rig.BUILD, "no-such-dump.core")
    notelf = os.path.join(rig.BUILD, "not-a-dump.txt")
    with open(notelf, "w") as f:
        f.write("this is a text file, not an ELF or kdump core\n" * 40)
    trunc = os.path.join(rig.BUILD, "truncated.core")
    if elf:
        with open(elf, "rb") as src, open(trunc, "wb") as dst:
            dst.write(src.read(100 << 20))
    for name, args in (("nonexistent-file", ["-c", missing_path, "info"]),
                       ("not-elf", ["-c", notelf, "info"]),
                       ("truncated-dump", ["-c", trunc, "info"] if elf else None),
                       ("unknown-symbol", ["-c", elf, "sym", "kp_no_such_symbol"] if elf else None)):
        name = "%s:err:%s" % (r.kernel.id, name)
        if args is None:
            jobs.append((name, None, ck_error, None, (None, "", "no ELF dump to test with\n")))
        else:
            jobs.append((name, pool.submit(rig.run_kpeek, kpeek, args), ck_error, None, None))
    return jobs
