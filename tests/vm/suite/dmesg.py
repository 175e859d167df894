# SPDX-License-Identifier: MIT
# The check of kpeek dmesg against dmesg -r around the source.

from .common import ran, udiff


def ck_dmesg(res, c):
    """kpeek dmesg -r, line for line, holds every record dmesg -r showed
    just before it and is itself a prefix of what it showed just after."""
    rc, out, err = res
    got = out.split("\n")
    if got and got[-1] == "":
        got.pop()
    pre, post = c.pre["dmesg"], c.post["dmesg"]
    if rc == 0 and got[:len(pre)] == pre and post[:len(got)] == got and len(pre) > 10:
        return True, ""
    if got[:len(pre)] != pre:
        return False, "the records dmesg -r showed before are not all there (%s)\n" % ran(res) + \
            udiff(pre, got[:len(pre)])
    return False, "records beyond what dmesg -r showed after (%s)\n" % ran(res) + \
        udiff(post[:len(got)], got)
