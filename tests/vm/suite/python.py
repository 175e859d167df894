# SPDX-License-Identifier: MIT
# The Python bindings (issue 30) on the elf and kdump dumps of every main
# guest, and live in each (tests/vm/init kpy): one python3
# process per source (tests/vm/pycheck.py: import kpeek from build/python,
# open the dump or /proc/kcore, read everything once) and ten checks of
# its JSON against the guest's own view around the dump: jiffies between
# the readings, for_each_task = the guest's threads (PIDs and comms),
# list_for_each_entry over modules = /proc/modules, linux_banner =
# /proc/version, prog.type().size = the CLI's sizeof, container_of round
# trips, an unknown symbol raises LookupError, address 0 raises FaultError
# (with the address), avenrun = /proc/loadavg,
# slab_cache_for_each_allocated_object(TCP) holds every TCP listener of
# every /proc/net/tcp reading of the guest (kp_net's stay open), and on the
# dumps Program.search of a variable of kp_args' environment where its
# /proc/PID/environ puts it. Where the kernel lacks
# data symbols (6.1 arm64: no CONFIG_KALLSYMS_ALL) the exception must say
# so: a declared limit (tests/vm/limits).
import json
import os
import subprocess

import truth as T

from .addr_objects import marker
from .addr_slab import TCP_LISTEN, sockets
from .common import HERE, INITIAL_JIFFIES, udiff
from .results import limited

PYTHON = "/usr/bin/python3"
TOP = os.path.dirname(os.path.dirname(HERE))
SOURCES = ("elf", "kdump")


def run_python(dump, kpeek, search=None, timeout=300):
    """(rc, stdout, stderr) of pycheck.py on one dump; search: PID:STRING
    for its Program.search part."""
    ext = os.path.join(TOP, "build", "python")
    if not os.path.exists(os.path.join(ext, "kpeek", "_kpeek.so")):
        return 127, "", "no %s/kpeek/_kpeek.so (make, with python3-dev)\n" % ext
    env = dict(os.environ, PYTHONPATH=ext, PYTHONDONTWRITEBYTECODE="1")
    try:
        r = subprocess.run([PYTHON, os.path.join(HERE, "pycheck.py"), dump, kpeek or "kpeek"] +
                           ([search] if search else []),
                           capture_output=True, text=True, errors="replace", timeout=timeout,
                           env=env, stdin=subprocess.DEVNULL)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return 124, "", "timed out after %d s\n" % timeout


def _part(res, key):
    """(value, None) or (None, why) of one part of pycheck's document."""
    rc, out, err = res
    try:
        doc = json.loads(out) if rc == 0 else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or key not in doc:
        return None, "pycheck.py exit %s, no %r in its output; stderr:\n%s" % (rc, key, err[-2000:])
    p = doc[key]
    if isinstance(p, dict) and "error" in p:
        return None, p["error"]
    return (p.get("value") if isinstance(p, dict) and "value" in p else p), None


def _needs_data_symbols(c, why):
    # The one limit: a kernel without CONFIG_KALLSYMS_ALL, said in the
    # exception's message.
    return c.run.no_data_symbols and "CONFIG_KALLSYMS_ALL" in why


def _checked(key, compare):
    def ck(res, c):
        value, why = _part(res, key)
        if why is not None:
            return limited(why) if _needs_data_symbols(c, why) else (False, why)
        try:
            return compare(value, c)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            return False, "pycheck.py's %s is not what it writes (%s: %s): %r" % (
                key, type(e).__name__, e, value)
    return ck


def _jiffies(got, c):
    lo, hi = c.pre["stamp"].jiffies, c.post["stamp"].jiffies
    if isinstance(got, int) and INITIAL_JIFFIES <= got and lo <= got <= hi:
        return True, ""
    return False, "prog['jiffies'] %r, expected in [%d, %d] (the guest's readings)" % (got, lo, hi)


