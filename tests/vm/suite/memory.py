# SPDX-License-Identifier: MIT
# Issue 38: every command under 30 MB on the live kernel, as on dumps. The
# guest runs each live kpeek through kp_rusage (tests/vm/kp_rusage.c), which
# writes the peak resident set the kernel accounted to it (wait4()'s
# ru_maxrss, KiB: kpeek's own pages, its libraries' and its heap) to
# live.TAG.rss. One check a guest, KERNEL:GUEST:live:peak-rss, over every
# live run; a NOTE line names its largest and smallest runs.

BUDGET_KB = 30 * 1024


def peaks(files):
    """[(KiB, tag)] of every live kpeek run of the guest, largest first; -1
    where kp_rusage wrote no number."""
    out = []
    for name, data in files.items():
        if name.startswith("live.") and name.endswith(".rss"):
            text = data.decode("ascii", "replace").strip()
            out.append((int(text) if text.isdigit() else -1, name[len("live."):-len(".rss")]))
    return sorted(out, reverse=True)


def memory_note(run):
    """The NOTE line of one guest's live peaks, or None without any."""
    p = peaks(run.files)
    if not p:
        return None
    over = [t for kb, t in p if kb > BUDGET_KB]
    return "%s live peak RSS: %d runs, %d over %d MB; largest %s; smallest %s" % (
        run.name, len(p), len(over), BUDGET_KB >> 10,
        ", ".join("%s %.1f MB" % (t, kb / 1024) for kb, t in p[:4]),
        "%s %.1f MB" % (p[-1][1], p[-1][0] / 1024))


def memory_check(run):
    """(name, (ok, detail)) of the guest's budget check: every live run
    measured, none over BUDGET_KB; the runs of the guest are at least the
    live commands' (a guest without them fails: nothing was measured)."""
    p = peaks(run.files)
    name = "%s:live:peak-rss" % run.prefix("-")[:-2]
    if not p:
        return name, (False, "no live.*.rss: kp_rusage measured no live run")
    unmeasured = [t for kb, t in p if kb < 0]
    over = ["%s %.1f MB" % (t, kb / 1024) for kb, t in p if kb > BUDGET_KB]
    if unmeasured or over:
        return name, (False, "%d of %d live runs over %d MB: %s; %d unmeasured: %s" % (
            len(over), len(p), BUDGET_KB >> 10, ", ".join(over[:8]), len(unmeasured),
            ", ".join(unmeasured[:8])))
    return name, (True, "%d live runs, largest %s %.1f MB" % (len(p), p[0][1], p[0][0] / 1024))
