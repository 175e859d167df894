# SPDX-License-Identifier: MIT
# Issue 38 asks for every command under 30 MB on the live kernel, as on
# dumps. The guest runs each live kpeek through kp_rusage
# (tests/vm/kp_rusage.c), which writes the peak resident set the kernel
# accounted to it (wait4()'s ru_maxrss, KiB) to live.TAG.rss. The budget is
# not met yet on every kernel (7.2's 200k symbols: check and net peak at
# ~40 MB on a dump too), so this is a measurement for now, one NOTE line a
# guest with its largest runs, not a check: it becomes one, with the
# kernels still over declared, once every kernel has been measured.

BUDGET_KB = 30 * 1024


def peaks(files):
    """[(KiB, tag)] of every live kpeek run of the guest, largest first."""
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
