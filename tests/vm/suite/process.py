# SPDX-License-Identifier: MIT
# One process in depth (issue 27): ps -a, env, rd --pid, maps, files, status
# and mount of the processes tests/vm/kp_proc.c starts in every main guest
# (its roles: args, title, retitle, files, cred, caps, ns, nschild, cgroup,
# userns; and PID 1, the guest's /init shell, and kp_threads), against what
# the guest's /proc showed of them: kp_proc truth writes proc.TAG.PID.* with
# every truth reading, so a dump is compared with the readings TAG and
# TAG-after around it, and the live commands with the readings live and
# live-after around them (tests/vm/init proc_live_commands). The workload
# sleeps, so both readings agree; PID 1 is the shell taking them, so where
# they differ (its context switches, how far it read its script) a value in
# between is right. Also the errors for a kernel thread (PID 2), whose open
# files (none: kthreadd shares init_task's empty fd table) are compared with
# its /proc/2/fd, and for a PID that does not exist. On a dump that lacks
# pages the kernel uses (makedumpfile -d 31 of a kernel it does not know), a
# PID whose data kpeek says was excluded is a skipped entry, and what it did
# print is still compared; makedumpfile -d 31 leaves out every user page, so
# arguments, environments and user memory are declared limits there.
import json
import re

from .common import LIVE_OBSERVERS, ran, udiff
from .results import limited, passed, skipped
from .process_truth import (EXCLUDED_RE, NO_STAT, RUNNING, SLEEPING, KINDS, KTHREAD, SB_GENERIC,
                            STATUS_KEYS, UNKNOWN_PID, Workload, d31, err_lines,
                            excluded_limit, guarded, in_between, left_out, per_pid, rss_slack_kb,
                            split_nul, subsequence, text_blocks, verdict)

# ---------------------------------------------------------------- the checks

@guarded
def ck_ps_args(res, c, w, t, source):
    """ps -a --json: each task's args as /proc/PID/cmdline (NUL-separated),
    absent for kernel threads; every process of the workload listed."""
    rc, out, err = res
    try:
        rows = json.loads(out)["tasks"]
    except (ValueError, KeyError, TypeError) as e:
        return False, "not ps --json output (%s), %s" % (e, ran(res))
    pre, post = t.cmdlines()
    by_pid = {int(r["pid"]): r for r in rows if isinstance(r, dict) and "pid" in r}
    user = [p for p, r in by_pid.items() if r.get("kthread") is False and p in pre and p in post]
    if d31(source):
        # No user page in the dump: no arguments, and kpeek says why.
        got = [p for p in user if by_pid[p].get("args") is not None]
        if rc == 2 and not got and EXCLUDED_RE.search(err):
            return limited("no task's arguments: %s" % err.strip().split("\n")[0])
        return False, ("expected exit 2, args null for every user task and stderr saying their "
                       "pages were excluded (makedumpfile -d 31), %s; tasks with args: %s" % (ran(res), got))
    if rc != 0:
        return False, ran(res)
    problems, compared, skips = [], 0, []
    for pid in sorted(set(pre) & set(post)):
        (comm, cmd), (_, cmd2) = pre[pid], post[pid]
        r = by_pid.get(pid)
        if r is None:
            if pid == 1 or pid in w.roles.values():
                problems.append("pid %d %r: not listed" % (pid, comm))
            continue
        if cmd != cmd2 or comm in LIVE_OBSERVERS + ("kp_proc",):
            skips.append("pid %d %r: its cmdline changed between the readings" % (pid, comm))
            continue
        compared += 1
        if not cmd:
            if r.get("kthread") is not True and "args" in r:
                problems.append("pid %d %r: args %r, /proc/%d/cmdline is empty" % (pid, comm, r["args"], pid))
            elif r.get("kthread") is True and "args" in r:
                problems.append("pid %d %r: a kernel thread with args %r" % (pid, comm, r["args"]))
            continue
        want = split_nul(cmd)
        if r.get("args") != want:
            problems.append("pid %d %r: args %s, /proc/%d/cmdline %s" % (
                pid, comm, json.dumps(r.get("args")), pid, json.dumps(want)))
    return verdict(problems, compared, skips)


