# SPDX-License-Identifier: MIT
# Checks of kpeek panic against the console of the panicked guest.
import json
import re

from .common import ran
from .contract import schema_errors
from .console import CONSOLE_TS, console_oops, same_regs


def ck_no_panic(res, c):
    """A kernel that did not panic: kpeek says so (panic_cpu unset, no
    panic message)."""
    rc, out, err = res
    try:
        j = json.loads(out)
    except ValueError:
        return False, "not JSON: %s; output:\n%s" % (ran(res), out)
    bad = schema_errors("panic", j)
    if rc == 0 and j.get("panicked") is False and j.get("message") is None and j.get("kind") == "none" and not bad:
        return True, ""
    return False, "expected no panic: %s; %s\noutput:\n%s" % (ran(res), "\n".join(bad), out)


def console_panic(console, release):
    """What the console says of a panic: the first "Kernel panic - not
    syncing: " line (printk time, text), the "Oops: " line before the
    first "CPU: ... Comm: ..." line (time, text), and that line's (cpu,
    pid, comm, taint); None for each the console lacks."""
    msg = cpu = oops = None
    for l in console.replace("\r", "").splitlines():
        m = re.match(CONSOLE_TS + r"(Kernel panic - not syncing: .*?)\s*$", l)
        if m and msg is None:
            msg = (m.group(1), m.group(2))
        m = re.match(CONSOLE_TS + r"(Oops: .*?)\s*$", l)
        if m and cpu is None:
            oops = (m.group(1), m.group(2))
        m = re.match(CONSOLE_TS + r"CPU: (\d+) (?:UID: \d+ )?PID: (\d+) Comm: (\S+) (.*)$", l)
        if m and cpu is None and (" " + release) in m.group(5):
            # dump_stack_print_info() says "Kdump: loaded " before the
            # taint where a crash kernel is loaded.
            rest = re.sub(r"^Kdump: loaded ", "", m.group(5))
            cpu = (int(m.group(2)), int(m.group(3)), m.group(4),
                   rest[:rest.index(" " + release)])
    return msg, cpu, oops


def task_error_problems(why, partial):
    """The panicking task cannot be read (task_error): only in a dump that
    lacks pages the kernel uses, and then because of one."""
    if why is None or (partial and "excluded" in why):
        return []
    return ["the panicking task cannot be read: %s" % why]


def ck_panic(console, release, kdump_clock=None, ncpus=None, partial=False):
    """kpeek panic on the dump of the panicked guest against the guest's
    console: the panic line (text and printk time), and the CPU, PID, comm
    and taint of the "CPU: ... Comm: ..." line the kernel printed with it.
    A real kdump (kdump_clock: the guest's `date +%s` and /proc/uptime
    just before the crash command): an oops may go to the crash kernel
    before panic() prints anything, and then the "Oops: ..." line is the
    message; the vmcore's crash time must be that clock advanced by the
    uptime to the console's panic line, and every other CPU of the ncpus
    the guest had must be listed as stopped by kdump (a QEMU dump has none:
    crash_notes stay zero without kdump). partial: a dump that lacks pages
    the kernel uses (makedumpfile -d 31 of a kernel it does not know), where
    the panicking task_struct may be gone: kpeek then takes PID and comm from
    the log and says that the page was excluded (task_error)."""
    def ck(res, c):
        rc, out, err = res
        try:
            j = json.loads(out)
        except ValueError:
            return False, "not JSON: %s; output:\n%s" % (ran(res), out)
        msg, cpu, oops = console_panic(console, release)
        if cpu is None or (msg is None and (kdump_clock is None or oops is None)):
            return False, "the console shows no panic line (or oops) or no CPU/PID/Comm line:\n%s" % console[-2000:]
        want = {"cpu": cpu[0], "pid": cpu[1], "comm": cpu[2], "taint": cpu[3]}
        want["cpus_stopped"] = sorted(set(range(ncpus)) - {cpu[0]}) if kdump_clock and ncpus else []
        if msg is not None:
            want.update(message=msg[1], uptime=msg[0])
        else:
            want.update(message=None, oops=oops[1], uptime=oops[0])
        task = j.get("task") or {}
        got = {"message": j.get("message"), "oops": j.get("oops"), "uptime": j.get("uptime"),
               "cpu": j.get("cpu"), "pid": task.get("pid"), "comm": task.get("comm"),
               "taint": j.get("taint"), "cpus_stopped": j.get("cpus_stopped")}
        if isinstance(got["uptime"], (int, float)):
            got["uptime"] = "%.6f" % got["uptime"]
        bad = ["%s: kpeek %r, console %r" % (k, got[k], want[k]) for k in want if got[k] != want[k]]
        bad += schema_errors("panic", j)
        bad += task_error_problems(j.get("task_error"), partial)
        # An oops went to kdump with its registers: the crash note must
        # hold what the console printed under "RIP: 0010:...".
        regs = console_oops(console)[1] if kdump_clock is not None and msg is None else {}
        bad += ["register " + b for b in same_regs(j.get("registers") or {}, regs)]
        if kdump_clock is not None and msg is None and not regs:
            bad.append("the console shows no registers of the oops")
        if kdump_clock is not None:
            t = j.get("crash_time")
            # CRASHTIME is ktime_get_real_seconds() in __crash_kexec(),
            # after the console's line: the guest's clock (whole seconds)
            # plus the uptime between, give or take a second of rounding,
            # and a second more for panic() to reach kdump.
            real, up0 = kdump_clock
            at = real + float(want["uptime"]) - up0
            if not isinstance(t, int) or not at - 1 <= t <= at + 2:
                bad.append("crash_time: kpeek %r, the guest's clock said %d at uptime %.2f, "
                           "so %.2f at the console's %s" % (t, real, up0, at, want["uptime"]))
        if rc == 0 and j.get("panicked") is True and not bad:
            return True, ""
        return False, "%s; %s; output:\n%s" % ("; ".join(bad), ran(res), out)
    return ck
