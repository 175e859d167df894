# SPDX-License-Identifier: MIT
# Object: members, subscripts, pointers, value_(), string_(), casts,
# container_of, C arithmetic, repr, errors, and memory over many reads.
import resource

import pytest

import kpeek


def test_members_and_strings(prog, truth):
    it = prog["init_task"]
    assert it.address_ == truth["init_task"]
    assert it.comm.string_() == b"swapper/0"
    assert it.member_("pid").value_() == 0
    assert it.type_.name == "struct task_struct"
    with pytest.raises(AttributeError):
        it.no_such_member
    with pytest.raises(LookupError):
        it.member_("no_such_member")


def test_pointer_navigation(prog, truth):
    it = prog["init_task"]
    nxt = it.tasks.next
    assert nxt.type_.kind == kpeek.TypeKind.POINTER
    # init_task.tasks.next is task 1's tasks member.
    assert int(nxt) == truth["tasks"][1][0] + truth["task_offsets"]["tasks"]
    t1 = kpeek.container_of(nxt, "struct task_struct", "tasks")
    assert int(t1) == truth["tasks"][1][0]
    assert t1.pid.value_() == 1
    assert t1[0].comm.string_() == b"init"
    assert t1.deref_().address_ == truth["tasks"][1][0]


def test_container_of_round_trip(prog, truth):
    for address, pid, comm in truth["tasks"]:
        task = kpeek.Object(prog, "struct task_struct *", value=address)
        back = kpeek.container_of(task.tasks.address_of_(), "struct task_struct", "tasks")
        assert int(back) == address
        assert back.comm.string_() == comm.encode()


def test_value_kinds(prog, truth):
    it = prog["init_task"]
    v = it.value_()
    assert isinstance(v, dict)
    assert v["pid"] == 0
    assert bytes(v["comm"]).rstrip(b"\0") == b"swapper/0"
    assert isinstance(it.comm.value_(), list) and len(it.comm.value_()) == 16
    assert it.tasks.next.value_() == int(it.tasks.next)
    assert bool(prog["jiffies"]) is True


def test_repr_like_drgn(prog, truth):
    it = prog["init_task"]
    assert repr(it) == "Object(prog, 'struct task_struct', address=0x%x)" % truth["init_task"]
    p = it.address_of_()
    assert repr(p) == "Object(prog, 'struct task_struct *', value=0x%x)" % truth["init_task"]
    assert repr(kpeek.Object(prog, "int", value=-5)) == "Object(prog, 'int', value=-5)"


def test_pointer_arithmetic(prog, truth):
    p = prog["init_task"].address_of_()
    q = p + 1
    assert int(q) - int(p) == truth["task_size"]
    assert q - p == 1
    assert int(q - 1) == int(p)
    assert q > p and p < q and p == truth["init_task"]


def test_integer_arithmetic_c_semantics(prog):
    i = kpeek.Object(prog, "int", value=-7)
    assert (i / 2).value_() == -3       # C truncates toward zero
    assert (i % 2).value_() == -1
    u = kpeek.Object(prog, "unsigned int", value=0)
    assert (u - 1).value_() == 0xFFFFFFFF    # wraps at 32 bits
    assert (i + u).type_.name == "unsigned int"  # usual arithmetic conversions
    c = kpeek.Object(prog, "char", value=100)
    assert (c + c).value_() == 200 and (c + c).type_.name == "int"  # promotion
    assert (-i).value_() == 7 and (~kpeek.Object(prog, "int", value=0)).value_() == -1
    with pytest.raises(TypeError):
        prog["init_task"] + 1
    with pytest.raises(TypeError):
        bool(prog["init_task"])


def test_cast(prog, truth):
    p = prog["init_task"].address_of_()
    ul = kpeek.cast("unsigned long", p)
    assert ul.value_() == truth["init_task"]
    back = kpeek.cast(prog.type("struct task_struct *"), ul)
    assert back.pid.value_() == 0


def test_address_of_rvalue_is_value_error(prog):
    with pytest.raises(ValueError):
        kpeek.Object(prog, "int", value=1).address_of_()


def test_fault_on_bad_pointer(prog):
    bad = kpeek.Object(prog, "struct task_struct *", value=0x10)
    with pytest.raises(kpeek.FaultError) as e:
        bad.pid.value_()
    assert e.value.address is not None


def _rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def test_no_growth_in_100000_member_reads(prog):
    it = prog["init_task"]
    for _ in range(2000):   # warm up caches and allocator pools
        it.tasks.next.value_()
    before = _rss_kb()
    for _ in range(100000):
        it.tasks.next.value_()
    grown = _rss_kb() - before
    assert grown < 2048, "RSS grew by %d KiB over 100000 member reads" % grown


def test_wild_pointers_raise_never_crash(prog, truth):
    # Pointers anywhere (the synthetic kernel's RAM, holes, user and
    # non-canonical addresses): a value or an exception, never a crash.
    import random
    rng = random.Random(30)
    bases = [0, truth["init_task"], 0xFFFF888000000000, 0xFFFFC90000000000, 0x8000000000000000]
    read = failed = 0
    for _ in range(3000):
        x = (rng.choice(bases) + rng.randrange(0, 1 << 20)) & (2**64 - 1)
        t = kpeek.Object(prog, "struct task_struct *", value=x)
        try:
            t.comm.string_()
            t.tasks.next.value_()
            t.value_()
            read += 1
        except (kpeek.FaultError, kpeek.Error, LookupError, TypeError, ValueError):
            failed += 1
    assert read + failed == 3000 and read > 0 and failed > 0


def test_enum_arithmetic_is_integer(prog):
    # C computes with an enum's integer type, not the enum.
    e = prog.eval("synth_pidtype")
    assert e.type_.kind == kpeek.TypeKind.ENUM
    r = e + 1
    assert r.type_.kind == kpeek.TypeKind.INT
    assert r.value_() == e.value_() + 1


def test_array_len_and_iteration(prog, truth):
    comm = prog["init_task"].comm
    assert len(comm) == 16
    assert bytes(int(c) for c in comm).rstrip(b"\0") == b"swapper/0"
    assert [int(x) for x in prog["avenrun"]] == truth["avenrun"]
    with pytest.raises(TypeError):
        len(prog["jiffies"])