@guarded
def ck_env(res, c, w, t, source):
    """env --json PIDS: each environment as /proc/PID/environ."""
    pids = w.pids
    if d31(source):
        return excluded_limit(res, pids, "environment")
    rc, out, err = res
    try:
        got = per_pid(json.loads(out), "env")
    except ValueError as e:
        return False, "not env --json output (%s), %s" % (e, ran(res))
    problems = ["stderr: " + x for x in err_lines(err)] + ([ran(res)] if rc != 0 else [])
    for pid in pids:
        a, b = t.both(pid, "environ")
        g = got.get(pid, {}).get("env")
        if g not in (split_nul(a), split_nul(b)):
            problems.append("pid %d: env differs from /proc/%d/environ:\n%s" % (
                pid, pid, udiff(split_nul(a), g if isinstance(g, list) else [repr(g)])))
    return verdict(problems, len(pids))


@guarded
def ck_rd_args(res, c, w, t, source):
    """rd --pid ARGS -a --json ARG_START: the first string of /proc/PID/cmdline."""
    pid = w.roles["args"]
    a, b = t.both(pid, "cmdline")
    rc, out, err = res
    try:
        doc = json.loads(out) if rc == 0 else None
    except ValueError:
        doc = None
    want = split_nul(a)[0]
    if isinstance(doc, dict) and doc.get("string") == want and int(doc.get("pid", -1)) == pid and \
            int(str(doc.get("address")), 0) == w.arg_start:
        return True, ""
    return False, "expected {pid: %d, address: 0x%x, string: %r} (/proc/%d/cmdline's first string), %s:\n%s" % (
        pid, w.arg_start, want, pid, ran(res), out[:1000])


@guarded
def ck_rd_env(res, c, w, t, source):
    """rd --pid ARGS -w 1 --json ENV_START LEN: the bytes of
    /proc/PID/environ (more than a page)."""
    pid = w.roles["args"]
    a, b = t.both(pid, "environ")
    rc, out, err = res
    try:
        got = bytes.fromhex(json.loads(out)["bytes"]) if rc == 0 else None
    except (ValueError, KeyError, TypeError):
        got = None
    if got == a:
        return True, ""
    if got is None:
        return False, "expected the %d bytes of /proc/%d/environ, %s:\n%s" % (len(a), pid, ran(res), out[:500])
    first = next((i for i in range(min(len(a), len(got))) if a[i] != got[i]), min(len(a), len(got)))
    return False, "%d bytes, /proc/%d/environ %d; first difference at 0x%x (address 0x%x): %r, /proc %r" % (
        len(got), pid, len(a), first, w.env_start + first, got[first:first + 16], a[first:first + 16])


@guarded
def ck_maps(res, c, w, t, source):
    """maps PIDS: each process's lines exactly as /proc/PID/maps."""
    rc, out, err = res
    blocks = text_blocks(out, w.pids)
    lost = left_out(err, w.pids, c)
    problems = ["stderr: " + x for x in err_lines(err) if x not in lost.values()] + \
        ([ran(res)] if rc != 0 and len(err_lines(err)) != len(lost) else [])
    skips, compared = [], 0
    for pid in w.pids:
        a, b = (x.decode("utf-8", "surrogateescape").split("\n")[:-1] for x in t.both(pid, "maps"))
        g = blocks.get(pid)
        if pid in lost:
            # What it printed before or around the pages it lacked must
            # still be the kernel's lines.
            skips.append("pid %d: %s" % (pid, lost[pid]))
            if g and not subsequence(g, a) and not subsequence(g, b):
                problems.append("pid %d (incomplete): lines /proc/%d/maps does not have:\n%s" % (pid, pid, udiff(a, g)))
            continue
        compared += 1
        if g is None:
            problems.append("pid %d: no block in the output" % pid)
        elif g not in (a, b):
            problems.append("pid %d:\n%s" % (pid, udiff(a, g)))
    return verdict(problems, compared, skips)


