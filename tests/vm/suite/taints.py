# SPDX-License-Identifier: MIT
# The kernel's taint mask (KERNEL:GUEST:SOURCE:taint). Every guest loads an
# unsigned out-of-tree module at boot (cordic made so by
# tests/vm/unsign-module): the kernel taints itself O and E, /proc/modules
# shows "(OE)" for it (which the lsmod checks compare on every source) and
# the console's panic line says "Tainted: ... OE" (the panic checks). Here
# kpeek panic --json's tainted_mask against /proc/sys/kernel/tainted read
# just before and after the source (tests/vm/init stamp()).
import json

from .common import ran
from .results import limited

TAINT_OOT_MODULE, TAINT_UNSIGNED_MODULE = 12, 13  # include/linux/panic.h
OE = 1 << TAINT_OOT_MODULE | 1 << TAINT_UNSIGNED_MODULE


def ck_taint(res, c):
    rc, out, err = res
    want = {s.tainted for s in (c.pre["stamp"], c.post["stamp"])}
    if None in want:
        return False, "the guest recorded no /proc/sys/kernel/tainted around the source"
    if any(w & OE != OE for w in want):
        return False, "the guest's /proc/sys/kernel/tainted is %s: the unsigned out-of-tree module " \
            "did not taint it O and E (see insmod in the serial log)" % sorted(want)
    try:
        doc = json.loads(out)
        got = doc.get("tainted_mask")
        got = int(got, 16) if isinstance(got, str) else got
    except (ValueError, AttributeError) as e:
        return False, "not panic --json output (%s), %s: %s" % (e, ran(res), out[:300])
    if got is None and rc == 0 and c.run.no_data_symbols:
        return limited("tainted_mask unknown (null) on a kernel without variables in kallsyms")
    if rc == 0 and got in want:
        return True, ""
    return False, "tainted_mask %s, /proc/sys/kernel/tainted %s; %s" % (
        doc.get("tainted_mask"), " or ".join("0x%x" % w for w in sorted(want)), ran(res))
