# SPDX-License-Identifier: MIT
# examples/python: drgn-style scripts run as drgn runs them (prog bound,
# here by python3 -m kpeek -c DUMP SCRIPT) on the synthetic dump; their
# output against the generator's truth.json.
import os
import subprocess
import sys

from conftest import TOP, build_dir

EXAMPLES = os.path.join(TOP, "examples", "python")


def run(dump, script):
    env = dict(os.environ, PYTHONPATH=os.path.join(build_dir(), "python"))
    r = subprocess.run([sys.executable, "-m", "kpeek", "-c", dump, os.path.join(EXAMPLES, script)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return r.stdout.splitlines()


def test_tasks_example(dump, truth):
    lines = run(dump[0], "tasks.py")
    assert lines[0].split() == ["PID", "PPID", "S", "COMM"]
    got = [(int(l.split()[0]), l.split()[3]) for l in lines[1:]]
    assert got == sorted((pid, comm) for _, pid, comm in truth["tasks"])
    # The generator's parents: task i's real_parent is task i - 1.
    assert all(int(l.split()[1]) == max(int(l.split()[0]) - 1, 0) for l in lines[1:])


def test_modules_example(dump, truth):
    lines = run(dump[0], "modules.py")
    assert [l.split() for l in lines[1:]] == [[n, str(s)] for n, s in truth["modules"]]


def test_list_walk_example(dump, truth):
    lines = run(dump[0], "list_walk.py")
    want = ["%d %s <- %d %s" % (pid, comm, truth["tasks"][pid - 1][1], truth["tasks"][pid - 1][2])
            for _, pid, comm in truth["tasks"][1:]]
    assert lines == want


def test_console_binds_prog(dump, truth):
    # python3 -m kpeek -c DUMP: the console, fed on stdin.
    env = dict(os.environ, PYTHONPATH=os.path.join(build_dir(), "python"))
    r = subprocess.run([sys.executable, "-m", "kpeek", "-c", dump[0]], input=
                       "print(prog['jiffies'].value_())\nprint(len(list(for_each_task(prog))))\n",
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    # input() prompts on stdout when stdin is not a terminal
    got = [w for w in r.stdout.split() if w not in (">>>", "...")]
    assert got == [str(truth["jiffies"]), str(len(truth["tasks"]))]
    assert "prog" in r.stderr  # the banner names what is bound


def test_console_missing_dump_fails(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(build_dir(), "python"))
    r = subprocess.run([sys.executable, "-m", "kpeek", "-c", str(tmp_path / "none")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and r.stderr.startswith("kpeek: ") and r.stdout == ""
