# SPDX-License-Identifier: MIT
"""Linux helpers with drgn's names and behaviour (drgn.helpers.linux.*).

The walks of kernel objects are libkpeek's, the ones the kpeek command
uses (tasks as kpeek ps, lists with every link checked, modules as kpeek
lsmod, arguments as kpeek ps -a): the Python and the CLI see one walker.
Each helper says what it mirrors; kernel versions are libkpeek's
(doc/kernels.md): 4.19 to 7.x.
"""
from kpeek import Object, container_of

__all__ = [
    "cmdline", "d_path", "environ", "find_task", "for_each_module", "for_each_online_cpu",
    "identify_address",
    "for_each_possible_cpu", "for_each_task", "hlist_for_each", "hlist_for_each_entry",
    "list_empty", "list_for_each", "list_for_each_entry", "per_cpu", "per_cpu_ptr",
    "rb_first", "rb_next", "rbtree_inorder_for_each", "rbtree_inorder_for_each_entry",
    "slab_cache_for_each_allocated_object", "task_memory", "task_since_last_ran_ns", "task_state_to_char",
]

# Ends a walk in Python (hlist, rbtree) that a corrupt dump made endless:
# the kernel's own lists are far shorter.
_MAX_NODES = 1 << 22


def _ptr(prog, type_name, address):
    return Object(prog, type_name, value=address)


# ---------------------------------------------------------------- tasks (pid.py, sched.py)

def for_each_task(prog):
    """Every thread of every process, as drgn's for_each_task (pid.c's
    task list): struct task_struct * Objects, from the walker of kpeek ps."""
    for t in prog._tasks(True):
        yield _ptr(prog, "struct task_struct *", t[0])


def find_task(prog, pid):
    """The task of PID pid in the initial PID namespace, as find_task_by_pid_ns():
    a struct task_struct *, NULL if there is none."""
    address = prog._task_by_pid(int(pid))
    return _ptr(prog, "struct task_struct *", address or 0)


def task_state_to_char(task):
    """The state letter /proc/PID/stat shows (R S D T t X Z P I), as
    task_state_to_char() of fs/proc/array.c, from kpeek's task walker."""
    prog = task.prog_
    address = int(task) if task.type_.kind.name == "POINTER" else task.address_
    states = prog._cache.get("task_states")
    if states is None or address not in states:
        states = {t[0]: t[3] for t in prog._tasks(True)}
        prog._cache["task_states"] = states
    try:
        return states[address]
    except KeyError:
        raise ValueError("0x%x is not a task of the task list" % address) from None


def _task_address(task):
    return int(task) if task.type_.kind.name == "POINTER" else task.address_


def task_since_last_ran_ns(task):
    """How long the task has not run, in ns, as kpeek report's since_ran
    (crash's ps -m): its CPU's run-queue clock_task minus its
    se.exec_start, which the scheduler last set as the task left the CPU.
    Like drgn's task_since_last_arrival_ns, but from when it stopped, not
    from when it last started; 0 for a task running now or whose idle
    CPU's clock stood still since."""
    return task.prog_._task_last_ran(_task_address(task))[3]


def task_memory(task):
    """A process's memory sizes in kB as /proc/PID/status's VmPeak..VmSwap
    lines show them (kpeek status, kpeek ps's VSZ and RSS): a dict keyed by
    their names. The resident counts are the kernel's own counters, with
    their per-CPU parts on 6.2+. A kernel thread has none: an error saying
    so."""
    return task.prog_._task_mem(_task_address(task))


def cmdline(task):
    """A process's arguments (list of bytes) as /proc/PID/cmdline; None for a
    kernel thread (no mm). drgn.helpers.linux.mm.cmdline."""
    if not task.mm:
        return None
    return task.prog_._task_words(_task_address(task), False)


def environ(task):
    """A process's environment (list of bytes) as /proc/PID/environ; None for
    a kernel thread. drgn.helpers.linux.mm.environ."""
    if not task.mm:
        return None
    return task.prog_._task_words(_task_address(task), True)


