# SPDX-License-Identifier: MIT
# The QEMU rig shared by tests/vm/run-suite and tests/vm/demo: builds a
# guest's initrd for one kernel (tests/vm/kernels.py), boots it under TCG,
# talks to the guest's /init over a second serial port, takes dumps through
# the QEMU monitor, and reads back the files /init wrote to its output disk.
import ctypes
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

import kernels

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build", "vm")
START_KERNEL_MAP = 0xFFFFFFFF80000000
MASK64 = (1 << 64) - 1
OUT_DISK_MB = 128


class RigError(Exception):
    pass


def find_kpeek(prefer_asan=True):
    for tree in (["build-asan"] if prefer_asan else []) + ["build"]:
        p = os.path.join(ROOT, tree, "kpeek")
        if os.access(p, os.X_OK):
            return p
    return None


def kpeek_for(arch):
    """The kpeek binary a guest of arch runs: build/kpeek, or the cross
    build of scripts/cross-build (build-aarch64/kpeek)."""
    return os.path.join(ROOT, "build" if arch == "amd64" else "build-aarch64", "kpeek")


def build_initrd(kernel, out_dir=None, userland=None):
    """tests/vm/mkinitrd for one kernel (a kernels.Kernel); returns the
    initrd's path. userland: the unpacked libraries and busybox of a
    foreign architecture (kernels.userland())."""
    out_dir = out_dir or os.path.join(BUILD, "k-" + kernel.id)
    os.makedirs(out_dir, exist_ok=True)
    argv = [os.path.join(ROOT, "tests", "vm", "mkinitrd"), out_dir, kpeek_for(kernel.arch),
            kernel.root, kernel.release]
    env = dict(os.environ)
    env.pop("KP_MODULE_HEADERS", None)
    if kernel.arch != "amd64":
        argv += [kernel.arch, userland]
        # The test module too, where this kernel's headers and compiler are
        # (without them the guest's panic is in hard-IRQ context, a NOTE).
        try:
            tree, why = kernels.headers(kernel)
        except (kernels.KernelError, OSError) as e:
            tree, why = None, "its headers: %s" % e
        why_file = os.path.join(out_dir, "no-crash-module")
        if tree:
            env["KP_MODULE_HEADERS"] = tree
            if os.path.exists(why_file):
                os.remove(why_file)
        else:
            with open(why_file, "w") as f:
                f.write(why + "\n")
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RigError("mkinitrd for %s failed: %s" % (
            kernel.id, r.stderr.strip() or "exit %d" % r.returncode))
    return os.path.join(out_dir, "initrd.gz")


def has_9p(initrd_dir):
    """Whether mkinitrd found the 9p modules for this kernel."""
    return os.path.exists(os.path.join(initrd_dir, "has-9p"))


# ---------------------------------------------------------------- the guest

def die_with_parent():
    """In the QEMU child: get SIGKILL when the suite dies, however it dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def exit_on_sigterm():
    """make or CI stopping the suite with SIGTERM still runs the cleanup
    (finally: blocks power the guests off)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


VAL_RE = re.compile(r"^==KP-VAL (\S+?)=(.*)==$", re.M)


# What differs between the architectures of the guests: QEMU, its machine
# and CPU options, the console, and how /init gets the host's commands (a
# second 16550 UART on x86-64; arm64's virt machine has one PL011 only, so
# a virtio console there).
ARCHES = {
    "amd64": {"qemu": "qemu-system-x86_64", "machine": [], "console": "ttyS0", "cmd": "ttyS1"},
    "arm64": {"qemu": "qemu-system-aarch64", "machine": ["-M", "virt"], "console": "ttyAMA0",
              "cmd": "hvc0"},
}


