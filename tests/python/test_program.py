# SPDX-License-Identifier: MIT
# Program: variables, symbols, types, raw reads, errors, against the
# generator's truth.json and the kpeek command's own answers.
import gc
import os
import shutil
import subprocess

import pytest

import kpeek
from conftest import build_dir


def test_jiffies(prog, truth):
    j = prog["jiffies"]
    assert j.value_() == truth["jiffies"]
    assert int(j) == truth["jiffies"]
    assert prog.variable("jiffies").value_() == truth["jiffies"]


def test_avenrun(prog, truth):
    assert prog["avenrun"].value_() == truth["avenrun"]
    assert [int(prog["avenrun"][i]) for i in range(3)] == truth["avenrun"]


def test_read_banner(prog, truth):
    sym = prog.symbol("linux_banner")
    data = prog.read(sym.address, len(truth["banner"]))
    assert data == truth["banner"].encode()
    assert data.startswith(b"Linux")


def test_symbol_by_address(prog, truth):
    s = prog.symbol(truth["init_task"] + 8)
    assert s.name == "init_task"
    assert s.address == truth["init_task"]
    assert prog.symbol("init_task").address == truth["init_task"]


def test_unknown_symbol_is_lookup_error(prog):
    with pytest.raises(LookupError):
        prog["no_such_symbol_here"]
    with pytest.raises(LookupError):
        prog.variable("no_such_symbol_here")
    with pytest.raises(LookupError):
        prog.symbol("no_such_symbol_here")
    with pytest.raises(LookupError):
        prog.type("struct no_such_struct")


def test_read_zero_is_fault(prog):
    with pytest.raises(kpeek.FaultError) as e:
        prog.read(0, 8)
    assert e.value.address == 0
    with pytest.raises(kpeek.FaultError):
        kpeek.Object(prog, "unsigned long", address=0).value_()


def test_type_matches_truth(prog, truth):
    t = prog.type("struct task_struct")
    assert t.size == truth["task_size"]
    assert t.kind == kpeek.TypeKind.STRUCT
    assert t.tag == "task_struct"
    offsets = {m.name: m.offset for m in t.members}
    for name, off in truth["task_offsets"].items():
        assert offsets[name] == off, name
    assert kpeek.sizeof(t) == truth["task_size"]
    assert t.member("comm").type.length == 16
    assert prog.type("struct task_struct *").type.name == "struct task_struct"


def _cli(dump_path, *args):
    r = subprocess.run([os.path.join(build_dir(), "kpeek"), "-c", dump_path] + list(args),
                       capture_output=True, text=True, check=True)
    return r.stdout


def test_type_size_equals_cli(prog, dump):
    # The CLI's sizeof through its expression language.
    for name in ("struct task_struct", "struct list_head", "struct mm_struct"):
        out = _cli(dump[0], "print", "sizeof(%s)" % name)
        assert int(out.split(")")[-1]) == prog.type(name).size, name


def _open_count(path):
    # The dump open as a file descriptor or mapped into memory.
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink("/proc/self/fd/" + fd) == path
        except OSError:
            pass
    with open("/proc/self/maps") as f:
        n += sum(line.rstrip().endswith(" " + path) for line in f)
    return n


def test_program_closes_file(dump, tmp_path):
    # A copy of its own: no other test's Program has it open.
    path = str(tmp_path / "own.core")
    shutil.copyfile(dump[0], path)
    gc.collect()
    before = _open_count(path)
    assert before == 0
    p = kpeek.program_from_core_dump(path)
    assert p["jiffies"].value_()
    assert _open_count(path) > before
    o = p["init_task"]
    del p
    gc.collect()
    # An Object keeps its Program (and its file) alive.
    assert o.comm.string_() == b"swapper/0"
    assert _open_count(path) > before
    del o
    gc.collect()
    assert _open_count(path) == before


def test_missing_dump_is_oserror(tmp_path):
    with pytest.raises(OSError):
        kpeek.program_from_core_dump(str(tmp_path / "nothing"))


def test_search(prog, truth):
    """Program.search, the scan of kpeek search: task 1's arguments where
    the generator put them, in its memory, the kernel's and physical."""
    want = truth["search"]
    assert prog.search(string=b"/bin/sh", pid=1) == want["bin_sh_user"]
    assert prog.search(string=b"/bin/sh", pid=1, limit=1) == want["bin_sh_user"][:1]
    assert prog.search(string=b"echo hi", pid=1) == [want["echo_hi_user"]]
    # Across two pages not next to each other in physical memory.
    assert prog.search(string=b"echo hi", physical=True) == []
    assert prog.search(string=b"/bin/sh") == [want["bin_sh_kernel"]]
    # The word holding "/bin" and what follows, as a value under a mask.
    word = int.from_bytes(b"/bin/sh\0", "little")
    assert prog.search(word, pid=1) == want["bin_sh_user"]
    assert prog.search(word | 0xff00000000000000, ignore=0xff00000000000000, pid=1) == want["bin_sh_user"]
    assert prog.search(int.from_bytes(b"/bin", "little"), width=4, pid=1) == want["bin_sh_user"]


def test_search_bad_arguments(prog):
    with pytest.raises(TypeError):
        prog.search()
    with pytest.raises(TypeError):
        prog.search(1, string=b"x")
    with pytest.raises(ValueError, match="8 or 4 bytes"):
        prog.search(1, width=3)
    with pytest.raises(ValueError, match="exclude each other"):
        prog.search(1, pid=1, physical=True)
