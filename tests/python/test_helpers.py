# SPDX-License-Identifier: MIT
# kpeek.helpers.linux on the synthetic dump: every task, lists, argv and
# environment, CPUs, per-CPU pointers, against the generator's truth.json.
import pytest

import kpeek
from kpeek.helpers.linux import (
    cmdline, environ, find_task, for_each_online_cpu, for_each_task, list_for_each,
    identify_address, list_for_each_entry, per_cpu_ptr, slab_cache_for_each_allocated_object, task_memory,
    task_since_last_ran_ns, task_state_to_char)


def test_for_each_task_is_every_task(prog, truth):
    got = sorted((t.pid.value_(), t.comm.string_().decode()) for t in for_each_task(prog))
    want = sorted((pid, comm) for _, pid, comm in truth["tasks"])
    assert got == want


def test_list_for_each_entry_tasks(prog, truth):
    head = prog["init_task"].tasks.address_of_()
    got = [int(t) for t in list_for_each_entry("struct task_struct", head, "tasks")]
    # The ring after init_task, in order: tasks 1..n.
    assert got == [a for a, _, _ in truth["tasks"][1:]]
    assert len(list(list_for_each(head))) == len(truth["tasks"]) - 1


def test_find_task(prog, truth):
    t = find_task(prog, 2)
    assert int(t) == truth["tasks"][2][0]
    assert not find_task(prog, 4242)


def test_task_state(prog):
    states = {t.pid.value_(): task_state_to_char(t) for t in for_each_task(prog)}
    assert set(states.values()) <= set("RSDTtXZPI")
    # The generator's __state: 0 (running) for init_task, 1 (interruptible) for the rest.
    assert states[0] == "R" and states[1] == "S"


def test_task_since_last_ran_needs_its_cpu(prog):
    # The generator's task_struct has no cpu (nor se): a clear error naming
    # what is missing, never a guess (the QEMU suite checks the value of
    # kp_task_last_ran(), under this helper, through report's blocked tasks).
    with pytest.raises(Exception, match="thread_info.cpu|cpu"):
        task_since_last_ran_ns(find_task(prog, 1))


def test_task_memory(prog, truth):
    # The generator's pages (truth.json), by task_mem()'s rules: kB of 4 KB
    # pages, VmRSS the file, anonymous and shmem counters, VmHWM the larger
    # of that and hiwater_rss.
    mm = truth["mm1"]
    file, anon, swap, shmem = mm["rss"]
    got = task_memory(find_task(prog, 1))
    assert got["VmSize"] == mm["total_vm"] * 4
    assert (got["RssFile"], got["RssAnon"], got["RssShmem"], got["VmSwap"]) == \
        (file * 4, anon * 4, shmem * 4, swap * 4)
    assert got["VmRSS"] == (file + anon + shmem) * 4
    assert got["VmHWM"] == max(mm["hiwater_rss"], file + anon + shmem) * 4


def test_task_memory_of_a_kernel_thread(prog):
    with pytest.raises(Exception, match="kernel thread"):
        task_memory(find_task(prog, 5))


def test_cmdline_environ(prog, truth):
    t1 = find_task(prog, 1)
    assert cmdline(t1) == [w.encode() for w in truth["args"]]
    assert environ(t1) == [w.encode() for w in truth["env"]]
    assert cmdline(find_task(prog, 5)) is None   # a kernel thread


def test_online_cpus(prog, truth):
    assert list(for_each_online_cpu(prog)) == truth["online_cpus"]


def test_per_cpu_ptr(prog):
    offs = prog["__per_cpu_offset"]
    p = kpeek.Object(prog, "unsigned long *", value=0x1000)
    assert int(per_cpu_ptr(p, 1)) == (0x1000 + int(offs[1])) & (2**64 - 1)


def test_stack_trace_or_clear_error(prog):
    # The synthetic kernel has no ORC tables: an exception, never a crash.
    try:
        frames = prog.stack_trace(1)
    except (kpeek.Error, LookupError, TypeError, ValueError, NotImplementedError) as e:
        assert str(e)
    else:
        assert all(f.pc for f in frames)


def test_modules_list_walk(prog, truth):
    head = prog["modules"].address_of_()
    got = [m.name.string_().decode() for m in list_for_each_entry("struct module", head, "list")]
    assert got == [name for name, _ in truth["modules"]]


