# SPDX-License-Identifier: MIT
# The test rootkit's guest (KERNEL:rootkit:*): kpeek check must report
# exactly what tests/vm/modules did.
import json
import os
import re
import shutil
import time

import rig

from . import churn
from .bt import ck_module_frames, ck_panic_bt
from .checks import check_doc, findings, num
from .common import CHECKS, READY_TIMEOUT, SOFTIRQ_PANIC_RE, live_run, ran, timed
from .panic import ck_panic
from .report import KINDS, report_jobs


ROOTKIT_LINE_RE = re.compile(r"kp_rootkit: (\w+) (.*?) ?([0-9a-f]{16})?$")


class RootkitRun:
    """tests/vm/modules in a guest of its own (kp_live=no: no live commands
    before it): a process kp_hidden is started and the module loaded, which
    hides both and hooks what rootkits hook; kpeek check runs live in the
    guest, then on an ELF and a kdump dump of the stopped guest. What is
    expected comes from the module itself (its printk of each technique
    with the address of its function) and the guest (/proc/modules no
    longer lists it, /sys/module still does)."""

    def __init__(self, kernel, initrd_dir):
        self.kernel = kernel
        self.name = "%s-rootkit" % kernel.id
        self.initrd_dir = initrd_dir
        self.rig = []
        self.dumps = {}
        self.files = {}
        self.expect = {}   # technique -> (what, address)
        self.console = None  # console text of kp_crash's panic

    def prefix(self, source):
        return "%s:rootkit:%s" % (self.kernel.id, source)

    def check(self, what, ok, detail=""):
        self.rig.append(("%s:rootkit:rig:%s" % (self.kernel.id, what), ok, detail))
        return ok

    def run(self):
        g = rig.Guest(self.name, "max", os.path.join(self.initrd_dir, "initrd.gz"),
                      self.kernel.vmlinuz, arch=self.kernel.arch, append="kp_live=no")
        t0 = time.monotonic()
        try:
            g.start()
            ok = g.wait_for("==KP-READY==", READY_TIMEOUT)
            if not self.check("boot", ok, g.dead or ""):
                return
            ok = g.command("rootkit")
            if not self.check("load", ok and "rc=0" in g.vals().get("rootkit:insmod", ""),
                              "insmod: %s %s" % (g.vals().get("rootkit:insmod"), g.dead or "")):
                return
            churn.start_rootkit(self, g)  # check live while tasks come and go
            g.hmp("stop")
            for source, flag in (("elf", None), ("kdump-flat", "-z")):
                path = os.path.join(rig.BUILD, "%s.%s.core" % (self.name, source))
                _, err = g.dump(path, flag)
                if self.check("dump-" + source, err is None, err or ""):
                    self.dumps[source] = path
            g.hmp("cont")
            # Then kp_crash.ko panics three functions deep in a timer
            # callback (softirq, on the IRQ stack) that interrupted its init:
            # kpeek panic and bt on that dump must match the console, module
            # frames and all, across the interrupt into the task's stack.
            path = os.path.join(rig.BUILD, "%s.panic.core" % self.name)
            self.files, self.console = g.panic(path, command="crash-softirq")
            self.dumps["panic"] = path
            self.check("panic-softirq", bool(SOFTIRQ_PANIC_RE.search(self.console)) and "<IRQ>" in self.console,
                       "the console shows no panic in softirq on the IRQ stack:\n%s" % self.console[-3000:])
        except (OSError, rig.RigError) as e:
            self.check("files", False, "%s (guest: %s)" % (e, g.dead))
            return
        finally:
            g.stop()
            timed("%s guest total" % self.name, t0)
        keep = os.path.join(rig.BUILD, self.name + ".files")
        shutil.rmtree(keep, ignore_errors=True)
        os.makedirs(keep)
        for fname, data in self.files.items():
            with open(os.path.join(keep, fname), "wb") as f:
                f.write(data)
        text = lambda n: self.files.get(n, b"").decode("utf-8", "replace")
        for line in text("rootkit.dmesg").splitlines():
            m = ROOTKIT_LINE_RE.search(line.strip())
            if m and m.group(3):
                self.expect[m.group(1)] = (m.group(2), int(m.group(3), 16))
        for line in text("rootkit.bpf").splitlines():
            w = line.split()
            if len(w) == 4 and w[0] == "prog":
                self.expect["bpf:" + w[1]] = (int(w[2]), int(w[3]))
        missing = [t for t in ("table", "inline", "ftrace", "kprobe", "tracepoint", "task", "cred", "module",
                               "bpf:kp_filter", "bpf:kp_write_user") if t not in self.expect]
        self.check("techniques", not missing, "the module (or kp_bpf) did not report %s; their lines:\n%s%s" % (
            ", ".join(missing), text("rootkit.dmesg"), text("rootkit.bpf")))
        listed = [l.split()[0] for l in text("rootkit.modules").splitlines() if l.strip()]
        self.check("hidden-from-proc-modules", "kp_rootkit" not in listed,
                   "/proc/modules still lists kp_rootkit")
        self.check("still-in-sysfs", "kp_rootkit" in text("rootkit.sysfs").split(),
                   "/sys/module has no kp_rootkit: %s" % text("rootkit.sysfs")[:500])

    def jobs(self, kpeek, pool):
        jobs = []
        results = {"live": None}
        if "live.rootkit.rc" in self.files:
            results["live"] = live_run(self.files, "rootkit")
        futs = {"live": None}
        for source, path in self.dumps.items():
            if source != "panic":
                futs[source] = pool.submit(rig.run_kpeek, kpeek, ["-c", path, "check", "--json"])
        for source in ("live", "elf", "kdump-flat"):
            fut = futs.get(source)
            res = results.get(source)
            if fut is None and res is None:
                res = (None, "", "no %s result (see the rig checks)" % source)
            for name in CHECKS:
                jobs.append(("%s:check-%s" % (self.prefix(source), name), fut,
                             ck_rootkit(self, name), None, res))
        if "elf" in self.dumps:
            jobs.append(("%s:report-strict" % self.prefix("elf"),
                         pool.submit(rig.run_kpeek, kpeek, ["-c", self.dumps["elf"], "report", "--strict",
                                                            "--sections", "checks", "--json"]),
                         ck_report_strict, None, None))
        name = self.prefix("panic")
        if "panic" in self.dumps and self.console:
            path = self.dumps["panic"]
            jobs.append((name + ":panic-summary", pool.submit(rig.run_kpeek, kpeek, ["-c", path, "panic", "--json"]),
                         ck_panic(self.console, self.kernel.release), None, None))
            jobs.append((name + ":bt-panic", pool.submit(rig.run_kpeek, kpeek, ["-c", path, "bt", "--json"]),
                         ck_module_frames(ck_panic_bt(self.console), self.console, "kp_crash"), None, None))
            jobs += report_jobs(self.prefix, {"panic": path}, self.console, self.kernel.release,
                                KINDS["crash-softirq"], kpeek, pool)
        else:
            why = (None, "", "no dump of kp_crash's panic (see the rig checks)")
            jobs.append((name + ":panic-summary", None, lambda res, c: (False, res[2]), None, why))
            jobs.append((name + ":bt-panic", None, lambda res, c: (False, res[2]), None, why))
            jobs.append((name + ":report", None, lambda res, c: (False, res[2]), None, why))
        return jobs + churn.rootkit_jobs(self)