def fdinfo(block):
    """{key: value} of one fd's lines of proc.TAG.PID.fds."""
    out = {}
    for line in block[1:]:
        k, sep, v = line.partition(":")
        if sep and k not in out:
            out[k] = v.strip()
    return out


def truth_fds(raw):
    """{fd: {target, flags, pos, inode, kind}} of proc.TAG.PID.fds."""
    fds, cur = {}, None
    for line in raw.decode("utf-8", "surrogateescape").split("\n"):
        m = re.match(r"^== (\d+) (.*)$", line)
        if m:
            cur = [line]
            fds[int(m.group(1))] = (m.group(2), cur)
        elif cur is not None:
            cur.append(line)
    out = {}
    for fd, (target, block) in fds.items():
        i = fdinfo(block)
        mode = int(i["stat-mode"], 8) if "stat-mode" in i else None
        out[fd] = {"target": target, "flags": int(i.get("flags", "-1"), 8), "pos": int(i.get("pos", "-1")),
                   # fdinfo's ino: (5.14+) is file_inode(); stat() of the link the same inode
                   "inode": int(i.get("ino", i.get("stat-ino", "-1"))),
                   "kind": NO_STAT if mode is None else KINDS.get(mode & 0o170000)}
    return out


def fd_diff(g, a, b):
    """What differs between kpeek's fd g and the readings a, b of it."""
    d = []
    for k in ("target", "kind", "flags", "pos", "inode"):
        if NO_STAT in (a[k], b[k]) or (k != "kind" and None in (a[k], b[k])):
            continue  # no stat() of the file in the reading
        if not in_between(g.get(k), a[k], b[k]):
            show = (lambda v: oct(v) if isinstance(v, int) else v) if k == "flags" else (lambda v: v)
            d.append("%s %s, /proc %s" % (k, show(g.get(k)), show(a[k]) if a[k] == b[k] else
                                          "%s..%s" % (show(a[k]), show(b[k]))))
    return d


@guarded
def ck_files(res, c, w, t, source):
    """files --json PIDS: each fd's target (readlink /proc/PID/fd/N), kind,
    flags and pos (/proc/PID/fdinfo/N) and inode. PID 1 is the shell that
    runs the commands: ash moves an fd it redirects for a command to fd 10
    or above (F_DUPFD_CLOEXEC) and back after it, so the fds it redirected
    around the reading or kpeek's own run (stdout and stderr of a live
    command, stdin of the read waiting for the host's next command at a
    dump) must show up at such a copy, or be a dup of another of its fds
    (the copy left out of a dump), and are not compared."""
    rc, out, err = res
    try:
        got = per_pid(json.loads(out), "files")
    except ValueError as e:
        return False, "not files --json output (%s), %s" % (e, ran(res))
    lost = left_out(err, w.pids, c)
    problems = ["stderr: " + x for x in err_lines(err) if x not in lost.values()] + \
        ([ran(res)] if rc != 0 and len(err_lines(err)) != len(lost) else [])
    skips, compared = [], 0
    for pid in w.pids:
        a, b = (truth_fds(x) for x in t.both(pid, "fds"))
        o = got.get(pid)
        if pid in lost:
            # Listed in part or not at all: what it listed is compared below
            # (an fd it could not read is not listed).
            skips.append("pid %d: %s" % (pid, lost[pid]))
            if o is None or not isinstance(o.get("files"), list) or o.get("complete") is True:
                continue
            a = {fd: v for fd, v in a.items() if fd in {int(f.get("fd", -1)) for f in o["files"]}}
            b = {fd: v for fd, v in b.items() if fd in a}
        elif o is None or not isinstance(o.get("files"), list):
            problems.append("pid %d: not listed" % pid)
            continue
        elif o.get("complete") is not True:
            problems.append("pid %d: complete %s" % (pid, o.get("complete")))
        g = {int(f["fd"]): f for f in o["files"] if isinstance(f, dict) and "fd" in f}
        copies = {f["target"] for fd, f in g.items() if fd > 10} if pid == 1 else set()
        # An fd the shell redirected is a dup of another of its fds (the
        # same struct file: fd 0 of "read <&3" is fd 3's), also where the
        # copy it saved is among the fds a dump left out.
        files = [f.get("file") for f in g.values()]
        dups = {fd for fd, f in g.items() if f.get("file") and files.count(f.get("file")) > 1} \
            if pid == 1 else set()
        for fd in sorted(set(a) | set(b) | set(g)):
            if fd not in a or fd not in b:
                if pid == 1 or fd in g:
                    (skips if pid == 1 else problems).append(
                        "pid %d fd %d: in %s reading of /proc only" % (pid, fd, "one" if fd in a or fd in b else "no"))
                else:
                    problems.append("pid %d fd %d: not listed (in one /proc reading)" % (pid, fd))
                continue
            if fd not in g:
                problems.append("pid %d fd %d %s: not listed" % (pid, fd, a[fd]["target"]))
                continue
            d = fd_diff(g[fd], a[fd], b[fd])
            if d and pid == 1 and (fd > 10 or a[fd]["target"] in copies or fd in dups):
                skips.append("pid 1 fd %d: redirected by the shell (%s)" % (fd, "; ".join(d)))
                continue
            compared += 1
            if d:
                problems.append("pid %d fd %d (%s): %s" % (pid, fd, a[fd]["target"], "; ".join(d)))
        if pid == 1:
            for fd in sorted(set(g) - set(a) - set(b)):
                if fd <= 10:
                    problems.append("pid 1 fd %d %s: not in /proc" % (fd, g[fd].get("target")))
    return verdict(problems, compared, skips)