def test_for_each_module(prog, truth):
    from kpeek.helpers.linux import for_each_module
    got = [(m.name.string_().decode(), m.core_layout.size.value_()) for m in for_each_module(prog)]
    assert got == [tuple(x) for x in truth["modules"]]


def test_d_path(prog, truth):
    from kpeek.helpers.linux import d_path
    for mnt, dentry, path in truth["paths"]:
        m = kpeek.Object(prog, "struct vfsmount *", value=mnt)
        d = kpeek.Object(prog, "struct dentry *", value=dentry)
        assert d_path(m, d) == path.encode()


def test_stack_frame_like_drgn():
    # drgn's frame.symbol() is a method that raises LookupError without one.
    f = kpeek.StackFrame(0x1000, 0x2000, None, None, False)
    with pytest.raises(LookupError):
        f.symbol()
    s = kpeek.Symbol(("f", 0xff0, 0x20, "T", None))
    g = kpeek.StackFrame(0x1000, 0x2000, "f", s, True)
    assert g.symbol().name == "f" and g.name == "f" and g.pc == 0x1000


def test_rbtree_inorder(prog, truth):
    from kpeek.helpers.linux import rb_first, rbtree_inorder_for_each
    root = kpeek.Object(prog, "struct rb_root *", value=truth["rbtree"]["root"])
    assert [int(n) for n in rbtree_inorder_for_each(root)] == truth["rbtree"]["inorder"]
    assert int(rb_first(root)) == truth["rbtree"]["inorder"][0]


def test_hlist(prog, truth):
    from kpeek.helpers.linux import hlist_for_each, hlist_for_each_entry
    head = kpeek.Object(prog, "struct hlist_head *", value=truth["hlist"]["head"])
    assert [int(n) for n in hlist_for_each(head)] == truth["hlist"]["nodes"]
    # Entries whose first member is the node: the node's own address.
    got = [int(e) for e in hlist_for_each_entry("struct hlist_node", head, "next")]
    assert got == truth["hlist"]["nodes"]


def test_crash_signature_without_a_log_says_why(prog):
    # The synthetic kernel has no printk ring: the signature (kpeek report's)
    # cannot be computed, and the exception (LookupError: a type is not
    # found, as drgn raises) names what is missing.
    with pytest.raises(LookupError) as e:
        prog.crash_signature()
    assert "printk ring buffer" in str(e.value)


def test_whatis_per_cpu_variable(prog, truth):
    rq = truth["percpu"]["runqueues_cpu1"]
    facts = prog.whatis(rq + 8)
    assert facts[0]["kind"] == "percpu"
    assert (facts[0]["cpu"], facts[0]["symbol"], facts[0]["offset"]) == (1, "runqueues", 8)
    assert facts[0]["size"] == truth["percpu"]["unit"]
    assert identify_address(prog, rq + 8) == "per-CPU variable: runqueues+0x8 of CPU 1"


def test_whatis_task_and_symbol(prog, truth):
    addr, pid, comm = truth["tasks"][1]
    assert identify_address(prog, addr + 0x10) == "task_struct: %d (%s) +0x10" % (pid, comm)
    # init_task is the idle task's task_struct (most specific) and a symbol.
    assert identify_address(prog, truth["init_task"] + 8) == "task_struct: 0 (swapper/0) +0x8"
    facts = prog.whatis(truth["init_task"] + 8)
    assert [f["kind"] for f in facts][:2] == ["task", "symbol"]
    assert (facts[1]["symbol"], facts[1]["offset"]) == ("init_task", 8)


def test_whatis_of_nothing_known(prog):
    # The first page of the address space: no fact, an empty list.
    assert prog.whatis(0x1000) == []
    assert identify_address(prog, 0x1000) is None


def test_slab_objects_errors(prog):
    # The synthetic kernel has slab caches (slabinfo) but no memory map
    # (no struct page in its BTF): the walk says so, for a name or an
    # address, through the helper too; an unknown cache is named.
    # (Objects themselves: tests/vm/suite/python.py on every guest.)
    with pytest.raises(LookupError, match="struct page"):
        prog.slab_objects("task_struct")
    with pytest.raises(LookupError, match="struct page"):
        list(slab_cache_for_each_allocated_object(prog, 0x1234, "struct task_struct"))
    with pytest.raises(LookupError, match="no slab cache named 'kp_none'"):
        prog.slab_objects("kp_none")
    with pytest.raises(TypeError):
        prog.slab_objects(1.5)