def d_path(path_or_vfsmnt, dentry=None):
    """The path of a struct path * (or of a struct vfsmount * and a struct
    dentry *) as /proc shows it: d_path() from PID 1's root, " (deleted)"
    after an unlinked file. bytes, as drgn.helpers.linux.fs.d_path."""
    if dentry is None:
        path = path_or_vfsmnt
        mnt, dentry = path.mnt, path.dentry
    else:
        mnt = path_or_vfsmnt
    return mnt.prog_._d_path(int(mnt), int(dentry))


# ---------------------------------------------------------------- lists (list.py)

def list_empty(head):
    """list_empty() of include/linux/list.h."""
    return int(head.next) == int(head.address_of_() if head.type_.kind.name != "POINTER" else head)


def list_for_each(head):
    """The nodes (struct list_head *) of the list at head (a struct list_head *),
    every link checked as kpeek list checks it."""
    prog = head.prog_
    address = int(head) if head.type_.kind.name == "POINTER" else head.address_
    for node in prog._list_nodes(address):
        yield _ptr(prog, "struct list_head *", node)


def list_for_each_entry(type, head, member):
    """The entries of type (a name or Type) whose member is on the list at head."""
    for node in list_for_each(head):
        yield container_of(node, type, member)


def hlist_for_each(head):
    """The nodes (struct hlist_node *) of the hlist at head (struct hlist_head *)."""
    pos = head.first
    for _ in range(_MAX_NODES):
        if not pos:
            return
        yield pos
        pos = pos.next
    raise ValueError("hlist at 0x%x: more than %d nodes (a loop?)" % (int(head), _MAX_NODES))


def hlist_for_each_entry(type, head, member):
    """The entries of type whose member is on the hlist at head."""
    for pos in hlist_for_each(head):
        yield container_of(pos, type, member)


# ---------------------------------------------------------------- red-black trees (rbtree.py)

def _rb_parent(node):
    # __rb_parent_color: the parent's address with the color in bit 0.
    return Object(node.prog_, "struct rb_node *", value=int(node.__rb_parent_color) & ~3)


def rb_first(root):
    """The first node of an rb_root (lib/rbtree.c rb_first), NULL if empty."""
    node = root.rb_node
    if not node:
        return node
    for _ in range(_MAX_NODES):
        if not node.rb_left:
            return node
        node = node.rb_left
    raise ValueError("rbtree: too deep")


def rb_next(node):
    """The next node in order (lib/rbtree.c rb_next), NULL at the end."""
    if node.rb_right:
        node = node.rb_right
        while node.rb_left:
            node = node.rb_left
        return node
    parent = _rb_parent(node)
    while parent and int(node) == int(parent.rb_right):
        node = parent
        parent = _rb_parent(node)
    return parent


def rbtree_inorder_for_each(root):
    """Every node of an rb_root in order."""
    node = rb_first(root)
    for _ in range(_MAX_NODES):
        if not node:
            return
        yield node
        node = rb_next(node)
    raise ValueError("rbtree: more than %d nodes" % _MAX_NODES)


def rbtree_inorder_for_each_entry(type, root, member):
    """The entries of type whose member (a struct rb_node) is in the tree, in order."""
    for node in rbtree_inorder_for_each(root):
        yield container_of(node, type, member)


# ---------------------------------------------------------------- modules (module.py)

def for_each_module(prog):
    """Every loaded module (struct module *), in /proc/modules order, from the
    walker of kpeek lsmod."""
    for address, _name in prog._modules():
        yield _ptr(prog, "struct module *", address)


# ---------------------------------------------------------------- CPUs (cpumask.py, percpu.py)

