#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# pycheck.py DUMP KPEEK: what the Python bindings (import kpeek, from
# build/python) read from one dump (DUMP "live": the running kernel, inside
# a guest), as one JSON document on stdout, for
# suite/python.py to compare with the guest's own view. One process per
# source does every part; each part is {"value": ...} or {"error": "Type:
# message"} so that one failing part does not hide the others.
import json
import subprocess
import sys
import time

t0 = time.monotonic()
import kpeek  # noqa: E402
from kpeek.helpers.linux import (for_each_task, list_for_each_entry,  # noqa: E402
                                  slab_cache_for_each_allocated_object)

TYPES = ["struct task_struct", "struct module", "struct list_head", "struct mm_struct"]


def part(fn):
    try:
        return {"value": fn()}
    except Exception as e:  # every libkpeek error must be an exception: record it
        return {"error": "%s: %s" % (type(e).__name__, e)}


def tasks(prog):
    return [[t.pid.value_(), t.tgid.value_(), t.comm.string_().decode("utf-8", "replace")]
            for t in for_each_task(prog)]


def modules(prog):
    head = prog["modules"].address_of_()
    return [m.name.string_().decode() for m in list_for_each_entry("struct module", head, "list")]


def type_sizes(prog, kpeek_bin, dump):
    source = [] if dump == "live" else ["-c", dump]
    out = subprocess.run([kpeek_bin] + source + ["print"] + ["sizeof(%s)" % t for t in TYPES],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    cli = [int(line.rsplit(")", 1)[1]) for line in out if line]
    return {t: [prog.type(t).size, c] for t, c in zip(TYPES, cli)}


def container_of_round_trip(prog):
    # Each task back from its tasks member, and its pid read through it.
    bad, n = [], 0
    for t in for_each_task(prog):
        back = kpeek.container_of(t.tasks.address_of_(), "struct task_struct", "tasks")
        n += 1
        if int(back) != int(t) or back.pid.value_() != t.pid.value_():
            bad.append("0x%x -> 0x%x" % (int(t), int(back)))
    return {"tasks": n, "bad": bad}


def raises(fn, exc):
    try:
        r = fn()
    except exc as e:
        return {"raised": type(e).__name__, "message": str(e),
                "address": getattr(e, "address", None)}
    except Exception as e:
        return {"raised": type(e).__name__, "message": str(e), "wrong": True}
    return {"raised": None, "returned": repr(r)}


def main():
    dump, kpeek_bin = sys.argv[1], sys.argv[2]
    prog = kpeek.program_from_kernel() if dump == "live" else kpeek.program_from_core_dump(dump)
    doc = {"jiffies": part(lambda: prog["jiffies"].value_())}
    doc["first_answer_s"] = time.monotonic() - t0
    doc["tasks"] = part(lambda: tasks(prog))
    doc["modules"] = part(lambda: modules(prog))
    doc["banner"] = part(lambda: prog.read(prog.symbol("linux_banner").address, 512)
                         .split(b"\0")[0].decode("utf-8", "replace"))
    doc["type_sizes"] = part(lambda: type_sizes(prog, kpeek_bin, dump))
    doc["container_of"] = part(lambda: container_of_round_trip(prog))
    doc["lookup_error"] = raises(lambda: prog["kp_no_such_symbol"], LookupError)
    doc["fault"] = raises(lambda: prog.read(0, 8), kpeek.FaultError)
    doc["avenrun"] = part(lambda: prog["avenrun"].value_())
    doc["slab_tcp"] = part(lambda: [int(s) for s in slab_cache_for_each_allocated_object(prog, "TCP", "struct sock")])
    if len(sys.argv) > 3:
        # PID:STRING, a variable of a process's environment (a dump's
        # third argument): where Program.search finds it in its memory.
        pid, string = sys.argv[3].split(":", 1)
        doc["search_user"] = part(lambda: prog.search(string=string.encode(), pid=int(pid)))
    doc["seconds"] = time.monotonic() - t0
    json.dump(doc, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
