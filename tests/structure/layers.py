#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The library's layering, checked from its #include lines (src/**/*.c, *.h):
#   1. a file includes only headers of its own layer or of lower ones, in
#      this order (lowest first);
#   2. no include cycle among files;
#   3. no file outside src/arch/NAME/ names a register or paging constant of
#      that architecture (the words in ARCH_WORDS);
#   4. the walkers of kernel objects (src/linux, src/checks) do not use the
#      expression language: no lang/ header, no call of kp_eval(),
#      kp_value_*() or the by-name layouts kp_member_offset()/kp_type_size();
#      their layouts come from member tables (src/types/layout.h).
# Prints one line per check ("ok NAME" / "FAIL NAME: why") and a closing
# "layers: N passed, N failed".
import os
import re
import sys

LAYERS = ["util", "io", "format", "symbols", "arch", "types", "core", "lang", "linux", "checks"]
# Words that belong to one architecture's folder only.
ARCH_WORDS = {
    "x86_64": re.compile(r"\b(cr3|CR3|la57|LA57|rip|RIP|idtr|IDT)\b"),
}

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
src = os.path.normpath(os.path.join(root, "src"))
passed = failed = 0


def report(name, why):
    global passed, failed
    if why:
        failed += 1
        print("FAIL %s: %s" % (name, why))
    else:
        passed += 1
        print("ok   %s" % name)


files = []
for d, _, fs in os.walk(src):
    for f in fs:
        if f.endswith((".c", ".h")):
            files.append(os.path.relpath(os.path.join(d, f), src))
files.sort()


def layer(path):
    top = path.split("/")[0]
    return LAYERS.index(top) if top in LAYERS else None


includes = {}
for f in files:
    text = open(os.path.join(src, f)).read()
    includes[f] = re.findall(r'^#include "([^"]+)"', text, re.M)

# 1. Layers.
bad = []
for f in files:
    lf = layer(f)
    if lf is None:
        bad.append("%s is in no layer folder" % f)
        continue
    for inc in includes[f]:
        li = layer(inc)
        if li is None:
            bad.append("%s includes %s, which is in no layer" % (f, inc))
        elif li > lf:
            bad.append("%s (%s) includes %s (%s, a higher layer)" % (f, LAYERS[lf], inc, LAYERS[li]))
report("layers-only-downward", "; ".join(bad))

# 2. Include cycles (a header includes what includes it).
graph = {f: [i for i in includes[f] if i in includes] for f in files}
state, stack, cycles = {}, [], []


def visit(n):
    state[n] = 1
    stack.append(n)
    for m in graph[n]:
        if state.get(m) == 1:
            cycles.append(" -> ".join(stack[stack.index(m):] + [m]))
        elif m not in state:
            visit(m)
    stack.pop()
    state[n] = 2


for f in files:
    if f not in state:
        visit(f)
report("no-include-cycles", "; ".join(cycles))

# 3. Architecture words.
for arch, words in ARCH_WORDS.items():
    hits = []
    for d in ("src", "cli", "include"):
        for dd, _, fs in os.walk(os.path.join(root, d)):
            for f in fs:
                p = os.path.normpath(os.path.join(dd, f))
                rel = os.path.relpath(p, os.path.normpath(root))
                if not f.endswith((".c", ".h")) or rel.startswith("src/arch/%s/" % arch):
                    continue
                for n, line in enumerate(open(p), 1):
                    if words.search(line):
                        hits.append("%s:%d" % (rel, n))
    report("%s-words-only-in-src/arch/%s" % (arch, arch), ", ".join(hits[:10]))

# 4. Walkers without the expression language.
LANG_CALLS = re.compile(r"\b(kp_eval|kp_value_[a-z0-9_]+|kp_member_offset|kp_type_size)\s*\(")
hits = []
for f in files:
    if f.split("/")[0] not in ("linux", "checks"):
        continue
    hits += ["%s includes %s" % (f, i) for i in includes[f] if i.startswith("lang/")]
    for n, line in enumerate(open(os.path.join(src, f)), 1):
        if LANG_CALLS.search(line.split("//")[0]):
            hits.append("%s:%d calls %s" % (f, n, LANG_CALLS.search(line).group(1)))
report("walkers-without-the-expression-language", "; ".join(hits[:10]))

print("layers: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