def status_lines(raw):
    """[(key, value)] of /proc/PID/status."""
    out = []
    for line in raw.decode("utf-8", "surrogateescape").split("\n"):
        k, sep, v = line.partition(":\t")
        if sep:
            out.append((k, v))
        elif line.endswith(":"):
            out.append((line[:-1], ""))
    return out


@guarded
def ck_status(res, c, w, t, source):
    """status PIDS: every "Key:\tvalue" line kpeek prints equals the line of
    /proc/PID/status with that key, in its order, and every key it knows is
    printed; ns/NAME lines are the links of /proc/PID/ns, cgroup the 0::
    line of /proc/PID/cgroup (none without a cgroup2 mount)."""
    rc, out, err = res
    blocks = text_blocks(out, w.pids)
    lost = left_out(err, w.pids, c)
    problems = ["stderr: " + x for x in err_lines(err) if x not in lost.values()] + \
        ([ran(res)] if rc != 0 and len(err_lines(err)) != len(lost) else [])
    compared, skips = 0, []
    for pid in w.pids:
        g = blocks.get(pid)
        if pid in lost:
            # kpeek prints no line of a status it could not read whole
            # (with several PIDs, its "PID:" head only).
            skips.append("pid %d: %s" % (pid, lost[pid]))
            if g:
                problems.append("pid %d: a status block, and an error: %s" % (pid, lost[pid]))
            continue
        if g is None:
            problems.append("pid %d: no block in the output" % pid)
            continue
        sa, sb = (dict(status_lines(x)) for x in t.both(pid, "status"))
        order = [k for k, _ in status_lines(t.both(pid, "status")[0])]
        na, nb = ({ln.split(" ", 1)[0]: ln.split(" ", 1)[1] for ln in x.decode().splitlines()}
                  for x in t.both(pid, "ns"))
        ca, cb = ([ln[3:] for ln in x.decode("utf-8", "surrogateescape").splitlines() if ln.startswith("0::")]
                  for x in t.both(pid, "cgroup"))
        keys, ns = [], set()
        for line in g:
            k, sep, v = line.partition(":\t")
            if not sep:
                problems.append("pid %d: not a Key:\\tvalue line: %r" % (pid, line))
                continue
            compared += 1
            if k.startswith("ns/"):
                n = k[3:]
                ns.add(n)
                if n not in na or not in_between(v, na[n], nb.get(n)):
                    problems.append("pid %d: %s, /proc/%d/ns/%s -> %s" % (pid, line, pid, n, na.get(n)))
            elif k == "cgroup":
                if not ca or not in_between(v, "0::" + ca[0], "0::" + (cb or ca)[0]):
                    problems.append("pid %d: %r, /proc/%d/cgroup's v2 line %s" % (
                        pid, line, pid, "0::" + ca[0] if ca else "(none)"))
            elif k not in sa:
                problems.append("pid %d: %r, /proc/%d/status has no %s" % (pid, line, pid, k))
            else:
                keys.append(k)
                # PID 1 is the shell that reads /proc (tests/vm/init): it
                # waits on its reader, so /proc can only ever show it
                # sleeping, while kpeek (live, or a dump taken between two
                # of its commands) may catch it running; either is right.
                if pid == 1 and k == "State" and v in (RUNNING, SLEEPING):
                    continue
                # The same shell gets SIGCHLD (signal 17, bit 16) each time
                # one of its children exits (the readers, kpeek's wrappers),
                # pending until it next runs: either reading of it is right.
                # Live, the same shell runs the kpeek it waits for (kp(): its
                # heap holds the command and its output meanwhile, 5.10:
                # VmRSS 1920 kB between readings of 1860): its memory
                # lines are not compared then.
                if pid == 1 and c.live and (k.startswith("Vm") or k.startswith("Rss")):
                    continue
                if pid == 1 and k in ("SigPnd", "ShdPnd") and re.fullmatch(r"[0-9a-f]{16}", v) and \
                        int(v, 16) & ~SIGCHLD_BIT in {int(x, 16) & ~SIGCHLD_BIT for x in (sa[k], sb.get(k, sa[k]))}:
                    continue
                if not in_between(v, sa[k], sb.get(k), rss_slack_kb(t.files, k)):
                    problems.append("pid %d: %r, /proc %r" % (pid, line, "%s:\t%s" % (k, sa[k]) if sa[k] == sb.get(k)
                                                             else "%s:\t%s..%s" % (k, sa[k], sb.get(k))))
        missing = [k for k in STATUS_KEYS if k in sa and k not in keys]
        if missing:
            problems.append("pid %d: keys of /proc/%d/status not printed: %s" % (pid, pid, " ".join(missing)))
        if [k for k in order if k in keys] != keys:
            problems.append("pid %d: keys in another order than /proc/%d/status: %s" % (pid, pid, " ".join(keys)))
        if ns != set(na):
            problems.append("pid %d: ns lines for %s, /proc/%d/ns has %s" % (pid, sorted(ns), pid, sorted(na)))
        if ca and "cgroup" not in [ln.partition(":\t")[0] for ln in g]:
            problems.append("pid %d: no cgroup line, /proc/%d/cgroup has 0::%s" % (pid, pid, ca[0]))
    return verdict(problems, compared, skips)