def _tasks(rows, c):
    """Every thread in both readings, none in neither; comm the start of
    the name /proc shows (a worker's before its +/- work)."""
    pre, post = c.pre["threads"], c.post["threads"]
    problems, seen = [], set()
    for pid, tgid, comm in rows:
        seen.add(pid)
        if pid == 0:
            if comm != "swapper/0":
                problems.append("pid 0 is %r, expected swapper/0" % comm)
            continue
        ts = [t for t in (pre.get(pid), post.get(pid)) if t]
        if not ts:
            if comm not in c.transient:
                problems.append("pid %d %r is in neither /proc listing" % (pid, comm))
            continue
        if not any(t.name.startswith(comm) for t in ts) and comm not in c.transient:
            problems.append("pid %d: comm %r, /proc %s" % (pid, comm, sorted({t.name for t in ts})))
        if tgid not in {t.tgid for t in ts}:
            problems.append("pid %d: tgid %d, /proc %s" % (pid, tgid, sorted({t.tgid for t in ts})))
    for pid in sorted(set(pre) & set(post)):
        if pid not in seen and pre[pid].name not in c.transient:
            problems.append("pid %d %r is in both /proc listings, not in for_each_task" % (
                pid, pre[pid].name))
    if 0 not in seen:
        problems.append("no idle task (pid 0)")
    if problems:
        return False, "%d differences from /proc (of %d tasks):\n%s" % (
            len(problems), len(rows), "\n".join(problems[:40]))
    return True, ""


def _modules(got, c):
    options = [[m["name"] for m in c.pre["modules"]], [m["name"] for m in c.post["modules"]]]
    if got in options:
        return True, ""
    return False, "list_for_each_entry(struct module, &modules, list) differs from /proc/modules\n" + \
        udiff(options[0], got)


def _banner(got, c):
    want = T.text(c.files, "boot.version").rstrip("\n")
    if isinstance(got, str) and got.startswith("Linux") and got.rstrip("\n") == want:
        return True, ""
    return False, "prog.read(linux_banner) %r, /proc/version %r" % (got, want)


def _type_sizes(sizes, c):
    bad = ["%s: prog.type().size %s, kpeek print sizeof %s" % (t, p, k)
           for t, (p, k) in sorted(sizes.items()) if p != k or not p]
    return (False, "; ".join(bad)) if bad or not sizes else (True, "")


def _container_of(v, c):
    if v["tasks"] and not v["bad"]:
        return True, ""
    return False, "container_of(&task->tasks) of %d tasks: %s" % (v["tasks"], v["bad"][:10] or "no task")


def _raised(key, want, address=False):
    def ck(res, c):
        value, why = _part(res, key)
        if why is not None:
            return False, why
        if not isinstance(value, dict):
            return False, "pycheck.py's %s is not an object: %r" % (key, value)
        if value.get("raised") in want and not value.get("wrong") and \
                (not address or value.get("address") == 0):
            return True, ""
        return False, "expected %s%s, got %s" % ("/".join(want), " with address 0" if address else "", value)
    return ck


def _load(x):
    # /proc/loadavg (fs/proc/loadavg.c): LOAD_INT / LOAD_FRAC of avenrun +
    # FIXED_1/200 (rounding), fixed point with FSHIFT 11.
    x += (1 << 11) // 200
    return "%d.%02d" % (x >> 11, ((x & 2047) * 100) >> 11)


def _avenrun(got, c):
    loads = [_load(x) for x in got]
    a, b = c.pre["stamp"].loads, c.post["stamp"].loads
    if loads in (a, b):
        return True, ""
    # Live, pycheck.py runs seconds (arm64 TCG: over two 5 s updates of the
    # load): it may read a value between the two readings', as
    # tasks.py ck_loadavg allows over a long window.
    if c.live and all(min(float(x), float(y)) - 0.05 <= float(v) <= max(float(x), float(y)) + 0.05
                      for v, x, y in zip(loads, a, b)):
        return True, ""
    return False, "prog['avenrun'] %s = %s, /proc/loadavg %s before, %s after" % (got, loads, a, b)


def _listeners(files):
    """The TCP (IPv4) listeners of every /proc/net/tcp reading the guest
    took: in the TCP cache from its boot to its end."""
    tags = sorted({n[len("sys."):-len(".net-tcp")] for n in files if n.startswith("sys.") and n.endswith(".net-tcp")})
    sets = [{ptr for name, ptr, st in sockets(files, t) if name == "tcp" and st == TCP_LISTEN} for t in tags]
    return set.intersection(*sets) if sets else set()


