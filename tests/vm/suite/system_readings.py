# SPDX-License-Identifier: MIT
# What the system checks (system.py) share: the sources they run on, the
# meminfo keys and tolerances, the names of the kernel's flags and states,
# the guest's readings around a dump or a live run, and the verdict.
import json
import re

import truth as T

from .common import ran
from .process_truth import Workload

# The sources the system commands run on: live, and one dump of each kind
# (ELF and kdump-compressed) of each guest; the other kinds differ from
# these in how pages are read, which the rest of the suite compares.
SOURCES = ("live", "elf", "kdump")
KP0 = {"name": "kp0", "mtu": 1400, "mac": "02:6b:70:00:00:01",
       "addrs": {"10.77.0.1/24", "fd77::1/64"}}
# The meminfo lines the issue names: within 2% or 2 MB of the readings.
BIG = ("MemFree", "Cached", "Slab", "SUnreclaim", "KernelStack", "PageTables", "Shmem", "AnonPages")
# Lines that are counts (HugePages_*) or sizes fixed at boot: exactly as read.
EXACT = ("MemTotal", "SwapTotal", "CommitLimit", "HugePages_Total", "HugePages_Free", "HugePages_Rsvd",
         "HugePages_Surp", "Hugepagesize", "Hugetlb", "CmaTotal", "HardwareCorrupted")
# Lines a process's own memory moves by its size (its anonymous pages and
# their LRU lists, the files it maps, the private memory it commits, which
# kpeek, allocating with malloc, touches): live, kpeek's own maximum
# resident set widens their bounds in the direction it moves them (down for
# the free ones). Its page tables and kernel stack stay within the 2 MB.
OWN_UP = ("AnonPages", "Active", "Inactive", "Active(anon)", "Inactive(anon)", "Mapped", "Committed_AS")
OWN_DOWN = ("MemFree", "MemAvailable")
MIN_KEYS = 20
# ss's names of /proc/net/tcp's st (include/net/tcp_states.h)
TCP_STATES = {1: "ESTAB", 2: "SYN-SENT", 3: "SYN-RECV", 4: "FIN-WAIT-1", 5: "FIN-WAIT-2", 6: "TIME-WAIT",
              7: "UNCONN", 8: "CLOSE-WAIT", 9: "LAST-ACK", 10: "LISTEN", 11: "CLOSING"}
NET_FILES = {"tcp": "tcp", "tcp6": "tcp", "udp": "udp", "udp6": "udp", "raw": "raw", "raw6": "raw"}
UNIX_TYPES = {1: "u_str", 2: "u_dgr", 5: "u_seq"}
SO_ACCEPTCON = 0x10000       # /proc/net/unix Flags of a listening socket
SS_CONNECTED = 3             # /proc/net/unix St
IFF_RUNNING = 0x40           # from the operstate (dev_get_flags()), never in dev->flags
FLAG_NAMES = ["UP", "BROADCAST", "DEBUG", "LOOPBACK", "POINTOPOINT", "NOTRAILERS", "RUNNING", "NOARP",
              "PROMISC", "ALLMULTI", "MASTER", "SLAVE", "MULTICAST", "PORTSEL", "AUTOMEDIA", "DYNAMIC"]


class MissingTruth(Exception):
    pass


def get(files, name):
    if name not in files:
        raise MissingTruth("the guest wrote no %s" % name)
    return files[name].decode("utf-8", "replace")


class Readings:
    """The names of the guest's readings around one source (see the header)."""

    def __init__(self, run, source, check):
        if source == "live":
            self.full = ("live-sys", "live-sys-after")
            self.counters = ("live.%s.%%s-pre" % check, "live.%s.%%s-post" % check)
            self.rusage = "live.%s.rusage" % check
        else:
            _, pre, post = run.dumps[source]
            self.full = (pre, post)
            self.counters = ("sys.%s.%%s" % pre, "sys.%s.%%s-first" % post)
            self.rusage = None

    def counter(self, files, what):
        return [get(files, c % what) for c in self.counters]

    def sys(self, files, what):
        return [get(files, "sys.%s.%s" % (t, what)) for t in self.full]

    def own_rss(self, files):
        """kpeek's maximum resident set (kB) as the guest kernel accounted
        it, live; 0 on a dump."""
        if not self.rusage:
            return 0
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", get(files, self.rusage))
        if not m:
            raise MissingTruth("no maximum resident set size in %s" % self.rusage)
        return int(m.group(1))


def guarded(check, fn):
    """A check of one source: a failure naming why it cannot run when the
    workload or a reading is missing."""
    def wrap(run, source):
        def ck(res, c):
            w = Workload.of(run)
            if w.why:
                return False, w.why
            try:
                return fn(res, c, w, Readings(run, source, check), run)
            except (MissingTruth, T.TruthError) as e:
                return False, "no ground truth: %s" % e
        return ck
    return wrap


def json_doc(res, key):
    rc, out, err = res
    try:
        doc = json.loads(out) if rc == 0 else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get(key), (list, dict)):
        return None, "expected kpeek's --json output with \"%s\", %s:\n%s" % (key, ran(res), out[:800])
    if err.strip():
        return None, "exit 0 with stderr: %s" % err.strip()[:800]
    return doc, None


def verdict(problems, what):
    if problems:
        return False, "%d differences from %s:\n%s" % (len(problems), what, "\n".join(problems[:60]))
    return True, ""


def bracket(got, a, b, tol=0):
    return min(a, b) - tol <= got <= max(a, b) + tol
