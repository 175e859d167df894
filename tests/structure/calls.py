#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Call cycles between the library's files, from the object files of a
# build tree (tests/structure/calls.py BUILD): an edge a -> b for every
# function a.o calls that b.o defines (nm). A cycle that touches a folder in
# STRICT is a failure: the files must form a stack, each calling only those
# below it (calls through an ops table, such as struct kp_arch, are not
# edges: the table is the interface). Other cycles are listed as notes.
# Closing line "calls: N passed, N failed".
import os
import subprocess
import sys

STRICT = ["util", "io", "format", "symbols", "arch", "types", "core", "lang", "linux", "checks"]

build = sys.argv[1] if len(sys.argv) > 1 else "build"
objroot = os.path.join(build, "src")
objs = []
for d, _, fs in os.walk(objroot):
    objs += [os.path.join(d, f) for f in fs if f.endswith(".o")]
objs.sort()
if not objs:
    print("FAIL calls: no object files under %s (make first)" % objroot)
    print("calls: 0 passed, 1 failed")
    sys.exit(1)

defined, undefined = {}, {}
for o in objs:
    name = os.path.relpath(o, objroot)[:-2]
    out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
    undefined[name] = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined[name].add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDRB":
            defined[parts[2]] = name
graph = {n: sorted({defined[s] for s in u if s in defined and defined[s] != n})
         for n, u in undefined.items()}

# Strongly connected components (Tarjan).
index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]


def strong(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in graph[v]:
        if w not in index:
            strong(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))


sys.setrecursionlimit(10000)
for v in sorted(graph):
    if v not in index:
        strong(v)

passed = failed = 0
for folder in STRICT:
    bad = [c for c in sccs if any(n.split("/")[0] == folder for n in c)]
    if bad:
        failed += 1
        print("FAIL no-call-cycles-in-%s: %s" % (folder, "; ".join(" <-> ".join(c) for c in bad)))
    else:
        passed += 1
        print("ok   no-call-cycles-in-%s" % folder)
for c in sccs:
    if not any(n.split("/")[0] in STRICT for n in c):
        print("note: call cycle %s" % " <-> ".join(c))
print("calls: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
