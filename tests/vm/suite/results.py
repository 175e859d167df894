# SPDX-License-Identifier: MIT
# Accounting (the idea of the kernel's kselftest: a test's result is one of a
# few words, each with its reason). Every check ends as exactly one of
#   PASS   it compared what it asks and found it right
#   FAIL   it found something wrong, or could not run (a missing dump, no
#          ground truth, kpeek not built: never a skip)
#   SKIP   everything it would compare is missing from its source on purpose
#          (pages a filtered dump leaves out), and kpeek said so
#   XFAIL  it did not pass, as declared before the run: a limit of the
#          kernel (tests/vm/limits) where kpeek behaved precisely, or an
#          expected failure tied to an issue (tests/vm/xfail)
#   XPASS  it passed although a line declared it would not: the line is stale
# The suite fails on any FAIL or XPASS, and when a kernel ran fewer checks
# than its floor (tests/vm/floors). A passing check that could not compare
# some entries (tasks or stacks a filtered dump leaves out) lists them as
# skipped entries, counted apart: they are never counted as passed.
#
# A check returns (ok, detail) or one of the Outcome values below.
import fnmatch
import os

VERDICTS = ("PASS", "FAIL", "SKIP", "XFAIL", "XPASS")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def shown(path):
    """A file of the tree as the output names it (tests/vm/limits)."""
    return os.path.relpath(path, ROOT)


class Outcome:
    """What a check found beyond (ok, detail):
    limited   it could not pass because of a limit of the kernel, and kpeek
              gave the precise answer for that limit (detail says which):
              XFAIL where tests/vm/limits declares it, FAIL elsewhere
    skip      nothing to compare: everything was left out of the source
    pass      passed on what it compared; skipped: the entries it could not
              compare, each "what: why"."""

    def __init__(self, kind, detail="", skipped=()):
        self.kind, self.detail, self.skipped = kind, detail, list(skipped)


def limited(detail):
    return Outcome("limited", detail)


def skipped(reason):
    return Outcome("skip", reason)


def passed(detail="", skipped_entries=()):
    """A pass, with the entries that could not be compared; a check with
    nothing compared at all is a skip, not a pass (the caller says so)."""
    return Outcome("pass", detail, skipped_entries)


def outcome_of(verdict):
    """A check's return value as an Outcome."""
    if isinstance(verdict, Outcome):
        return verdict
    ok, detail = verdict
    return Outcome("pass" if ok else "fail", detail)


class Expectation:
    """One line of tests/vm/limits or tests/vm/xfail."""

    def __init__(self, path, lineno, pattern, kind, says, reason):
        self.path, self.lineno, self.pattern = path, lineno, pattern
        self.kind, self.says, self.reason = kind, says, reason
        self.used = 0

    def where(self):
        return "%s:%d" % (shown(self.path), self.lineno)

    def precise(self, res):
        """Whether kpeek answered as the limit line says: exit non-zero and
        exactly one line on stderr that names SAYS."""
        if self.says is None or not isinstance(res, tuple):
            return False
        rc, out, err = res
        lines = err.strip().split("\n") if err.strip() else []
        return rc not in (0, None) and len(lines) == 1 and self.says in lines[0]


def read_table(path, columns):
    """(line number, fields) of a table file: '#' starts a comment, fields
    are separated by blanks, the last one takes the rest of the line."""
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split(None, columns - 1)
            if len(fields) < columns:
                raise ValueError("%s:%d: expected %d fields: %r" % (path, n, columns, line))
            rows.append((n, fields))
    return rows


def read_expectations(limits_path, xfail_path):
    """tests/vm/limits (PATTERN SAYS REASON; SAYS "-" when the check itself
    knows the precise answer under the limit) and tests/vm/xfail (PATTERN
    ISSUE), limits first."""
    out = []
    for n, (pat, says, reason) in read_table(limits_path, 3):
        out.append(Expectation(limits_path, n, pat, "limit", None if says == "-" else says, reason))
    for n, (pat, issue) in read_table(xfail_path, 2):
        out.append(Expectation(xfail_path, n, pat, "xfail", None, "expected to fail until issue %s" % issue))
    return out


def read_floors(path):
    floors = {}
    for n, (kid, count) in read_table(path, 2):
        floors[kid] = (int(count), "%s:%d" % (shown(path), n))
    return floors


