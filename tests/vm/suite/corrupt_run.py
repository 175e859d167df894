# SPDX-License-Identifier: MIT
# Bounded runs of kpeek on the damaged dumps of corrupt.py: a time limit and
# a peak-RSS limit per run (a damaged dump must not make kpeek hang or grow),
# and SetupError for a case whose damage could not be made.
import os
import signal
import subprocess
import sys
import time

from .common import notes, ran


TIMEOUT = 60          # a damaged dump must not make kpeek hang: seconds
# Peak RSS of one kpeek run on a damaged dump (the plain build: ASan's
# shadow and quarantine say nothing of kpeek's own use): at most that of
# the same command on the intact dump plus EXTRA_RSS_KB, the room for the
# paths a damage takes (a finding's symbol loads the modules' symbols:
# check tasks goes from 20 to 51 MiB on 7.2), not for an allocation a
# damaged count or size drives. The runs on kpeek's snapshots, which have
# no intact twin: at most MAX_RSS_KB.
EXTRA_RSS_KB = 64 * 1024
MAX_RSS_KB = 128 * 1024


class SetupError(Exception):
    pass


# Runs a program and writes its peak RSS (KiB) to the file descriptor of
# argv[1]: a small process between the suite and kpeek, since ru_maxrss of
# a child forked from the suite's own large process counts the suite's
# pages too. Exits as the program did (its signal too).
RSS_HELPER = """import os, signal, sys
fd = int(sys.argv[1])
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, st, ru = os.wait4(pid, 0)
os.write(fd, b"%d\\n" % ru.ru_maxrss)
if os.WIFSIGNALED(st):
    signal.signal(os.WTERMSIG(st), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(st))
sys.exit(os.waitstatus_to_exitcode(st))
"""


def run_bounded(kpeek, args):
    """(rc, stdout, stderr, peak RSS in KiB, seconds) of one kpeek run,
    killed after TIMEOUT seconds (rc 124)."""
    if not kpeek:
        return 127, "", "no kpeek binary (build/kpeek)\n", 0, 0.0
    t0 = time.monotonic()
    r, w = os.pipe()
    try:
        p = subprocess.Popen([sys.executable, "-S", "-I", "-c", RSS_HELPER, str(w), kpeek] + args,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             pass_fds=(w,), start_new_session=True)
    except OSError as e:
        os.close(r)
        return 126, "", "cannot run %s: %s\n" % (kpeek, e), 0, 0.0
    finally:
        os.close(w)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the helper's session: kpeek too
        out, err = p.communicate()
        rc = 124
    with os.fdopen(r, "rb") as f:
        rss = f.read().strip()
    return (rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
            int(rss) if rss.isdigit() else 0, time.monotonic() - t0)


class Spent:
    """The kpeek runs of one guest's corrupt checks: one NOTE line with
    their count, seconds and the largest peak RSS, kept up to date."""

    def __init__(self, name):
        self.name, self.n, self.secs, self.rss, self.at = name, 0, 0.0, 0, None
        self.seen = set()  # the intact runs counted

    def add_intact(self, fut):
        if id(fut) not in self.seen:
            self.seen.add(id(fut))
            self.add(fut.result()[4], 0)

    def add(self, secs, rss):
        self.n, self.secs, self.rss = self.n + 1, self.secs + secs, max(self.rss, rss)
        line = "%s corrupt checks: %d kpeek runs, %.1f s in all, peak RSS on a damaged dump at most %d KiB" % (
            self.name, self.n, self.secs, self.rss)
        if self.at is None:
            self.at = len(notes)
            notes.append(line)
        else:
            notes[self.at] = line


def bounded(ck, spent=None, intact=None):
    """A check of a run_bounded result: an answer within TIMEOUT seconds
    and a bounded peak RSS (intact: the future of the same command's
    run_bounded on the intact dump, else MAX_RSS_KB), then ck on (rc,
    stdout, stderr)."""
    def wrapped(res, c):
        if len(res) != 5:
            return ck(res, c)  # a setup failure's (None, "", why)
        rc, out, err, rss, secs = res
        if spent:
            spent.add(secs, rss)
        if rc == 124:
            return False, "no answer within %d s (killed)" % TIMEOUT
        limit, of = MAX_RSS_KB, "the bound for snapshots"
        if intact is not None:
            irc, _, ierr, irss, _ = intact.result()
            if spent:
                spent.add_intact(intact)
            if irc not in (0, 1, 2) or not irss:
                return False, "the same command on the intact dump: exit %s, peak RSS %s KiB: %s" % (
                    irc, irss, ierr.strip()[:300])
            limit, of = irss + EXTRA_RSS_KB, "%d KiB on the intact dump" % irss
        if not rss or rss > limit:
            return False, "peak RSS %d KiB, more than %d KiB (%s); %s" % (rss, limit, of, ran((rc, out, err)))
        return ck((rc, out, err), c)
    return wrapped
