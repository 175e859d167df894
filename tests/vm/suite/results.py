# SPDX-License-Identifier: MIT
# Accounting: every check ends as one verdict, printed with its reason.
import fnmatch


class Results:
    def __init__(self, xfail_path):
        self.xfail = []  # (pattern, issue)
        with open(xfail_path) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    pat, issue = line.split()
                    self.xfail.append((pat, issue))
        self.counts = {"PASS": 0, "FAIL": 0, "XFAIL": 0, "XPASS": 0, "LIMIT": 0}
        self.per_kernel = {}
        self.verdicts = []  # (name, verdict)

    def expected_failure(self, name):
        if ":rig:" in name or name.startswith("rig:"):
            return None
        for pat, issue in self.xfail:
            if fnmatch.fnmatchcase(name, pat):
                return issue
        return None

    def report(self, name, ok, detail="", limit=False):
        """limit: the kernel cannot give what the check asks (its kallsyms
        has no variables) and kpeek said so precisely: neither a pass nor
        a failure, counted apart."""
        issue = self.expected_failure(name)
        if limit and ok:
            verdict = "LIMIT"
        elif issue:
            verdict = "XPASS" if ok else "XFAIL"
        else:
            verdict = "PASS" if ok else "FAIL"
        self.counts[verdict] += 1
        k = name.split(":", 1)[0]
        self.per_kernel.setdefault(k, {"PASS": 0, "FAIL": 0, "XFAIL": 0, "XPASS": 0,
                                       "LIMIT": 0})[verdict] += 1
        self.verdicts.append((name, verdict))
        suffix = " (issue %s)" % issue if issue else ""
        if verdict == "XPASS":
            suffix += ": passes now; remove its line from tests/vm/xfail"
        print("%s %s%s" % (verdict, name, suffix), flush=True)
        if verdict in ("FAIL", "LIMIT") and detail:
            for line in detail.rstrip("\n").split("\n")[:60 if verdict == "FAIL" else 1]:
                print("    " + line)
        elif verdict == "XFAIL" and detail:
            print("    " + detail.strip().split("\n")[0][:200])


# Checks that need a variable by name: on a kernel whose kallsyms has no
# variables (CONFIG_KALLSYMS_ALL=n) kpeek either still gets it right or says
# exactly that in one line.
NEEDS_VARIABLES = ("sym-avenrun", "sym-init_task", "sym-jiffies", "sym-_text", "print-init_task.comm",
                   "print-nr_cpu_ids", "print-jiffies", "vtop-_text", "rd-banner", "list-modules", "ps",
                   "ps-threads", "lsmod", "loadavg", "watch-jiffies", "watch-jiffies-computed", "diff-jiffies",
                   "check-syscalls-json", "sym-module-function", "panic-none", "bt-all")


def limited(ck):
    def wrapped(res, c):
        rc, out, err = res if isinstance(res, tuple) else (None, "", "")
        lines = err.strip().split("\n") if err.strip() else []
        if rc not in (0, None) and len(lines) == 1 and "CONFIG_KALLSYMS_ALL" in lines[0]:
            return True, lines[0], True
        return ck(res, c)
    return wrapped