def _slab_tcp(got, c):
    want = _listeners(c.files)
    if not want:
        return False, "no TCP listener in every /proc/net/tcp reading of the guest"
    missing = sorted(want - set(got))
    if missing or len(set(got)) != len(got):
        return False, "slab_cache_for_each_allocated_object(TCP): %d objects (%d distinct), without the " \
            "listeners %s of /proc/net/tcp" % (len(got), len(set(got)), ["0x%x" % x for x in missing])
    return True, "%d TCP listeners among %d allocated objects" % (len(want), len(got))


CHECKS = [
    ("python-jiffies", _checked("jiffies", _jiffies)),
    ("python-tasks", _checked("tasks", _tasks)),
    ("python-modules", _checked("modules", _modules)),
    ("python-banner", _checked("banner", _banner)),
    ("python-type-size", _checked("type_sizes", _type_sizes)),
    ("python-container-of", _checked("container_of", _container_of)),
    ("python-lookup-error", _raised("lookup_error", ("KeyError", "LookupError"))),
    ("python-fault", _raised("fault", ("FaultError",), address=True)),
    ("python-avenrun", _checked("avenrun", _avenrun)),
    ("python-slab-tcp", _checked("slab_tcp", _slab_tcp)),
]


def live_jobs(r):
    """The checks of pycheck.py live in the guest (tests/vm/init kpy),
    whose initrd has a python3 of the host's version (tests/vm/mkinitrd)."""
    names = ["%s:%s" % (r.prefix("live"), tag) for tag, _ in CHECKS]
    try:
        ctx = r.live_ctx("python")
    except T.TruthError as e:
        return [(n, None, lambda res, c: (False, res[2]), None, (None, "", "no ground truth: %s" % e))
                for n in names]
    # python3 runs pycheck.py (and it kpeek for the CLI's sizes): in the
    # listings around it only.
    ctx.transient |= {"python3", "python3.11"}
    return [(n, None, ck, ctx, r.live_result("python")) for n, (_, ck) in zip(names, CHECKS)]


def _search_user(m):
    """Program.search(string=, pid=) of a variable of kp_args' environment
    (addr_objects.marker): among the hits, in address order, where its
    /proc/PID/environ puts it, as addr-search-user asks of the CLI (the
    same bytes may be elsewhere too: "PATH=/bin:/usr/bin" is in busybox's
    rodata, mapped from its file)."""
    pid, string, addr = m[:3]

    def ck(got, c):
        if addr in got and got == sorted(set(got)):
            return True, "%r of pid %d at 0x%x among %d hits" % (string, pid, addr, len(got))
        return False, "Program.search(string=%r, pid=%d): %s, /proc/%d/environ puts it at 0x%x" % (
            string, pid, ["0x%x" % a for a in got[:20]], pid, addr)
    return _checked("search_user", ck)


def python_jobs(r, kpeek, pool):
    """The jobs of one guest: one pycheck.py run per source, its checks;
    on a dump, also Program.search of kp_args' environment (the live run
    in the guest has no marker to look for)."""
    jobs = live_jobs(r) if r.files else []
    for source in SOURCES:
        checks = list(CHECKS)
        search = None
        try:
            m = marker(r, source) if r.files and source in r.dumps else None
        except T.TruthError as e:
            why = str(e)
            m = None
            checks.append(("python-search-user", lambda res, c, why=why: (False, "no ground truth: %s" % why)))
        if m:
            search = "%d:%s" % (m[0], m[1])
            checks.append(("python-search-user", _search_user(m)))
        names = ["%s:%s" % (r.prefix(source), tag) for tag, _ in checks]
        why = None if r.files and source in r.dumps else \
            "no %s dump of %s or no guest files (see the rig checks)" % (source, r.name)
        ctx = None
        if not why:
            try:
                ctx = r.ctx(source)
            except T.TruthError as e:
                why = "no ground truth: %s" % e
        if why:
            jobs += [(n, None, lambda res, c: (False, res[2]), None, (None, "", why)) for n in names]
            continue
        fut = pool.submit(run_python, r.dumps[source][0], kpeek, search)
        jobs += [(n, fut, ck, ctx, None) for n, (_, ck) in zip(names, checks)]
    return jobs
