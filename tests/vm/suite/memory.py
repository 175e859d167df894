# SPDX-License-Identifier: MIT
# Issue 38: every command under 30 MB on the live kernel, as on dumps. The
# guest runs each live kpeek through kp_rusage (tests/vm/kp_rusage.c), which
# writes the peak resident set the kernel accounted to it (wait4()'s
# ru_maxrss, KiB) to live.TAG.rss; this holds every one of them, the churn
# loop's hundreds of runs included, to the budget.

BUDGET_KB = 30 * 1024


def peaks(files):
    """[(KiB, tag)] of every live kpeek run of the guest, largest first."""
    out = []
    for name, data in files.items():
        if name.startswith("live.") and name.endswith(".rss"):
            text = data.decode("ascii", "replace").strip()
            out.append((int(text) if text.isdigit() else -1, name[len("live."):-len(".rss")]))
    return sorted(out, reverse=True)


def ck_live_memory(run):
    def ck(res, c):
        p = peaks(run.files)
        if not p:
            return False, "the guest wrote no live.*.rss (kp_rusage missing from the initrd?)"
        bad = [t for kb, t in p if kb < 0]
        if bad:
            return False, "unreadable peak of %d runs: %s" % (len(bad), " ".join(bad[:10]))
        over = [(kb, t) for kb, t in p if kb > BUDGET_KB]
        top = ", ".join("%s %.1f MB" % (t, kb / 1024) for kb, t in (over or p)[:5])
        if over:
            return False, "%d of %d live runs over %d MB: %s" % (len(over), len(p), BUDGET_KB >> 10, top)
        return True, "%d live runs, largest: %s" % (len(p), top)
    return ck


def memory_jobs(run):
    """KERNEL:PAGING:live:memory of one guest."""
    return [("%s:memory" % run.prefix("live"), None, ck_live_memory(run), None, (None, "", ""))]