def boot_oopsed(guest):
    """Why the guest's own kernel died while booting ("Oops: int3 ...",
    the first such console line), or None: under TCG a kernel can oops on
    its own while it patches its text (lab.md), which is no failure of
    what the suite tests, and the guest is booted once more."""
    try:
        with open(guest.log, errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    if "==KP-BOOTED==" in text or "==KP-READY==" in text:
        return None
    for line in text.splitlines():
        if "Oops:" in line or "Kernel panic" in line or "BUG:" in line:
            return line.strip()[:160]
    return None


def boot(make, marker, timeout):
    """(guest, reached): a guest from make() started and waited on until
    marker, booted once more when its kernel died before it
    (boot_oopsed()); why is that death's console line, else None."""
    why = None
    for attempt in (1, 2):
        g = make()
        try:
            g.start()
            ok = g.wait_for(marker, timeout)
        except BaseException:
            g.stop()
            raise
        oops = None if ok or attempt == 2 else boot_oopsed(g)
        if not oops:
            return g, ok, why
        why = oops
        g.stop()


def drain(sock):
    """Reads a socket until it closes (a daemon thread's body)."""
    try:
        while sock.recv(65536):
            pass
    except OSError:
        pass


class Guest:
    """One QEMU guest. name is used for the files in build/vm/."""

    def __init__(self, name, cpu, initrd, vmlinuz, late_fwcfg=False, memory=512, extra=(),
                 arch="amd64", share=None, append="", console_input=False):
        self.name = name
        self.extra = list(extra)  # more QEMU arguments (devices)
        self.arch = ARCHES[arch]
        self.cpu = cpu
        self.initrd = initrd
        self.vmlinuz = vmlinuz
        self.late_fwcfg = late_fwcfg
        self.memory = memory
        self.share = share  # a host directory shared as virtio-9p "kpsnap"
        self.append = append  # more kernel command line
        # The console UART also takes input (a break, a sysrq key: panic's
        # "panic-break"): a socket whose output QEMU also logs to self.log.
        self.console_input = console_input
        self.log = os.path.join(BUILD, name + ".serial.log")
        self.out_img = os.path.join(BUILD, name + ".out.img")
        # Unix socket paths have a 108-byte limit: a deep checkout must not matter.
        self.sockdir = tempfile.mkdtemp(prefix="kpeek-vm-")
        self.mon_path = os.path.join(self.sockdir, "mon")
        self.cmd_path = os.path.join(self.sockdir, "cmd")
        self.con_path = os.path.join(self.sockdir, "con")
        self.proc = None
        self.mon = None
        self.cmdsock = None
        self.seq = 0
        self.dead = None  # reason once the guest is unusable

    def start(self):
        for p in (self.log, self.mon_path, self.cmd_path, self.out_img):
            if os.path.exists(p):
                os.unlink(p)
        # The output disk /init writes its files to (a tar archive at quit).
        with open(self.out_img, "wb") as f:
            f.truncate(OUT_DISK_MB << 20)
        a = self.arch
        append = "console=%s panic=-1 quiet kp_cmd=%s%s%s" % (
            a["console"], a["cmd"], " kp_fwcfg=late" if self.late_fwcfg else "",
            " " + self.append if self.append else "")
        argv = [a["qemu"]] + a["machine"] + [
            "-accel", "tcg", "-cpu", self.cpu,
            "-m", str(self.memory), "-smp", "2", "-display", "none", "-no-reboot",
            "-device", "vmcoreinfo", "-kernel", self.vmlinuz, "-initrd", self.initrd,
            "-append", append,
            # PCI devices spelt out: "if=virtio" and -virtfs mean MMIO ones on arm64.
            "-drive", "file=%s,format=raw,if=none,id=kpout" % self.out_img,
            "-device", "virtio-blk-pci,drive=kpout",
            "-monitor", "unix:%s,server=on,wait=off" % self.mon_path]
        if self.console_input:
            # Unconnected, the socket drops what the UART writes; the log
            # has all of it.
            argv += ["-chardev", "socket,id=kpcon,path=%s,server=on,wait=off,logfile=%s" % (
                self.con_path, self.log), "-serial", "chardev:kpcon"]
        else:
            argv += ["-serial", "file:" + self.log]
        if a["cmd"] == "ttyS1":
            argv += ["-serial", "unix:%s,server=on,wait=off" % self.cmd_path]
        else:
            argv += ["-chardev", "socket,id=kpcmd,path=%s,server=on,wait=off" % self.cmd_path,
                     "-device", "virtio-serial-pci", "-device", "virtconsole,chardev=kpcmd"]
        if self.share:
            argv += ["-fsdev", "local,id=kpsnap,path=%s,security_model=none" % self.share,
                     "-device", "virtio-9p-pci,fsdev=kpsnap,mount_tag=kpsnap"]
        argv += self.extra
        self.qemu_err = open(os.path.join(BUILD, self.name + ".qemu.log"), "w")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.qemu_err,
                                     stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
        self.t_start = time.monotonic()

    def text(self):
        try:
            with open(self.log, "rb") as f:
                return f.read().decode("utf-8", "replace").replace("\r", "")
        except FileNotFoundError:
            return ""

    def vals(self):
        return {m.group(1): m.group(2) for m in VAL_RE.finditer(self.text())}

    def wait_for(self, marker, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if marker in self.text():
                return True
            if self.proc.poll() is not None:
                self.dead = "QEMU exited with status %d before %s (see %s and %s)" % (
                    self.proc.returncode, marker, self.qemu_err.name, self.log)
                return False
            time.sleep(0.1)
        self.dead = "no %s within %d s (serial log %s)" % (marker, timeout, self.log)
        return False

    def _connect(self, path):
        deadline = time.monotonic() + 10
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
                return s
            except OSError:
                s.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    # --- guest commands over ttyS1
    def _send(self, line):
        """One command line to /init (connecting on first use)."""
        if self.cmdsock is None:
            self.cmdsock = self._connect(self.cmd_path)
        # " ;;" marks the end of the line: tests/vm/init joins the parts of
        # a line that one read returned short.
        self.cmdsock.sendall((line + " ;;\n").encode())

    def command(self, line, timeout=300):
        # A line the guest's UART garbled (its FIFO overruns when a loaded
        # host starves the TCG guest: "panic-key" was once read as "y") is
        # answered as an unknown command: sent again, once.
        for attempt in range(2):
            if self.dead:
                return False
            self.seq += 1
            mark = len(self.text())
            self._send(line)
            if not self.wait_for("==KP-DONE %d==" % self.seq, timeout):
                return False
            if "==KP-VAL error=unknown command" not in self.text()[mark:]:
                return True
        return True

    # --- QEMU human monitor
    def _mon_read(self, timeout):
        buf = b""
        deadline = time.monotonic() + timeout
        self.mon.settimeout(1)
        while not buf.endswith(b"(qemu) "):
            if time.monotonic() > deadline:
                raise RigError("monitor: no prompt within %d s" % timeout)
            try:
                chunk = self.mon.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                raise RigError("monitor: connection closed")
            buf += chunk
        return buf.decode("utf-8", "replace")

    def hmp(self, line, timeout=120):
        if self.mon is None:
            self.mon = self._connect(self.mon_path)
            self._mon_read(10)
        self.mon.sendall((line + "\n").encode())
        out = self._mon_read(timeout)
        # The monitor echoes the line with terminal escapes; keep what follows.
        out = out.rsplit("(qemu) ", 1)[0]
        out = out.split("\n", 1)[1] if "\n" in out else ""
        return out.strip()

    def dump(self, path, flag=None):
        """dump-guest-memory [flag] PATH; returns (seconds, error or None)."""
        if os.path.exists(path):
            os.unlink(path)
        t = time.monotonic()
        out = self.hmp("dump-guest-memory %s%s" % (flag + " " if flag else "", path), 300)
        dt = time.monotonic() - t
        # A full disk is the usual cause of a failed dump on a CI machine:
        # say how much room there was.
        st = os.statvfs(os.path.dirname(path) or ".")
        room = " (%d MB free in %s)" % (st.f_bavail * st.f_frsize >> 20, os.path.dirname(path))
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            return dt, "dump-guest-memory %s wrote nothing: %s%s" % (flag or "", out or "?", room)
        if "Error" in out:
            return dt, "dump-guest-memory %s: %s%s" % (flag or "", out, room)
        # e.g. "warning: guest note is not present" without VMCOREINFO: fine.
        return dt, None

    def quit(self):
        """/init's quit: its files onto the output disk, then power off.
        Returns the files ({name: bytes}) or raises RigError."""
        if not self.command("quit", 120):
            raise RigError("quit: %s" % self.dead)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            pass
        return read_out_disk(self.out_img)

    def panic(self, path, timeout=180, command="panic"):
        """/init's panic (or crash: kp_crash.ko's panic(); panic-key: the
        keyboard's alt-sysrq-c, a panic in its interrupt handler; panic-nmi:
        QEMU's NMI with kernel.unknown_nmi_panic): its
        files onto the output disk, then the crash. Once the console says
        the panic ended, the stopped guest is dumped (ELF) to path. Returns
        (files, console text of the panic) or raises RigError."""
        if self.dead:
            raise RigError("panic: %s" % self.dead)
        mark = len(self.text())
        if command == "panic-key":
            if not self.command(command):
                raise RigError("panic-key: %s" % self.dead)
            self.hmp("sendkey alt-sysrq-c")
        elif command == "panic-nmi":
            # An NMI to every CPU (x86-64): with kernel.unknown_nmi_panic
            # the first to take it panics in NMI context, the others stop
            # there (nmi_panic_self_stop()).
            if not self.command(command):
                raise RigError("panic-nmi: %s" % self.dead)
            self.hmp("nmi")
        elif command == "panic-break":
            # A break on the console UART, then "c" within its 5 s: the
            # UART's interrupt handler runs sysrq c (uart_handle_break(),
            # CONFIG_MAGIC_SYSRQ_SERIAL). Connected, the socket gets the
            # console's output too: drained, or the UART would stall.
            if not self.console_input:
                raise RigError("panic-break: the console takes no input")
            if not self.command("panic-key"):
                raise RigError("panic-break: %s" % self.dead)
            con = self._connect(self.con_path)
            threading.Thread(target=drain, args=(con,), daemon=True).start()
            self.hmp("chardev-send-break kpcon")
            time.sleep(0.5)
            con.sendall(b"c")
        else:
            self._send(command)  # no answer: the guest crashes
        if not self.wait_for("end Kernel panic", timeout):
            raise RigError("panic: no end of the kernel panic on the console (%s)" % self.dead)
        self.hmp("stop")
        _, err = self.dump(path)
        if err:
            raise RigError("panic: dump: %s" % err)
        text = self.text()
        start = text.rfind("Kernel panic - not syncing")
        # From the record that started it: the last lines before the panic;
        # an OOM's report (the task list) from the command on.
        files = read_out_disk(self.out_img)
        lo = max(0, start - 4000)
        return files, text[min(lo, mark) if command == "oom" else lo:]

    def kdump(self, command, timeout=600):
        """/init's files onto the output disk, then the crash command
        (panic, oops) with a crash kernel loaded (/init's kdump): the crash
        kernel saves the vmcore to the guest's other disks and powers off.
        Returns (files, console text from the crash on) or raises
        RigError."""
        if self.dead:
            raise RigError("kdump: %s" % self.dead)
        mark = len(self.text())
        self._send(command)  # no answer: the guest crashes into the crash kernel
        if not self.wait_for("==KP-KDUMP-SAVED==", timeout):
            raise RigError("kdump: the crash kernel did not save the vmcore (%s)" % self.dead)
        try:
            self.proc.wait(60)  # /init powers the crash kernel off
        except subprocess.TimeoutExpired:
            pass
        return read_out_disk(self.out_img), self.text()[mark:]

    def stop(self):
        """Powers the guest off: the monitor, else SIGKILL."""
        try:
            if self.proc is not None and self.proc.poll() is None:
                try:
                    self.hmp("quit", 5)
                except (OSError, RigError):
                    pass  # QEMU closes the monitor as it quits
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
                if self.proc.poll() is None:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            for s in (self.mon, self.cmdsock):
                if s:
                    s.close()
            self.mon = self.cmdsock = None
            if getattr(self, "qemu_err", None):
                self.qemu_err.close()
            shutil.rmtree(self.sockdir, ignore_errors=True)


def read_out_disk(path):
    """The tar archive /init wrote at the start of its output disk."""
    try:
        with tarfile.open(path, "r:") as t:
            files = {}
            for m in t.getmembers():
                if m.isfile():
                    files[os.path.basename(m.name)] = t.extractfile(m).read()
            return files
    except (OSError, tarfile.TarError) as e:
        raise RigError("%s: no tar archive from the guest: %s" % (path, e))


# ---------------------------------------------------------------- ELF dumps

class ElfDump:
    """Just enough of an ELF core to read VMCOREINFO and physical memory,
    independently of libkpeek (the suite's own ground truth)."""

    def __init__(self, path):
        self.f = open(path, "rb")
        h = self.f.read(64)
        if h[:4] != b"\x7fELF" or h[4] != 2:
            raise RigError("%s: not an ELF64 file" % path)
        phoff, = struct.unpack_from("<Q", h, 32)
        phentsize, phnum = struct.unpack_from("<HH", h, 54)
        self.f.seek(phoff)
        ph = self.f.read(phentsize * phnum)
        self.loads = []
        self.notes = []
        for i in range(phnum):
            p_type, _flags, off, _va, pa, filesz, _memsz, _al = struct.unpack_from(
                "<IIQQQQQQ", ph, i * phentsize)
            if p_type == 1:
                self.loads.append((pa, filesz, off))
            elif p_type == 4:
                self.f.seek(off)
                self._parse_notes(self.f.read(filesz))
        self.vmcoreinfo = {}
        for name, desc in self.notes:
            if name == b"VMCOREINFO":
                for line in desc.decode("ascii", "replace").split("\n"):
                    k, sep, v = line.partition("=")
                    if sep:
                        self.vmcoreinfo[k] = v.strip("\0")

    def _parse_notes(self, data):
        i = 0
        while i + 12 <= len(data):
            namesz, descsz, _type = struct.unpack_from("<III", data, i)
            i += 12
            name = data[i:i + namesz].rstrip(b"\0")
            i += (namesz + 3) & ~3
            desc = data[i:i + descsz]
            i += (descsz + 3) & ~3
            self.notes.append((name, desc))

    def file_offset(self, addr, size):
        """Where physical addr..addr+size is in the file (one PT_LOAD)."""
        for pa, filesz, off in self.loads:
            if pa <= addr and addr + size <= pa + filesz:
                return off + addr - pa
        raise RigError("physical 0x%x (%d bytes) not in the dump" % (addr, size))

    def read_phys(self, addr, size):
        self.f.seek(self.file_offset(addr, size))
        return self.f.read(size)

    def close(self):
        self.f.close()


def kimage_phys(vaddr, phys_base):
    """Physical address of a kernel-image address (__START_KERNEL_map mapping)."""
    return (vaddr - START_KERNEL_MAP + phys_base) & MASK64


# ---------------------------------------------------------------- kdump files

KDUMP_COMPRESSION = {0x1: "zlib", 0x2: "lzo", 0x4: "snappy", 0x20: "zstd"}


def kdump_header(path):
    """What a kdump-compressed file in the standard layout says of itself,
    independently of libkpeek: {"compression", "dump_level", "ram_pages",
    "dumped_pages", "excluded_pfn"} (the two bitmaps after the sub-header:
    pages of RAM, and pages written; excluded_pfn is one page in the first
    and not the second, from the middle of RAM, or None)."""
    with open(path, "rb") as f:
        h = f.read(448)
        if len(h) < 448 or h[:8] != b"KDUMP   ":
            raise RigError("%s: no KDUMP signature" % path)
        # struct disk_dump_header: signature[8], header_version, new_utsname
        # (6 x 65), struct timeval (8-aligned, at 408), then status at 424.
        status, block_size, sub_hdr_size, bitmap_blocks = struct.unpack_from("<IiiI", h, 424)
        if block_size != 4096 or not 0 < sub_hdr_size < 1024 or not 0 < bitmap_blocks < 1 << 16:
            raise RigError("%s: implausible header (block_size %d, sub_hdr_size %d, bitmap_blocks %d)" % (
                path, block_size, sub_hdr_size, bitmap_blocks))
        f.seek(block_size)
        _phys_base, dump_level = struct.unpack("<Qi", f.read(12))
        f.seek(block_size * (1 + sub_hdr_size))
        bm = f.read(bitmap_blocks * block_size)
        half = len(bm) // 2
        comp = [name for bit, name in KDUMP_COMPRESSION.items() if status & bit]
        ram = int.from_bytes(bm[:half], "little")
        excl = ram & ~int.from_bytes(bm[half:], "little")
        mid = excl >> (half * 4)  # bits from the middle of the bitmap up
        excluded_pfn = None
        if mid:
            excluded_pfn = half * 4 + (mid & -mid).bit_length() - 1
        elif excl:
            excluded_pfn = (excl & -excl).bit_length() - 1
        return {"compression": comp[0] if len(comp) == 1 else "none" if not comp else "+".join(comp),
                "dump_level": dump_level,
                "ram_pages": bin(int.from_bytes(bm[:half], "little")).count("1"),
                "dumped_pages": bin(int.from_bytes(bm[half:], "little")).count("1"),
                "excluded_pfn": excluded_pfn}


# ---------------------------------------------------------------- running kpeek

class Run(tuple):
    """kpeek's (rc, stdout, stderr), and .args, the arguments it ran with
    (the suite checks every --json output against its command's schema)."""
    def __new__(cls, rc, out, err, args=None):
        r = super().__new__(cls, (rc, out, err))
        r.args = args
        return r


def run_kpeek(kpeek, args, timeout=300):
    """Run(rc, stdout, stderr) of one host-side kpeek run."""
    if not kpeek:
        return Run(127, "", "no kpeek binary (build/kpeek, build-asan/kpeek)\n")
    try:
        r = subprocess.run([kpeek] + args, capture_output=True, text=True,
                           errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)
        return Run(r.returncode, r.stdout, r.stderr, list(args))
    except subprocess.TimeoutExpired:
        return Run(124, "", "timed out after %d s\n" % timeout)
    except OSError as e:  # e.g. the binary being relinked by make right now
        return Run(126, "", "cannot run %s: %s\n" % (kpeek, e))
