# SPDX-License-Identifier: MIT
# A real kdump's guest (KERNEL:kdump:*): crashkernel=, kexec -p, a crash, and
# the crash kernel's vmcore and makedumpfile -d 31 of it.
import os
import re
import shutil
import tarfile
import time

import rig
import truth as T

from .bt import ck_bt_all, ck_bt_cpus, ck_module_frames, ck_oops_bt, ck_panic_bt
from .common import Ctx, READY_TIMEOUT, live_run, notes, timed
from .guest import GuestRun
from .modules import MODULE_BTF_ARGS, ck_module_btf
from .panic import ck_panic
from .report import KINDS, report_jobs


class KdumpRun:
    """A real kdump: a guest of its own boots with crashkernel=, loads a
    crash kernel (the same kernel and initrd, from a disk) with kexec -p,
    and crashes: with kp_crash.ko's NULL write where the test modules could
    be built (an oops: crash_kexec() from oops_end() with the oops'
    registers), else with sysrq c (panic()).
    The crash kernel writes /proc/vmcore (an ELF vmcore with the crash
    notes and CRASHTIME) and makedumpfile -c -d 31 of it to disks of their
    own. On both, kpeek panic, bt of the crashing task, bt -a and bt --all
    must match the console and /proc/PID/stack of every thread that slept
    through the readings just before the crash."""

    MEMORY = 512        # MB; with crashkernel=128M (768 MB and 256M also work)
    CRASHKERNEL = "128M"
    # Issue 37's two panics of their own, each on one kernel (one crash a
    # boot, and the suite's time budget has no room for more guests): an
    # OOM with panic_on_oom, a hung task with hung_task_panic.
    CRASH_OF = {"6.12": "oom", "7.2": "hung"}
    THROTTLED = "kpkd2"  # vdd: the payload, read before the crash
    # Threads such a crash wakes after the readings bt --all is compared
    # with (the crash of sysrq c or an oops follows them within a second):
    # memory reclaim and compaction under the OOM, the hung-task watchdog.
    WOKEN_BY = {"oom": {"kswapd0", "kcompactd0"}, "hung": {"khungtaskd"}}

    def __init__(self, kernel, initrd_dir):
        self.kernel = kernel
        self.name = "%s-kdump" % kernel.id
        self.initrd_dir = initrd_dir
        self.kind = "oops" if os.path.exists(os.path.join(initrd_dir, "has-rootkit")) else \
            self.CRASH_OF.get(kernel.id, "panic")
        self.rig = []
        self.dumps = {}     # source -> path
        self.partial = set()
        self.files = {}
        self.kallsyms = []
        self.console = ""

    def prefix(self, source):
        return "%s:kdump:%s" % (self.kernel.id, source)

    def check(self, what, ok, detail=""):
        self.rig.append(("%s:kdump:rig:%s" % (self.kernel.id, what), ok, detail))
        return ok

    def run(self):
        path = lambda ext: os.path.join(rig.BUILD, "%s.%s" % (self.name, ext))
        initrd = os.path.join(self.initrd_dir, "initrd.gz")
        payload = path("kexec.tar")
        with tarfile.open(payload, "w") as t:
            t.add(self.kernel.vmlinuz, "vmlinuz")
            t.add(initrd, "initrd.gz")
        disks = [(path("vmcore.img"), self.MEMORY + 64), (path("d31.img"), 256)]
        for p, mb in disks:
            if os.path.exists(p):
                os.unlink(p)
            with open(p, "wb") as f:
                f.truncate(mb << 20)
        extra = []
        # In this order: vdb, vdc, vdd in the guest (vda is the output disk).
        for i, p in enumerate([d[0] for d in disks] + [payload]):
            extra += ["-drive", "file=%s,format=raw,if=none,id=kpkd%d" % (p, i),
                      "-device", "virtio-blk-pci,drive=kpkd%d" % i]
        t0 = time.monotonic()
        g = None
        try:
            g, ok, why = rig.boot(lambda: rig.Guest(
                self.name, "max", initrd, self.kernel.vmlinuz, memory=self.MEMORY, extra=extra,
                arch=self.kernel.arch, append="crashkernel=%s kp_live=no" % self.CRASHKERNEL),
                "==KP-READY==", READY_TIMEOUT)
            if why:
                notes.append("%s: the guest's kernel died while booting (%s): booted once more" % (
                    self.name, why))
            if not self.check("boot", ok, g.dead or ""):
                return
            # A module's type from its own BTF, live (qemu_fw_cfg's
            # entries; compared with its sysfs files below).
            g.command("kpeek module-btf " + " ".join(MODULE_BTF_ARGS))
            ok = g.command("kdump")
            v = g.vals().get("kdump:load", "")
            if not self.check("kexec-load", ok and v.startswith("rc=0 loaded=1"),
                              "kexec -p: %s %s" % (v, g.dead or "")):
                return
            # Stacks of every thread, twice: those that did not run in
            # between are compared (the crash follows within a second).
            if not (g.command("truth kd") and g.command("truth kd-after")):
                self.check("truth", False, g.dead or "")
                return
            if self.kind == "hung":
                # A write to vdd then waits for ever (about 4096 s).
                out = g.hmp("block_set_io_throttle %s 0 0 1 0 0 0" % self.THROTTLED)
                if not self.check("throttle", not out, "block_set_io_throttle: %s" % out):
                    return
            self.files, self.console = g.kdump(self.kind)
            timed("%s crash kernel: vmcore saved" % self.name, t0)
        except (OSError, rig.RigError) as e:
            self.check("files", False, "%s (guest: %s)" % (e, g.dead if g else None))
            return
        finally:
            if g:
                g.stop()
            timed("%s guest total" % self.name, t0)
            if os.path.exists(payload):
                os.unlink(payload)
        vals = g.vals()
        for (p, _), source, key in zip(disks, ("vmcore", "d31"), ("kdump:vmcore", "kdump:d31")):
            v = vals.get(key, "")
            m = re.search(r"size=(\d+)", v)
            size = int(m.group(1)) if m else 0
            if not self.check("saved-" + source, size > 0 and (key != "kdump:vmcore" or v.startswith("rc=0")),
                              "%s: %s (console %s)" % (key, v or "none", g.log)):
                continue
            core = path(source + ".core")
            os.truncate(p, size)
            os.replace(p, core)
            self.dumps[source] = core
            if "unsupported=0" not in v and source == "d31":
                self.partial.add(source)
        keep = path("files")
        shutil.rmtree(keep, ignore_errors=True)
        os.makedirs(keep)
        for fname, data in self.files.items():
            with open(os.path.join(keep, fname), "wb") as f:
                f.write(data)
        try:
            self.kallsyms = T.kallsyms(self.files, "boot.kallsyms")
        except T.TruthError as e:
            self.check("kallsyms", False, str(e))

    def bracket(self, prefix, stamp):
        return GuestRun.bracket(self, prefix, stamp)

    def jobs(self, kpeek, pool):
        jobs = []
        dec = lambda n: self.files.get(n, b"").decode("utf-8", "replace")
        live = live_run(self.files, "module-btf") if "live.module-btf.rc" in self.files else \
            (None, "", "no live.module-btf.rc from the guest")
        jobs.append((self.prefix("live") + ":list-module-btf", None, ck_module_btf(self.files), None, live))
        try:
            ncpus = T.cpu_count(self.files)
        except T.TruthError as e:
            ncpus = 0
            self.check("cpus", False, str(e))
        try:
            real, up = dec("crash.clock").split()
            clock = (int(real), float(up))
        except ValueError:
            clock = (0, 0.0)  # ck_panic names the crash time kpeek printed
            self.check("crash-clock", False, "the guest wrote no crash.clock: %r" % dec("crash.clock"))
        for source in ("vmcore", "d31"):
            name = self.prefix(source)
            if source not in self.dumps:
                why = (None, "", "no %s from the crash kernel (see the rig checks)" % source)
                for what in ("panic-summary", "bt-panic", "bt-cpus", "bt-all", "list-module-btf", "report"):
                    jobs.append(("%s:%s" % (name, what), None, lambda res, c: (False, res[2]), None, why))
                continue
            path = self.dumps[source]
            run = lambda *args: pool.submit(rig.run_kpeek, kpeek, ["-c", path] + list(args))
            try:
                ctx = Ctx(self, self.files, self.bracket("truth.kd", ".post"),
                          self.bracket("truth.kd-after", ".pre"))
                ctx.partial = source in self.partial
                ctx.transient = ctx.transient | self.WOKEN_BY.get(self.kind, set())
            except T.TruthError as e:
                ctx = None
                self.check("truth-" + source, False, str(e))
            jobs.append((name + ":panic-summary", run("panic", "--json"),
                         ck_panic(self.console, self.kernel.release, clock, ncpus, source in self.partial),
                         None, None))
            ck = ck_oops_bt(self.console) if self.kind == "oops" else ck_panic_bt(self.console)
            if self.kind == "oops":
                ck = ck_module_frames(ck, self.console, "kp_crash")
            jobs.append((name + ":bt-panic", run("bt", "--json"), ck, None, None))
            jobs.append((name + ":bt-cpus", run("bt", "-a", "--json"), ck_bt_cpus, ctx, None))
            if ctx is not None:
                jobs.append((name + ":bt-all", run("bt", "--all", "--json"), ck_bt_all, ctx, None))
            jobs.append((name + ":list-module-btf", run(*MODULE_BTF_ARGS),
                         ck_module_btf(self.files, source in self.partial), None, None))
        # One crash in two formats: each reported as the console says, and
        # one signature.
        jobs += report_jobs(self.prefix, self.dumps, self.console, self.kernel.release,
                            KINDS["kdump-" + self.kind], kpeek, pool, self.partial, self.files)
        return jobs