class Results:
    def __init__(self, limits_path, xfail_path, floors_path):
        self.expect = read_expectations(limits_path, xfail_path)
        self.floors = read_floors(floors_path)
        self.counts = dict.fromkeys(VERDICTS, 0)
        self.per_kernel = {}
        self.skipped_entries = {}  # kernel -> entries not compared in passing checks
        self.verdicts = []  # [name, verdict, reason, declared at]

    def expectation(self, name):
        if ":rig:" in name or name.startswith("rig:"):
            return None  # the rig's own steps can never be expected to fail
        for e in self.expect:
            if fnmatch.fnmatchcase(name, e.pattern):
                return e
        return None

    def judge(self, name, o, res):
        """(verdict, reason, expectation) of a check's outcome."""
        e = self.expectation(name)
        if o.kind == "skip":
            return "SKIP", o.detail, None
        if e is None:
            if o.kind == "limited":
                return "FAIL", ("kpeek reports a limit of this kernel that tests/vm/limits does "
                                "not declare: %s" % o.detail), None
            return ("PASS", o.detail, None) if o.kind == "pass" else ("FAIL", o.detail, None)
        e.used += 1
        if o.kind == "pass":
            return "XPASS", "passes now: delete line %s (%s)" % (e.where(), e.reason), e
        if e.kind == "xfail":
            return "XFAIL", "%s (%s)" % (e.reason, e.where()), e
        if e.says is None and o.kind == "limited":
            return "XFAIL", "%s (%s); %s" % (e.reason, e.where(), o.detail), e
        if e.says is not None and e.precise(res):
            return "XFAIL", "%s (%s); %s" % (e.reason, e.where(), res[2].strip()), e
        want = ("exit non-zero and one stderr line naming %s" % e.says if e.says
                else "the check's own answer under the limit")
        return "FAIL", "not what the declared limit %s wants (%s): %s" % (e.where(), want, o.detail), e

    def report(self, name, verdict, res=None):
        o = outcome_of(verdict)
        v, reason, e = self.judge(name, o, res)
        self.counts[v] += 1
        k = name.split(":", 1)[0]
        self.per_kernel.setdefault(k, dict.fromkeys(VERDICTS, 0))[v] += 1
        self.verdicts.append([name, v, reason.strip().split("\n")[0][:300] if v != "PASS" else "",
                              e.where() if e else ""])
        head = reason.strip().split("\n")[0] if v in ("SKIP", "XFAIL", "XPASS") else ""
        print("%s %s%s" % (v, name, " # " + head if head else ""), flush=True)
        if v == "FAIL" and reason:
            for line in reason.rstrip("\n").split("\n")[:60]:
                print("    " + line)
        if v == "PASS" and o.skipped:
            self.skipped_entries[k] = self.skipped_entries.get(k, 0) + len(o.skipped)
            print("    %d entr%s not compared (skipped):" % (len(o.skipped), "y" if len(o.skipped) == 1 else "ies"))
            for s in o.skipped[:5]:
                print("    skip: " + s)
            if len(o.skipped) > 5:
                print("    skip: ... and %d more" % (len(o.skipped) - 5))

    def floor_breaches(self, kernel_ids, enforce=True):
        """Kernels of this run with fewer checks than their floor, and
        kernels without a floor: [message]."""
        out = []
        for kid in kernel_ids:
            n = sum(self.per_kernel.get(kid, {}).values())
            if kid not in self.floors:
                out.append("kernel %s has no floor in tests/vm/floors (it ran %d checks)" % (kid, n))
            elif enforce and n < self.floors[kid][0]:
                out.append("kernel %s ran %d checks, fewer than its floor %d (%s): checks were lost" % (
                    kid, n, self.floors[kid][0], self.floors[kid][1]))
        return out

    def causes(self, most=8):
        """The closing lines that say why checks failed, for whoever reads
        only the end of a long log (CI shows its tail): every failed rig
        step with its reason, then the other failures grouped by their
        reason's first line, the most frequent first."""
        fails = [(n, r) for n, v, r, _ in self.verdicts if v == "FAIL"]
        rig_steps = [(n, r) for n, r in fails if ":rig:" in n or n.startswith("rig:")]
        for n, r in rig_steps[:most]:
            print("vm: failed rig step %s: %s" % (n, r[:200]))
        if len(rig_steps) > most:
            print("vm: ... and %d more failed rig steps" % (len(rig_steps) - most))
        groups = {}
        for n, r in fails:
            if (n, r) not in rig_steps:
                groups.setdefault(r[:160], []).append(n)
        ranked = sorted(groups.items(), key=lambda g: -len(g[1]))
        for reason, names in ranked[:most]:
            print("vm: %d failed (e.g. %s): %s" % (len(names), names[0], reason or "?"))
        if len(ranked) > most:
            print("vm: ... and %d more reasons for %d failures" % (
                len(ranked) - most, sum(len(g[1]) for g in ranked[most:])))

    def summary(self, kernel_ids, enforce_floors=True):
        """The closing lines; returns the exit status."""
        self.causes()
        order = list(kernel_ids)
        for kid in sorted(self.per_kernel, key=lambda k: (order.index(k) if k in order else len(order), k)):
            c = self.per_kernel[kid]
            floor = self.floors.get(kid, (None, ""))[0]
            print("vm: kernel %-10s %4d checks%s: %d pass, %d fail, %d skip, %d xfail, %d xpass%s" % (
                kid, sum(c.values()), " (floor %d)" % floor if floor is not None and kid in kernel_ids else "",
                c["PASS"], c["FAIL"], c["SKIP"], c["XFAIL"], c["XPASS"],
                "; %d entries skipped in passing checks" % self.skipped_entries[kid]
                if self.skipped_entries.get(kid) else ""))
        breaches = self.floor_breaches(kernel_ids, enforce_floors)
        for b in breaches:
            print("vm: FLOOR " + b)
        if not enforce_floors:
            print("vm: floors not enforced: KP_VM_ONLY runs only some guests")
        c = self.counts
        print("vm: %d xfail (declared in tests/vm/limits and tests/vm/xfail), %d xpass" % (
            c["XFAIL"], c["XPASS"]))
        # A kernel under its floor is one more failure: the line must say
        # the run failed to whoever parses it.
        failed = c["FAIL"] + len(breaches)
        print("vm: %d passed, %d failed, %d skipped, %d xfail, %d xpass" % (
            c["PASS"], failed, c["SKIP"], c["XFAIL"], c["XPASS"]))
        return 1 if failed or c["XPASS"] or not c["PASS"] else 0