def _for_each_cpu(prog, name):
    # BTF describes few global variables: the mask's words are read as the
    # unsigned longs of its bitmap, nr_cpu_ids bits of them.
    nr = int(Object(prog, "unsigned int", address=prog.symbol("nr_cpu_ids").address))
    base = prog.symbol(name).address
    ulong = Object(prog, "unsigned long", value=0).type_.size * 8
    for i in range((nr + ulong - 1) // ulong):
        w = int(Object(prog, "unsigned long", address=base + i * ulong // 8))
        while w:
            low = w & -w
            cpu = i * ulong + low.bit_length() - 1
            if cpu >= nr:
                return
            yield cpu
            w ^= low


def for_each_online_cpu(prog):
    """CPU numbers set in cpu_online_mask (__cpu_online_mask since 4.5)."""
    return _for_each_cpu(prog, "__cpu_online_mask")


def for_each_possible_cpu(prog):
    """CPU numbers set in cpu_possible_mask."""
    return _for_each_cpu(prog, "__cpu_possible_mask")


def per_cpu_ptr(ptr, cpu):
    """per_cpu_ptr(): ptr (a per-CPU pointer) moved into CPU cpu's area by
    __per_cpu_offset[cpu]."""
    prog = ptr.prog_
    base = prog.symbol("__per_cpu_offset").address
    offset = int(Object(prog, "unsigned long", address=base + 8 * int(cpu)))
    return Object(prog, ptr.type_, value=(int(ptr) + offset) & (2 ** 64 - 1))


def per_cpu(var, cpu):
    """per_cpu(): CPU cpu's copy of a per-CPU variable."""
    return per_cpu_ptr(var.address_of_(), cpu)[0]


def identify_address(prog, addr):
    """What a kernel address is, in one line (drgn's identify_address()):
    the most specific fact of Program.whatis() (kpeek whatis): "slab
    object: CACHE+0xOFF" ("free slab object" when free), "function symbol:
    NAME+0xOFF" (text) or "object symbol: NAME+0xOFF" (a module's: "symbol:
    NAME+0xOFF [MODULE]"), "task stack: PID (COMM) +0xOFF" (from the stack's lowest
    address), "task_struct: PID (COMM) +0xOFF", "per-CPU variable:
    NAME+0xOFF of CPU N" (or "per-CPU area of CPU N +0xOFF"), "vmap:
    0xSTART-0xEND caller NAME", "struct page of PFN 0xN"; None if none of
    those holds."""
    for f in prog.whatis(int(addr)):
        k = f["kind"]
        if k == "slab" and f["object"] is not None:
            return "%sslab object: %s+%#x" % ("free " if f["allocated"] is False else "", f["cache_name"],
                                             f["offset"])
        if k in ("symbol", "module"):
            # A module's symbol has no section kpeek knows.
            what = {"text": "function symbol", None: "symbol"}.get(f["section"], "object symbol")
            mod = " [%s]" % f["module"] if f["module"] else ""
            return "%s: %s+%#x%s" % (what, f["symbol"], f["offset"], mod)
        if k == "stack":
            return "task stack: %d (%s) +%#x" % (f["pid"], f["comm"], int(addr) - f["stack"])
        if k == "task":
            return "task_struct: %d (%s) +%#x" % (f["pid"], f["comm"], f["offset"])
        if k == "percpu":
            if f["symbol"]:
                return "per-CPU variable: %s+%#x of CPU %d" % (f["symbol"], f["offset"], f["cpu"])
            return "per-CPU area of CPU %d +%#x" % (f["cpu"], f["offset"])
        if k == "vmalloc":
            caller = " caller %s" % f["caller_symbol"] if f["caller_symbol"] else ""
            return "vmap: %#x-%#x%s" % (f["start"], f["start"] + f["size"], caller)
        if k == "page":
            return "struct page of PFN %#x" % f["pfn"]
    return None


def slab_cache_for_each_allocated_object(prog, cache, type):
    """Every allocated object of a SLUB cache as a TYPE * Object (drgn's
    slab_cache_for_each_allocated_object(), with the program first): the
    cache by name (as /proc/slabinfo lists it) or its struct kmem_cache *
    (an int or an Object); type a type name ("struct sock"). The walker of
    kpeek slab (Program.slab_objects()): the slabs found in the memory map,
    an object free when on its slab's, a CPU's or a sheaf's freelist."""
    key = cache if isinstance(cache, str) else int(cache)
    for o in prog.slab_objects(key):
        if o["allocated"]:
            yield _ptr(prog, type + " *", o["address"])
