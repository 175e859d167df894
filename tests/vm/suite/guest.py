# SPDX-License-Identifier: MIT
# One guest of a kernel (KERNEL:GUEST:*): boot, the dumps QEMU takes of the
# running workload, the rig's own checks, and the guest's view (truth.py)
# each source must match.
import json
import os
import re
import shutil
import time

import rig
import truth as T

from . import churn
from .common import Ctx, PAGING, READY_TIMEOUT, SOFTIRQ_PANIC_RE, live_run, notes, timed, timings
from .dumps import reassemble
from .symbols import functions_only


class GuestRun:
    OOM_PANIC = {"6.12-arm64"}

    def __init__(self, kernel, paging, full, initrd_dir):
        self.kernel = kernel
        self.paging = paging
        self.cpu, self.levels = PAGING[paging]
        self.arch = kernel.arch
        self.name = "%s-%s" % (kernel.id, paging)
        self.full = full            # derived dumps, patched copies, in-guest snapshot
        self.initrd_dir = initrd_dir
        self.snapshot = full and rig.has_9p(initrd_dir)
        self.share = os.path.join(rig.BUILD, self.name + ".share")
        self.functions_kallsyms = os.path.join(rig.BUILD, self.name + ".functions.kallsyms")
        self.has_functions_kallsyms = False
        self.dumps = {}      # source -> (path, truth tag before, truth tag after)
        self.excluded = {}   # filtered source -> physical address of a page it left out
        self.panic = None    # (ELF dump of the panicked guest, console text of the panic)
        # How the guest ends: the full guest in a panic in hard-IRQ context
        # (sysrq c from the keyboard on x86-64, from a break and "c" on the
        # console UART on arm64, whose virt machine has no keyboard); an
        # x86-64 l4 guest in a panic in NMI context (QEMU's nmi with
        # kernel.unknown_nmi_panic: every CPU on its NMI stack); the others
        # power off. (The kdump guests crash in process context.)
        self.panic_command = ("panic-key" if self.arch == "amd64" else "panic-break") if full else \
            "panic-nmi" if paging == "l4" else None
        # 6.12 arm64's ends in an OOM with panic_on_oom instead (issue 37's
        # OOM on arm64; its break and sysrq c stays on 7.2 arm64's).
        if full and kernel.id in self.OOM_PANIC:
            self.panic_command = "oom"
        # An arm64 kernel whose kp_crash.ko mkinitrd could build (6.1: the
        # host's gcc-12 cross compiler) panics in softirq context instead
        # (the x86-64 one: the rootkit guest's).
        if full and self.arch == "arm64":
            if os.path.exists(os.path.join(initrd_dir, "has-crash-module")):
                self.panic_command = "crash-softirq"
            else:
                why = "see mkinitrd"
                if os.path.exists(os.path.join(initrd_dir, "no-crash-module")):
                    with open(os.path.join(initrd_dir, "no-crash-module")) as f:
                        why = f.read().strip()
                notes.append("%s: no kp_crash.ko (%s): its panic is in hard-IRQ context, none in softirq" % (
                    self.name, why))
        self.rig = []        # (name, ok, detail) of the rig's own checks
        self.patched = {}    # dumps with a syscall hook (patch_syscalls)
        self.direct = None   # (vaddr, paddr)
        self.pob = self.phys_base = self.kcode = None
        self.kimage_voffset = None  # arm64: kernel image virtual - physical
        self.files = {}
        self.kallsyms = []
        self.sym = {}
        self.vmcoreinfo_only_syms = set()
        self.unsupported = set()  # makedumpfile output for a kernel it does not know
        self.no_data_symbols = False  # the guest's kallsyms has no variables

    def prefix(self, source):
        return "%s:%s:%s" % (self.kernel.id, self.paging, source)

    def check(self, what, ok, detail=""):
        self.rig.append(("%s:rig:%s" % (self.prefix("-")[:-2], what), ok, detail))
        return ok

    def dump_set(self, g, tag, kinds, optional=()):
        """Dumps of the stopped guest, between "truth TAG" and "truth
        TAG-after". optional: (source, flag) QEMU may not support: made and
        checked when it can, a NOTE otherwise."""
        if not g.command("truth " + tag):
            return
        g.hmp("stop")
        t0 = time.monotonic()
        for source, flag in list(kinds) + list(optional):
            path = os.path.join(rig.BUILD, "%s.%s.core" % (self.name, source))
            dt, err = g.dump(path, flag)
            if err and (source, flag) in optional and "not available" in err:
                notes.append("QEMU cannot write %s: %s" % (source[:-len("-flat")], err))
                if os.path.exists(path):
                    os.unlink(path)
                continue
            if err and not g.dead:
                # Once (CI of stop 45: 6.1 l5's kdump-flat, right after its
                # two ELF dumps) a dump failed on the CI machine, and with it
                # every check of that dump and of the dumps made from it. A
                # host's hiccup (room, I/O) is not kpeek's: the dump is asked
                # for once more, and the NOTE says so.
                dt, again = g.dump(path, flag)
                notes.append("%s: dump-guest-memory %s failed once (%s)%s" % (
                    self.name, source, err, ", then wrote it" if again is None else ", twice"))
                err = again
            timings.append(("%s dump %s (%d MB)" % (self.name, source,
                                                    os.path.getsize(path) >> 20 if not err else 0), dt))
            if self.check("dump-" + source, err is None, err or ""):
                self.dumps[source] = (path, tag, tag + "-after")
        timed("%s dumps %s" % (self.name, tag), t0)
        g.hmp("cont")
        if not g.command("truth %s-after" % tag):
            self.check("truth-%s-after" % tag, False, g.dead)

    def run(self, optional_kinds):
        if self.snapshot:
            shutil.rmtree(self.share, ignore_errors=True)
            os.makedirs(self.share)
        t0 = time.monotonic()
        g = None
        try:
            g, ok, why = rig.boot(lambda: rig.Guest(
                self.name, self.cpu, os.path.join(self.initrd_dir, "initrd.gz"), self.kernel.vmlinuz,
                late_fwcfg=True, arch=self.arch, share=self.share if self.snapshot else None,
                console_input=self.full and self.arch == "arm64",
                # The second guest: the core live commands only (sources.py);
                # the first searches all memory live too (addr.py).
                append="kp_live=core" if not self.full else "kp_search_k"),
                "==KP-BOOTED==", READY_TIMEOUT)
            self.guest = g
            if why:
                notes.append("%s: the guest's kernel died while booting (%s): booted once more" % (self.name, why))
            timed("%s boot and ground truth" % self.name, t0)
            t1 = time.monotonic()
            ok = ok and g.wait_for("==KP-READY==", READY_TIMEOUT)
            timed("%s live kpeek commands in the guest" % self.name, t1)
            if not self.check("boot", ok, g.dead or ""):
                return
            churn.start(self, g)  # kpeek live while tasks come and go (some kernels)
            t1 = time.monotonic()
            # Before qemu_fw_cfg is loaded QEMU has no VMCOREINFO to write.
            self.dump_set(g, "s0", [("elf-novmci", None)])
            g.command("insmod")
            self.dump_set(g, "s1", [("elf", None), ("kdump-flat", "-z")], optional_kinds)
            timed("%s dump phase" % self.name, t1)
            self.find_direct(g)
            if self.direct:
                g.command("kpeek vtop-directmap vtop 0x%x" % self.direct[0])
            if self.snapshot:
                t1 = time.monotonic()
                g.command("snapshot snap", 900)
                timed("%s kpeek snapshot inside the guest" % self.name, t1)
            t1 = time.monotonic()
            if self.panic_command:
                path = os.path.join(rig.BUILD, "%s.panic.core" % self.name)
                self.files, console = g.panic(path, command=self.panic_command)
                self.panic = (path, console)
                if self.panic_command == "crash-softirq":
                    self.check("panic-softirq", bool(SOFTIRQ_PANIC_RE.search(console)),
                               "the console shows no panic in softirq:\n%s" % console[-3000:])
            else:
                self.files = g.quit()
            # Kept for whoever reads a failure: build/vm/GUEST.files/.
            keep = os.path.join(rig.BUILD, self.name + ".files")
            shutil.rmtree(keep, ignore_errors=True)
            os.makedirs(keep)
            for fname, data in self.files.items():
                with open(os.path.join(keep, fname), "wb") as f:
                    f.write(data)
            timed("%s quit (files from the guest: %d, %d KB)" % (
                self.name, len(self.files), sum(len(v) for v in self.files.values()) >> 10), t1)
            self.check("files", True)
        except (OSError, rig.RigError) as e:
            self.check("files", False, "%s (guest: %s)" % (e, g.dead if g else None))
        finally:
            if g:
                g.stop()
            timed("%s guest total" % self.name, t0)
        try:
            self.kallsyms = T.kallsyms(self.files, "boot.kallsyms")
            self.sym = {}
            for a, t, n, m in self.kallsyms:
                if m is None:
                    self.sym.setdefault(n, a)
            # CONFIG_KALLSYMS_ALL=n still lists a few data symbols (section
            # markers), so ask for the variables every check leans on.
            self.no_data_symbols = "jiffies" not in self.sym and "init_task" not in self.sym
            self.write_functions_kallsyms()
            _, self.kcode = T.iomem(self.files)
        except T.TruthError as e:
            self.check("ground-truth", False, str(e))
        if self.snapshot:
            self.take_snapshot()
        reassemble(self)

    def write_functions_kallsyms(self):
        """The guest's kallsyms cut to what a kernel without
        CONFIG_KALLSYMS_ALL lists (symbols.functions_only), for
        sym-recovered; none when the kernel lists only functions anyway."""
        lines = None if self.no_data_symbols else functions_only(self.kallsyms)
        self.has_functions_kallsyms = bool(lines)
        if lines:
            with open(self.functions_kallsyms, "w") as f:
                f.write("\n".join(lines) + "\n")
        elif os.path.exists(self.functions_kallsyms):
            os.unlink(self.functions_kallsyms)

    def image_phys(self, va):
        """Physical address of a kernel-image address: x86-64's
        __START_KERNEL_map mapping, arm64's kimage_voffset."""
        if self.arch == "arm64":
            return (va - self.kimage_voffset) & rig.MASK64
        return rig.kimage_phys(va, self.phys_base)

    def find_direct(self, g):
        """Before quit (the live vtop of a direct-map address needs it):
        the start of the direct map and one address in it, in the middle of
        the dump's biggest RAM range. x86-64: page_offset_base read from the
        ELF dump through the kernel image mapping (phys = vaddr -
        __START_KERNEL_map + phys_base) at the address the guest's
        /proc/kallsyms gives (printed at boot). arm64: PAGE_OFFSET =
        -(1 << VA bits) from PHYS_OFFSET up (VMCOREINFO's VA size: 64 -
        TCR_EL1_T1SZ)."""
        elf = self.dumps.get("elf")
        if not elf:
            self.check("page_offset_base", False, "no ELF dump")
            return
        d = rig.ElfDump(elf[0])
        try:
            vi = d.vmcoreinfo
            num = lambda k: int(vi[k], 0) & rig.MASK64
            if self.arch == "arm64":
                keys = ["NUMBER(kimage_voffset)", "NUMBER(PHYS_OFFSET)", "NUMBER(TCR_EL1_T1SZ)",
                        "NUMBER(VA_BITS)"]
                if not self.check("vmcoreinfo-in-elf", all(k in vi for k in keys),
                                  "VMCOREINFO of %s lacks some of %s" % (elf[0], keys)):
                    return
                self.kimage_voffset = num(keys[0])
                va_bits = 64 - num(keys[2])
                self.check("vmcoreinfo-va-bits", va_bits == {5: 52, 4: 48}[self.levels],
                           "64 - TCR_EL1_T1SZ = %d, %d levels expected" % (va_bits, self.levels))
                # KERNELPACMASK is 0 unless the kernel signs return
                # addresses (system_supports_address_auth()).
                pauth = "pauth=off" not in self.cpu
                self.check("vmcoreinfo-pac", (int(vi.get("NUMBER(KERNELPACMASK)", "0"), 0) != 0) == pauth,
                           "NUMBER(KERNELPACMASK) %s, CPU %s" % (vi.get("NUMBER(KERNELPACMASK)", "absent"), self.cpu))
                # __phys_to_virt(): (pa - PHYS_OFFSET) | PAGE_OFFSET, PAGE_OFFSET
                # -(1 << VA_BITS) as configured; a 52-bit kernel on a 48-bit
                # CPU moves PHYS_OFFSET instead (arm64_memblock_init()).
                self.pob = (rig.MASK64 << num("NUMBER(VA_BITS)")) & rig.MASK64
                phys_offset = num(keys[1])
            else:
                pob_sym = g.vals().get("sym:page_offset_base", "")
                if not self.check("vmcoreinfo-in-elf", "NUMBER(phys_base)" in vi and
                                  re.fullmatch(r"[0-9a-f]{16}", pob_sym),
                                  "no VMCOREINFO note (or no phys_base) in %s, or no page_offset_base "
                                  "in /proc/kallsyms (%r)" % (elf[0], pob_sym)):
                    return
                self.phys_base = num("NUMBER(phys_base)")
                self.check("vmcoreinfo-levels", vi.get("NUMBER(pgtable_l5_enabled)", "0") ==
                           str(int(self.levels == 5)), "NUMBER(pgtable_l5_enabled)=%s, %d levels expected" % (
                               vi.get("NUMBER(pgtable_l5_enabled)"), self.levels))
                raw = d.read_phys(self.image_phys(int(pob_sym, 16)), 8)
                self.pob = int.from_bytes(raw, "little")
                phys_offset = 0
                # The direct map starts in the kernel half, 1 GiB aligned (KASLR).
                if not self.check("page_offset_base", self.pob >= 0xFF00000000000000 and
                                  self.pob & 0x3FFFFFFF == 0, "page_offset_base read as 0x%x" % self.pob):
                    return
            pa, size, _ = max(d.loads, key=lambda x: x[1])
            paddr = (pa + size // 3) & ~0xFFF | 0x5A8
            self.direct = (((paddr - phys_offset) | self.pob) & rig.MASK64, paddr)
            self.vmcoreinfo_syms = {k[7:-1] for k in vi if k.startswith("SYMBOL(")}
        except (OSError, rig.RigError, ValueError) as e:
            self.check("page_offset_base", False, str(e))
        finally:
            d.close()

    def finish_direct(self):
        """After quit, with the guest's files: phys_base against /proc/iomem,
        the symbols only VMCOREINFO names, no VMCOREINFO in elf-novmci."""
        if "_text" in self.sym and (self.phys_base is not None or self.kimage_voffset is not None):
            text_phys = self.image_phys(self.sym["_text"])
            self.check("image-phys", text_phys == self.kcode,
                       "_text's physical address from VMCOREINFO is 0x%x, /proc/iomem Kernel code at %s" % (
                           text_phys, hex(self.kcode) if self.kcode is not None else None))
        self.vmcoreinfo_only_syms = getattr(self, "vmcoreinfo_syms", set()) - set(self.sym)
        if "elf-novmci" in self.dumps:
            n = rig.ElfDump(self.dumps["elf-novmci"][0])
            self.check("no-vmcoreinfo-in-elf-novmci", not n.vmcoreinfo,
                       "elf-novmci has a VMCOREINFO note")
            n.close()

    def take_snapshot(self):
        """The guest's snap.elf from the share, as source "snap"."""
        share_file = os.path.join(self.share, "snap.elf")
        vals = self.guest.vals()
        rc = self.files.get("live.snap.rc", b"").decode().strip()
        out = self.files.get("live.snap.out", b"").decode("utf-8", "replace")
        err = self.files.get("live.snap.err", b"").decode("utf-8", "replace")
        detail = "mount: %s; kpeek snapshot: exit %s, stderr: %s, stdout: %s" % (
            vals.get("snap:mount", "(not run)"), rc or "(not run)", err.strip() or "(none)", out.strip())
        try:
            summary = json.loads(out)
        except ValueError:
            summary = {}
        ok = rc == "0" and os.path.isfile(share_file) and \
            not [f for f in os.listdir(self.share) if f != "snap.elf"] and \
            summary.get("ranges", 0) > 0 and summary.get("bytes", 0) > 400 << 20 and \
            summary.get("unreadable_bytes") == 0 and \
            summary.get("file_size") == os.path.getsize(share_file)
        if self.check("snapshot-in-guest", ok, detail + "; share holds %s" % os.listdir(self.share)):
            path = os.path.join(rig.BUILD, "%s.snap.core" % self.name)
            os.replace(share_file, path)
            timings.append(("%s in-guest snapshot (%d MB; kpeek's own time)" % (
                self.name, os.path.getsize(path) >> 20), summary.get("seconds", 0.0)))
            self.dumps["snap"] = (path, "snap", "snap-after")
        shutil.rmtree(self.share, ignore_errors=True)

    # --- what each source must show
    def ctx(self, source):
        f = self.files
        if source == "live":
            return None  # per command: live_ctx
        _, pre, post = self.dumps[source]
        # The dump was taken after "truth PRE" ended and before "truth
        # POST" began: the readings closest to it are PRE's last and POST's
        # first.
        c = Ctx(self, f, self.bracket("truth.%s" % pre, ".post"), self.bracket("truth.%s" % post, ".pre"),
                between=source == "snap")
        if source == "snap":
            c.load_samples = T.load_samples(f, "truth.%s.loads" % pre)
        c.partial = source in self.unsupported
        return c

    def bracket(self, prefix, stamp):
        f = self.files
        return {"threads": T.threads(f, prefix + ".threads"),
                "stacks": T.stacks(f, prefix + ".stacks") if prefix + ".stacks" in f else None,
                "modules": T.modules(f, prefix + ".modules"),
                "modsyms": T.kallsyms(f, prefix + ".modsyms"),
                "dmesg": T.lines(f, prefix + ".dmesg"),
                "stamp": T.Stamp(f, prefix + stamp)}

    def live_ctx(self, tag):
        """The readings around the live kpeek run TAG: its stamps, and the
        listings tests/vm/init took around it (else the boot ones)."""
        f, b = self.files, "truth.boot"

        def pick(name, fallback):
            return name if name in f else fallback
        pre = {"threads": T.threads(f, pick("live.%s.threads-pre" % tag, b + ".threads")),
               "stacks": T.stacks(f, "live.%s.stacks" % tag) if "live.%s.stacks" % tag in f else None,
               "modules": T.modules(f, pick("live.%s.modules-pre" % tag, b + ".modules")),
               "dmesg": T.lines(f, pick("live.%s.dmesg-pre" % tag, b + ".dmesg")),
               "stamp": T.Stamp(f, "live.%s.pre" % tag)}
        post = {"threads": T.threads(f, pick("live.%s.threads-post" % tag, b + ".threads")),
                "modules": T.modules(f, pick("live.%s.modules-post" % tag, b + ".modules")),
                "dmesg": T.lines(f, pick("live.%s.dmesg-post" % tag, b + ".dmesg")),
                "stamp": T.Stamp(f, "live.%s.post" % tag)}
        return Ctx(self, f, pre, post, live=True)

    def live_result(self, tag):
        f = self.files
        if "live.%s.rc" % tag not in f:
            return None, "", "no live.%s.rc from the guest (see %s)\n" % (tag, self.guest.log)
        return live_run(f, tag)