SIGCHLD_BIT = 1 << 16     # signal N is bit N-1 of the /proc/PID/status masks


def mountinfo_fields(line):
    """(fields up to and including the source, super options) of a
    /proc/PID/mountinfo line."""
    p = line.split(" ")
    if "-" not in p[6:]:
        return None, None
    sep = p.index("-", 6)
    return p[:sep + 3], p[sep + 3] if len(p) > sep + 3 else ""


def generic_options(line):
    """The super options of a mountinfo line kpeek knows (SB_GENERIC), as
    the line starts with them."""
    _, sb = mountinfo_fields(line)
    out = []
    for o in (sb or "").split(","):
        if o not in SB_GENERIC:
            break
        if o != "mand":
            out.append(o)
    return out


def mount_line_matches(want, got):
    """kpeek's line got is /proc's line want: every field up to the source,
    and the super options kpeek knows."""
    wf, _ = mountinfo_fields(want)
    gf, gsb = mountinfo_fields(got)
    return gf is not None and wf == gf and gsb.split(",") == generic_options(want)


def ck_mount(role):
    """mount --pid PID: every field of each line up to and including the
    source as /proc/PID/mountinfo has it; the super options kpeek knows
    (ro/rw, sync, dirsync, lazytime) are what the line's super options
    start with."""
    @guarded
    def ck(res, c, w, t, source):
        pid = 1 if role == "init" else w.roles[role]
        rc, out, err = res
        lost = left_out(err, [pid], c)
        if lost and rc == 2 and not out.strip() and len(err_lines(err)) == 1:
            return skipped("the mounts of PID %d: %s" % (pid, lost[pid]))
        # The mount walk met a page the dump lacks (Ctx.partial) and left that
        # mount out, said in one line: what it printed must be /proc's lines
        # in order with some left out, each right, and the rest is a skipped
        # entry.
        cut = c.partial and rc == 2 and len(err_lines(err)) == 1 and \
            re.match(r"^kpeek: mount(?: --pid \d+)?: incomplete: .*exclud", err_lines(err)[0])
        if (rc != 0 or err.strip()) and not cut:
            return False, ran(res)
        g = out.split("\n")[:-1] if out.endswith("\n") else out.split("\n")
        g = [x for x in g if x] if cut else g
        truths = [x.decode("utf-8", "surrogateescape").split("\n")[:-1] for x in t.both(pid, "mountinfo")]
        best = None
        for want in truths:
            problems = []
            if (len(want) < len(g)) if cut else (len(want) != len(g)):
                problems.append("%d lines, /proc/%d/mountinfo %d" % (len(g), pid, len(want)))
            j = 0
            for i, y in enumerate(g):
                # Cut: the next of /proc's lines this one is (those between
                # were left out); else the line at the same place.
                k = j
                while cut and k < len(want) and not mount_line_matches(want[k], y):
                    k += 1
                x = want[k] if k < len(want) else want[j] if j < len(want) else ""
                if not mount_line_matches(x, y):
                    problems.append("line %d: %r\n    /proc: %r (super options kpeek knows: %s)" % (
                        i + 1, y, x, ",".join(generic_options(x))))
                j = k + 1 if k < len(want) else j + 1
            if not problems:
                return passed("", ["mounts of PID %d: %d of %d lines, the rest left out: %s" % (
                    pid, len(g), len(want), err_lines(err)[0])]) if cut else (True, "")
            best = best or problems
        return False, "mount --pid %d differs from /proc/%d/mountinfo:\n%s" % (pid, pid, "\n".join(best[:40]))
    return ck


