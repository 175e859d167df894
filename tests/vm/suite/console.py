# SPDX-License-Identifier: MIT
# What the guest's console says of a crash: Call Trace frames, the oops' RIP
# and registers (the oracle of bt and panic).
import re


CONSOLE_TS = r"^\[\s*(\d+\.\d{6})\]\s*"
CONSOLE_TS_RAW = r"^(?:\[\s*\d+\.\d{6}\]\s*)?"


def frame_name(where, module):
    """A frame as the kernel prints it: "name+0xoff/0xsize [module]"."""
    return where + (" [%s]" % module if module else "")


# arm64 6.14+ marks where a frame came from after it: " (C)", " (P)", " (L)".
# An address in no symbol is printed bare ("? 0xffffffffc0240000": %pB of
# a module's freed or unnamed text).
CONSOLE_FRAME_RE = re.compile(CONSOLE_TS_RAW + r"(\? )?(\S+\+0x[0-9a-f]+/0x[0-9a-f]+|0x[0-9a-f]+)"
                              r"(?: \[(\S+)\])?(?: \([A-Z]\))?\s*$")


CONSOLE_RIP_RE = re.compile(CONSOLE_TS_RAW + r"RIP: 0010:(\S+\+0x[0-9a-f]+/0x[0-9a-f]+)(?: \[(\S+)\])?\s*$")
CONSOLE_USER_RIP_RE = re.compile(CONSOLE_TS_RAW + r"RIP: 0033:0x([0-9a-f]+)\s*$")


def console_trace(console, regs=None):
    """The reliable frames (no "? ") of the first "Call Trace:" on the
    console, as "name+0xoff/0xsize [mod]". An interrupt or exception frame
    the trace crosses (x86-64: show_regs() of the pt_regs found on the
    stack, "RIP: 0010:func+off/size" and the register lines after it) is
    the frame of its RIP; its registers (regs_of_line() names) are
    appended to the list regs if given. An interrupt from user mode ends
    the trace with the user registers ("RIP: 0033:0x..."), kpeek's last,
    user-mode frame: no frame here, its registers in regs."""
    lines = console.replace("\r", "").splitlines()
    out, inside, block = [], False, None
    for l in lines:
        if not inside:
            inside = re.match(CONSOLE_TS_RAW + r"Call [Tt]race:\s*$", l) is not None
            continue
        if re.match(CONSOLE_TS_RAW + r"</?(TASK|IRQ|NMI|SOFTIRQ|EOI)>\s*$", l):
            continue
        m = CONSOLE_RIP_RE.match(l)
        if m:
            out.append(frame_name(m.group(1), m.group(2)))
            block = {}
            if regs is not None:
                regs.append(block)
            continue
        m = CONSOLE_USER_RIP_RE.match(l)
        if m:
            block = {"rip": int(m.group(1), 16)}
            if regs is not None:
                regs.append(block)
            continue
        if block is not None and (re.match(CONSOLE_TS_RAW + r"Code: ", l) or CONSOLE_REG_RE.search(l)):
            block.update(regs_of_line(l))
            continue
        block = None
        m = CONSOLE_FRAME_RE.match(l)
        if not m:
            break
        if not m.group(1):
            out.append(frame_name(m.group(2), m.group(3)))
    return out


CONSOLE_REG_RE = re.compile(r"\b(RSP|EFLAGS|RAX|RBX|RCX|RDX|RSI|RDI|RBP|R\d\d): (?:[0-9a-f]{4}:)?([0-9a-f]{8,16})\b")


def regs_of_line(line):
    """The registers a show_regs() line prints, named as kpeek names them
    (r8, not R08)."""
    out = {}
    for name, value in CONSOLE_REG_RE.findall(line):
        name = name.lower()
        if re.match(r"r0\d$", name):
            name = "r" + name[2]
        out[name] = int(value, 16)
    return out


def console_oops(console):
    """The first oops on the console: its "RIP: 0010:..." as a frame name
    (None if there is none) and the registers show_regs() printed after
    it."""
    rip, out, inside = None, {}, False
    for l in console.replace("\r", "").splitlines():
        if not inside:
            inside = re.match(CONSOLE_TS_RAW + r"RIP: 0010:", l) is not None
            m = CONSOLE_RIP_RE.match(l)
            if m:
                rip = frame_name(m.group(1), m.group(2))
            continue
        found = regs_of_line(l)
        if not found:
            if out:
                break
            continue
        out.update(found)
    return rip, out


def same_regs(got, want):
    """Problems of kpeek's registers (name -> "0x...") against the
    console's (name -> int): every register the console printed."""
    return ["%s: kpeek %s, console 0x%x" % (name, got.get(name), value)
            for name, value in sorted(want.items())
            if got.get(name) is None or int(got[name], 16) != value]