def ck_report_strict(res, c):
    """report --strict of the rootkit's dump: exit 1 (a finding), and the
    checks it says found something are among those the module acted in
    (every one but idt), with tasks, which holds on every kernel."""
    rc, out, err = res
    try:
        found = json.loads(out)["checks"]["found"]
    except (ValueError, KeyError, TypeError) as e:
        return False, "no checks.found in the JSON (%s), %s: %s" % (e, ran(res), out[:500])
    acted = set(CHECKS) - {"idt"}
    if rc == 1 and "tasks" in found and set(found) <= acted:
        return True, ""
    return False, "expected exit 1 and found among %s with tasks, %s; found %r" % (sorted(acted), ran(res), found)


def ck_rootkit(run, name):
    """One check's findings on the rootkit guest: exactly what the module
    did in that check's domain, each with the address the module printed
    and its function's name; nothing in idt and bpf."""
    e = run.expect
    pid = e.get("task", ("?", 0))[0]

    def want():
        if name == "syscalls":
            t = e.get("table")
            return [(lambda f: f.get("object") == (t[0] if t else "?"), t and t[1], "kp_rootkit_kill+0x0")]
        if name == "text":
            t = e.get("inline")
            return [(lambda f: f.get("object") == "%s+0x0" % (t[0] if t else "?"), t and t[1],
                     "kp_rootkit_acct+0x0")]
        if name == "ftrace":
            t = e.get("ftrace")
            return [(lambda f: (t[0] if t else "?") + "+0x0" in (f.get("object") or ""), t and t[1],
                     "kp_rootkit_ftrace+0x0")]
        if name == "kprobes":
            t = e.get("kprobe")
            return [(lambda f: (t[0] if t else "?") + "+0x0" in (f.get("object") or ""), t and t[1],
                     "kp_rootkit_pre+0x0")]
        if name == "tracepoints":
            t = e.get("tracepoint")
            return [(lambda f: f.get("object") == "tracepoint %s" % (t[0] if t else "?"), t and t[1],
                     "kp_rootkit_probe+0x0")]
        if name == "tasks":
            t = e.get("task")
            return [(lambda f: f.get("object") == "pid %s (kp_hidden)" % pid, t and t[1], None)]
        if name == "creds":
            t = e.get("cred")
            return [(lambda f: f.get("object") == "pid %s (kp_rooted)" % (t[0] if t else "?") and
                     "init_cred" in (f.get("why") or ""), t and t[1], None)]
        if name == "modules":
            t = e.get("module")
            return [(lambda f: f.get("object") == "module kp_rootkit" and
                     "not in the modules list" in (f.get("why") or ""), t and t[1], None)]
        if name == "bpf":
            t = e.get("bpf:kp_write_user")
            return [(lambda f: f.get("object", "").startswith("bpf prog %d 'kp_write_user' " % (t[0] if t else -1))
                     and "kprobe program calls bpf_probe_write_user" in (f.get("why") or ""), None, None)]
        return []

    # uapi enum bpf_prog_type (a fixed ABI): the types kp_bpf loads.
    prog_types = {1: "socket_filter", 2: "kprobe"}

    def summary_ok(x):
        """bpf's summary lists both programs with the id and type the
        guest's kernel gave kp_bpf."""
        lines = x.get("summary", [])
        bad = []
        for prog in ("kp_filter", "kp_write_user"):
            pid_, ptype = e.get("bpf:" + prog, (-1, -1))
            want = "prog %d: %s '%s'" % (pid_, prog_types.get(ptype, "?"), prog)
            if not any(isinstance(l, str) and l.startswith(want) for l in lines):
                bad.append("no summary line %r" % want)
        return bad

    def ck(res, c):
        checks, why = check_doc(res)
        if why:
            return False, why
        x = checks.get(name)
        if x is None:
            return False, "no %s check in the output" % name
        got = findings(x)
        problems = []
        for match, addr, sym in want():
            hits = [f for f in got if match(f)]
            if len(hits) != 1:
                problems.append("expected one matching finding, got %d" % len(hits))
                continue
            f = hits[0]
            if addr is not None and num(f.get("address")) != addr:
                problems.append("address %s, the module printed 0x%x" % (f.get("address"), addr))
            if sym is not None and f.get("symbol") != "%s [kp_rootkit]" % sym:
                problems.append("symbol %r, expected %r" % (f.get("symbol"), "%s [kp_rootkit]" % sym))
            if sym is not None and not f.get("hidden_module"):
                problems.append("hidden_module not set")
        if len(got) != len(want()):
            problems.append("%d findings, expected %d" % (len(got), len(want())))
        if name == "bpf":
            problems += summary_ok(x)
        if x.get("reason"):
            problems.append("cannot check: %s" % x.get("reason"))
        if res[0] != 1:
            problems.append("exit %s, expected 1" % res[0])
        if problems:
            return False, "%s: %s; expected from the module: %s; findings: %s" % (
                name, "; ".join(problems), e, json.dumps(got)[:3000])
        return True, ""
    return ck