def ck_kthread(cmd):
    """A command on PID 2, a kernel thread: exit non-zero and exactly one
    stderr line that says so."""
    @guarded
    def ck(res, c, w, t, source):
        pre, post = t.cmdlines()
        if KTHREAD not in pre or pre[KTHREAD] != ("kthreadd", b""):
            return False, "no ground truth: PID 2 is %r in the guest's /proc, not kthreadd" % (pre.get(KTHREAD),)
        rc, out, err = res
        lines = err_lines(err)
        if rc not in (0, None) and len(lines) == 1 and "kernel thread" in lines[0] and \
                re.search(r"\b2\b", lines[0]) and not out.strip():
            return True, ""
        return False, ("%s on PID 2 (kthreadd): expected exit non-zero, no output and one stderr line "
                       "saying it is a kernel thread, %s; %d stderr lines; stdout:\n%s" % (
                           cmd, ran(res), len(lines), out[:500]))
    return ck


@guarded
def ck_kthread_files(res, c, w, t, source):
    """files --json 2: kthreadd's open files, as its /proc/2/fd lists them
    (a kernel thread has an fd table: init_task's, empty)."""
    pre, post = t.cmdlines()
    if KTHREAD not in pre or pre[KTHREAD] != ("kthreadd", b""):
        return False, "no ground truth: PID 2 is %r in the guest's /proc, not kthreadd" % (pre.get(KTHREAD),)
    a, b = (truth_fds(x) for x in t.both(KTHREAD, "fds"))
    rc, out, err = res
    try:
        doc = json.loads(out) if rc == 0 and not err.strip() else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), list) or doc.get("complete") is not True:
        return False, "expected files --json of PID 2 (kthreadd), complete, %s:\n%s" % (ran(res), out[:500])
    problems = []
    g = {int(f["fd"]): f for f in doc["files"] if isinstance(f, dict) and "fd" in f}
    for fd in sorted(set(a) | set(b) | set(g)):
        if fd not in a or fd not in b or fd not in g:
            problems.append("fd %d: %s, /proc/2/fd: %s" % (fd, "listed" if fd in g else "not listed",
                                                         "in %s reading" % ("one" if fd in a or fd in b else "no")))
        else:
            problems.extend("fd %d: %s" % (fd, d) for d in fd_diff(g[fd], a[fd], b[fd]))
    if problems:
        return False, "kthreadd's files differ from /proc/2/fd:\n%s" % "\n".join(problems[:40])
    return True, ""


