# SPDX-License-Identifier: MIT
# Shared by the suite's modules: constants, the run's timings and NOTE lines,
# helpers that read kpeek's output, and Ctx, the guest's view one source
# must match.
import json
import os
import re
import subprocess
import tempfile
import time

import rig


HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/vm
INITIAL_JIFFIES = (1 << 32) - 300 * 250  # -300*HZ as unsigned int, HZ=250 (Debian config)
READY_TIMEOUT = int(os.environ.get("KP_READY_TIMEOUT", "600"))
SYMBOLS = ["avenrun", "init_task", "jiffies", "_text"]
CHECKS = ["syscalls", "modules", "tasks", "creds", "ftrace", "kprobes", "tracepoints", "text", "idt", "bpf"]
# Guests: QEMU CPU model and the paging levels the kernel must use. x86-64:
# l5 with LA57, l4 without. arm64 (4 KiB pages): a52 with LPA2 (52-bit VA,
# 5 levels, on kernels configured for it), a48 without (48-bit, 4 levels);
# pauth-impdef makes pointer authentication cheap under TCG; n48 is a48 on
# a CPU without pointer authentication (no return address is signed).
PAGING = {"l5": ("max", 5), "l4": ("max,la57=off", 4),
          "a52": ("max,pauth-impdef=on", 5), "a48": ("max,pauth-impdef=on,lpa2=off", 4),
          "n48": ("max,pauth=off,lpa2=off", 4)}

# The console's line of kp_crash.ko's panic in a timer callback (softirq=1).
SOFTIRQ_PANIC_RE = re.compile(r"Kernel panic - not syncing: kp_crash: .* in softirq")

timings = []
# The processes tests/vm/init's kp() runs for each live kpeek: kp_rusage,
# the busybox timeout it waits for, and kpeek itself. They are in a live
# listing kpeek gives and in no /proc reading around it.
LIVE_OBSERVERS = ("kp_rusage", "timeout", "kpeek")
notes = []  # NOTE lines: what this run could not cover, and why


def timed(what, t0):
    timings.append((what, time.monotonic() - t0))


def udiff(expected, got):
    """diff -u of two line lists (expected first)."""
    with tempfile.TemporaryDirectory(dir=rig.BUILD) as d:
        e, g = os.path.join(d, "expected"), os.path.join(d, "got")
        with open(e, "w") as f:
            f.write("".join(x + "\n" for x in expected))
        with open(g, "w") as f:
            f.write("".join(x + "\n" for x in got))
        r = subprocess.run(["diff", "-u", "--label", "expected", "--label", "got", e, g],
                           capture_output=True, text=True)
        return r.stdout


def live_run(files, tag):
    """The result of the guest's `kp TAG ARGS...` (tests/vm/init) as a
    rig.Run, with the arguments it ran with."""
    dec = lambda n: files.get(n, b"").decode("utf-8", "replace")
    args = dec("live.%s.args" % tag).splitlines() if "live.%s.args" % tag in files else None
    return rig.Run(int(dec("live.%s.rc" % tag).strip() or "-1"), dec("live.%s.out" % tag),
                   dec("live.%s.err" % tag), args)


def ran(res):
    rc, out, err = res
    return "exit %s; stderr: %s" % (rc if rc is not None else "(did not run)",
                                    (err.strip().split("\n")[0] if err.strip() else "(none)"))


def numbers(text):
    """Every 0x-hex, bare long hex (8+ digits) and decimal token, as ints."""
    vals = []
    for tok in re.findall(r"\b(?:0x)?[0-9a-fA-F]+\b", text):
        if tok.lower().startswith("0x"):
            vals.append(int(tok, 16))
        elif re.fullmatch(r"[0-9a-fA-F]{8,16}", tok):
            vals.append(int(tok, 16))
            if tok.isdigit():
                vals.append(int(tok))
        elif tok.isdigit():
            vals.append(int(tok))
    return vals


def json_of(res, key):
    """The list or object under key of kpeek's --json output, or (None, why)."""
    rc, out, err = res
    if rc != 0:
        return None, ran(res)
    try:
        doc = json.loads(out)
    except ValueError as e:
        return None, "output is not JSON (%s): %s" % (e, out[:500])
    if key not in doc:
        return None, "no \"%s\" in the JSON output: %s" % (key, out[:500])
    return doc[key], None


def print_value(out):
    """The value part of kpeek print's last line: '(type)value'."""
    line = out.strip().split("\n")[-1] if out.strip() else ""
    m = re.match(r"^\(.*?\)\s*(.*)$", line)
    return (m.group(1) if m else line).strip()


def print_int(out):
    """kpeek print's value as an integer (decimal or 0x hex), or None."""
    try:
        return int(print_value(out), 0)
    except ValueError:
        return None


# ---------------------------------------------------------------- what one source must show

class Ctx:
    """The guest's view that one source (live at a moment, or a dump) must
    match: brackets of readings taken before and after it."""

    def __init__(self, run, files, pre, post, live=False, between=False):
        self.run = run
        self.files = files
        self.live = live
        # A source copied while the guest runs (the in-guest snapshot takes
        # 10-20 s) holds values between the two readings, not one of them.
        self.between = between
        # /proc/loadavg read every half second while it was copied.
        self.load_samples = []
        self.pre, self.post = pre, post  # {"threads", "modules", "dmesg", "stamp"}
        # The processes of kp() that exist only while a live kpeek runs
        # (LIVE_OBSERVERS). busybox timeout's watcher outlives the kpeek it
        # wraps by up to a second (and kp_rusage waits for it), so one may
        # show up (even as a zombie) around any dump.
        self.transient = set(LIVE_OBSERVERS) if live or between else set(LIVE_OBSERVERS) - {"kpeek"}
        # Dumps makedumpfile wrote for a kernel it does not support: it
        # excludes pages the kernel uses, kpeek must say what it leaves out.
        self.partial = False
        # tests/vm/init (pid 1) takes the listings: it shows itself running
        # in them, whatever it does at the moment kpeek looks.
        self.readers = {1}