@guarded
def ck_unknown_pid(res, c, w, t, source):
    pre, post = t.cmdlines()
    if UNKNOWN_PID in pre or UNKNOWN_PID in post:
        return False, "no ground truth: PID %d exists in the guest" % UNKNOWN_PID
    rc, out, err = res
    lines = err_lines(err)
    if rc not in (0, None) and len(lines) == 1 and re.search(r"\b%d\b" % UNKNOWN_PID, lines[0]) and not out.strip():
        return True, ""
    return False, "expected exit non-zero, no output and one stderr line naming PID %d, %s; stdout:\n%s" % (
        UNKNOWN_PID, ran(res), out[:500])


def process_checks(run, source):
    """[(check name, kpeek args, check)] of one source. The live ones run
    in the guest (tests/vm/init proc_live_commands, the same names)."""
    w = Workload.of(run)
    pids = [str(p) for p in w.pids] if not w.why else ["1"]
    args = str(w.roles.get("args", 1))
    ns = str(w.roles.get("ns", 1))
    arg_start = "0x%x" % getattr(w, "arg_start", 0)
    env_start = "0x%x" % getattr(w, "env_start", 0)
    env_len = str(getattr(w, "env_end", 0) - getattr(w, "env_start", 0))
    return [
        ("proc-ps-args", ["ps", "-a", "--json"], ck_ps_args(run, source)),
        ("proc-env", ["env", "--json"] + pids, ck_env(run, source)),
        ("proc-rd-args", ["rd", "--pid", args, "-a", "--json", arg_start], ck_rd_args(run, source)),
        ("proc-rd-env", ["rd", "--pid", args, "-w", "1", "--json", env_start, env_len], ck_rd_env(run, source)),
        ("proc-maps", ["maps"] + pids, ck_maps(run, source)),
        ("proc-files", ["files", "--json"] + pids, ck_files(run, source)),
        ("proc-status", ["status"] + pids, ck_status(run, source)),
        ("proc-mount-init", ["mount", "--pid", "1"], ck_mount("init")(run, source)),
        ("proc-mount-ns", ["mount", "--pid", ns], ck_mount("ns")(run, source)),
        ("proc-kthread-env", ["env", str(KTHREAD)], ck_kthread("env")(run, source)),
        ("proc-kthread-maps", ["maps", str(KTHREAD)], ck_kthread("maps")(run, source)),
        ("proc-kthread-files", ["files", "--json", str(KTHREAD)], ck_kthread_files(run, source)),
        ("proc-kthread-rd", ["rd", "--pid", str(KTHREAD), "-a", "0x400000"], ck_kthread("rd --pid")(run, source)),
        ("proc-unknown-pid", ["maps", str(UNKNOWN_PID)], ck_unknown_pid(run, source)),
    ]
