# SPDX-License-Identifier: MIT
# Corrupt states (SECURITY.md: walks end with an answer or an error): damaged
# copies of the ELF dump of a kernel's first guest, KERNEL:GUEST:elf-damaged:
# CHECK, made with ../dumpedit.py, and kpeek snapshot of its makedumpfile
# -d 31 dump, KERNEL:GUEST:kdump-d31:snapshot-*. Each case damages one
# structure as a filtered dump or a rootkit does (a page left out, a link
# rewritten, an object unlinked) and its check compares kpeek's answer with
# what the guest said of itself around the dump (its /proc listings,
# /proc/modules, dmesg -r) and with the damage: what must be left out, what
# must be named, which findings check must make.
#
# Where things are comes from the intact dump: the guest's /proc/kallsyms,
# the dump's VMCOREINFO (the printk ring), struct offsets from kpeek print
# (BTF), task addresses from kpeek ps and module pages from kpeek vtop; each
# is read back from the dump's own bytes before use (a task's pid and comm,
# a module's name, a run queue's cpu, init_task.tasks.next), so a wrong
# address is a failed setup, never a damage elsewhere.
import json
import os
import re
import struct
import time

import dumpedit
import rig
import truth as T

from .common import timed
from .corrupt_checks import (ck_dmesg_hole, ck_dmesg_json_hole, ck_dmesg_none,
                             ck_ps_left_out, ck_ps_stops, ck_ps_runqueue, ck_check_found,
                             ck_check_cannot, ck_loadavg_unknown_running,
                             ck_lsmod_left_out, ck_lsmod_cycle, ck_lsmod_as)
from .corrupt_run import SetupError, Spent, TIMEOUT, bounded, run_bounded
from .corrupt_snapshot import snapshot_jobs

# The kernels whose first guest gets the damaged dumps (the suite's time
# budget: each costs 15-30 s of host time).
KERNELS = ("5.10", "6.1", "7.2", "7.2-arm64")
SOURCE = "elf-damaged"
MASK62 = (1 << 62) - 1  # printk descriptor ids (DESC_ID_MASK, 64-bit)
TAINT_OOT_MODULE, TAINT_UNSIGNED_MODULE = 12, 13  # include/linux/panic.h


# ---------------------------------------------------------------- the intact dump

class Recon:
    """What the intact ELF dump holds, by virtual address: the kernel image
    (run.image_phys), the direct map (run.direct) and the module pages kpeek
    vtop translated; offsets of the members the cases rewrite."""

    def __init__(self, run, kpeek, path, ctx):
        self.run, self.kpeek, self.path, self.ctx = run, kpeek, path, ctx
        self.pages = {}
        if run.direct is None:
            raise SetupError("no direct-map address of the guest (see the rig checks)")
        self.ram = T.iomem(run.files)[0]
        missing = [s for s in ("_text", "_end", "init_task", "modules", "runqueues", "__per_cpu_offset")
                   if s not in run.sym]
        if missing:
            raise SetupError("/proc/kallsyms has no %s" % ", ".join(missing))
        self.d = rig.ElfDump(path)
        self.off = self.offsets()
        self.tasks = self.read_tasks()
        self.modules = self.read_modules()

    def close(self):
        self.d.close()

    def kp(self, args):
        rc, out, err = rig.run_kpeek(self.kpeek, ["-c", self.path] + args, timeout=TIMEOUT)
        if rc != 0:
            raise SetupError("kpeek %s on the intact dump: exit %s: %s" % (" ".join(args), rc, err.strip()))
        return out

    def offsets(self):
        want = [("task.tasks", "offsetof(struct task_struct, tasks)"),
                ("task.pid", "offsetof(struct task_struct, pid)"),
                ("task.comm", "offsetof(struct task_struct, comm)"),
                ("task.size", "sizeof(struct task_struct)"),
                ("module.list", "offsetof(struct module, list)"),
                ("module.name", "offsetof(struct module, name)"),
                ("module.refcnt", "offsetof(struct module, refcnt)"),
                ("module.taints", "offsetof(struct module, taints)"),
                ("module.size", "sizeof(struct module)"),
                ("rq.nr_running", "offsetof(struct rq, nr_running)"),
                ("rq.curr", "offsetof(struct rq, curr)"),
                ("rq.cpu", "offsetof(struct rq, cpu)")]
        out = self.kp(["print"] + [e for _, e in want]).strip().split("\n")
        vals = [re.match(r"^\(unsigned long\)(\d+)$", x.strip()) for x in out]
        if len(vals) != len(want) or not all(vals):
            raise SetupError("kpeek print of the offsets: %s" % out)
        return {k: int(m.group(1)) for (k, _), m in zip(want, vals)}

    # --- reading by virtual address
    def phys(self, va):
        r = self.run
        if r.sym["_text"] <= va < r.sym["_end"]:
            return r.image_phys(va)
        if va & ~0xFFF in self.pages:
            return self.pages[va & ~0xFFF] | va & 0xFFF
        pa = (va - r.direct[0] + r.direct[1]) & rig.MASK64
        if va >= r.pob and any(lo <= pa <= hi for lo, hi in self.ram):
            return pa
        raise SetupError("no physical address known for 0x%x" % va)

    def read(self, va, n):
        try:
            return self.d.read_phys(self.phys(va), n)
        except rig.RigError as e:
            raise SetupError(str(e))

    def u64(self, va):
        return struct.unpack("<Q", self.read(va, 8))[0]

    def u32(self, va):
        return struct.unpack("<I", self.read(va, 4))[0]

    def cstr(self, va, n):
        return self.read(va, n).split(b"\0")[0].decode("utf-8", "replace")

    # --- tasks and modules
    def read_tasks(self):
        """{pid: (task address, comm)} of kpeek ps on the intact dump, each
        read back (pid, comm); init_task.tasks.next must be pid 1's node."""
        try:
            rows = json.loads(self.kp(["ps", "--json"]))["tasks"]
        except (ValueError, KeyError) as e:
            raise SetupError("kpeek ps --json on the intact dump: %s" % e)
        o = self.off
        tasks = {}
        for r in rows:
            a = int(r["task"], 16)
            pid = struct.unpack("<i", self.read(a + o["task.pid"], 4))[0]
            comm = self.cstr(a + o["task.comm"], 16)
            if pid != r["pid"] or comm != r["comm"]:
                raise SetupError("task 0x%x holds pid %d %r, kpeek ps said %d %r" % (
                    a, pid, comm, r["pid"], r["comm"]))
            tasks[pid] = (a, comm)
        first = self.u64(self.run.sym["init_task"] + o["task.tasks"]) - o["task.tasks"]
        if 1 not in tasks or first != tasks[1][0]:
            raise SetupError("init_task.tasks.next is task 0x%x, pid 1 is %s" % (first, tasks.get(1)))
        return tasks

    def pid_of(self, name):
        """The pid of the workload process called name in both listings."""
        pre, post = self.ctx.pre["threads"], self.ctx.post["threads"]
        pids = [t for t, x in pre.items() if x.name == name and x.tgid == t and t in post and t in self.tasks]
        if len(pids) != 1:
            raise SetupError("no one process %s in the guest's listings around the dump" % name)
        return pids[0]

    def read_modules(self):
        """{name: struct module address} from the guest's __this_module
        symbols, in /proc/modules order; their pages from kpeek vtop, each
        module's name read back."""
        this = {m: a for a, t, n, m in self.ctx.pre["modsyms"] if n == "__this_module"}
        names = [m["name"] for m in self.ctx.pre["modules"]]
        if [m["name"] for m in self.ctx.post["modules"]] != names or set(names) - set(this):
            raise SetupError("/proc/modules changed around the dump, or a module has no __this_module")
        mods = {n: this[n] for n in names}
        size = self.off["module.size"]
        addrs = sorted({a & ~0xFFF for a in mods.values()} | {(a + size - 1) & ~0xFFF for a in mods.values()})
        try:
            tr = json.loads(self.kp(["vtop", "--json"] + ["0x%x" % a for a in addrs]))["translations"]
            for a, x in zip(addrs, tr):
                self.pages[a] = int(x["paddr"], 16) & ~0xFFF
        except (ValueError, KeyError, TypeError) as e:
            raise SetupError("kpeek vtop of the modules' pages: %s" % e)
        for n, a in mods.items():
            got = self.cstr(a + self.off["module.name"], 56)
            if got != n:
                raise SetupError("struct module at 0x%x holds the name %r, not %r" % (a, got, n))
        return mods

    def module_node(self, name):
        return self.modules[name] + self.off["module.list"]


def allowed_missing(recon, page_va):
    """The pids whose task_struct may lie on the page at page_va."""
    size = recon.off["task.size"]
    return {pid for pid, (a, _) in recon.tasks.items() if a < page_va + 4096 and page_va < a + size}


# ---------------------------------------------------------------- the printk ring

class Ring:
    """The printk ring of the intact dump, from VMCOREINFO alone."""

    def __init__(self, recon):
        vi = recon.d.vmcoreinfo
        try:
            off = lambda k: int(vi["OFFSET(%s)" % k])
            size = lambda k: int(vi["SIZE(%s)" % k])
            prb = recon.u64(int(vi["SYMBOL(prb)"], 16))
            ring = prb + off("printk_ringbuffer.desc_ring")
            self.count_bits = recon.u32(ring + off("prb_desc_ring.count_bits"))
            self.descs = recon.u64(ring + off("prb_desc_ring.descs"))
            self.infos = recon.u64(ring + off("prb_desc_ring.infos"))
            self.head = recon.u64(ring + off("prb_desc_ring.head_id")) & MASK62
            self.tail = recon.u64(ring + off("prb_desc_ring.tail_id")) & MASK62
            self.desc_size, self.info_size = size("prb_desc"), size("printk_info")
            self.state_off = off("prb_desc.state_var")
            self.len_off = off("printk_info.text_len")
            lpos = off("prb_desc.text_blk_lpos")
            self.begin_off = lpos + off("prb_data_blk_lpos.begin")
            self.next_off = lpos + off("prb_data_blk_lpos.next")
            data = prb + off("printk_ringbuffer.text_data_ring")
            self.size_bits = recon.u32(data + off("prb_data_ring.size_bits"))
            self.data = recon.u64(data + off("prb_data_ring.data"))
        except (KeyError, ValueError) as e:
            raise SetupError("VMCOREINFO lacks the printk ring's %s" % e)
        self.recon = recon
        if not 0 < self.count_bits <= 22 or (self.head - self.tail) & MASK62 >= 1 << self.count_bits:
            raise SetupError("printk ring: count_bits %d, ids 0x%x..0x%x" % (self.count_bits, self.tail, self.head))

    def index(self, rid):
        return rid & ((1 << self.count_bits) - 1)

    def ids(self):
        """The ids of the records, oldest first (the tail itself left out:
        it may be the ring's reserved first descriptor)."""
        n = (self.head - self.tail) & MASK62
        return [(self.tail + i) & MASK62 for i in range(1, n + 1)]

    def desc(self, rid):
        return self.descs + self.index(rid) * self.desc_size + self.state_off

    def lines(self, rid):
        """The lines of record rid's text, read from the intact dump as
        kernel/printk/printk_ringbuffer.c lays them out (a block that would
        cross the end of the data array starts at its beginning)."""
        r = self.recon
        d = self.descs + self.index(rid) * self.desc_size
        begin, nxt = r.u64(d + self.begin_off), r.u64(d + self.next_off)
        n = struct.unpack("<H", r.read(self.infos + self.index(rid) * self.info_size + self.len_off, 2))[0]
        if begin & 1 and nxt & 1:
            return [""]  # no data block (an empty text, or lost)
        size = 1 << self.size_bits
        start = begin & (size - 1) if begin >> self.size_bits == (nxt - 1) >> self.size_bits else 0
        blk = self.data + start
        if r.u64(blk) & MASK62 != rid:
            return []  # overwritten by a newer record: no text (ck_dmesg_hole counts what it found)
        return r.read(blk + 8, n).decode("utf-8", "replace").split("\n")


# ---------------------------------------------------------------- the cases
# Each case: a name, its checks' names, and a builder(recon, ring) that
# returns (damage(path), [(kpeek args, check)]) in the order of the names,
# or raises SetupError (then each of its checks fails, saying why).

def task_page(pid_of):
    """The page of a task's task list node left out."""
    def build(r, ring):
        pid = pid_of(r)
        node = r.tasks[pid][0] + r.off["task.tasks"]
        page = node & ~0xFFF
        return (lambda p: dumpedit.drop_page(p, r.phys(page)),
                [(["ps", "--json"], ck_ps_left_out(pid, allowed_missing(r, page), node))])
    return build


def task_link(wild):
    """kp_sleeper_b's tasks.next rewritten: back to pid 1's node (a cycle the
    prev pointers disprove), or to an address nothing maps (pob + 1 TiB)."""
    def build(r, ring):
        off = r.off["task.tasks"]
        bnode, p1node = r.tasks[r.pid_of("kp_sleeper_b")][0] + off, r.tasks[1][0] + off
        to = r.run.pob + (1 << 40) + off if wild else p1node
        ck = ck_ps_stops([to], ("unreadable", "corrupt"), node_after=True) if wild else \
            ck_ps_stops([bnode, p1node], ("corrupt",))
        return lambda p: dumpedit.patch(p, r.phys(bnode), struct.pack("<Q", to)), [(["ps", "--json"], ck)]
    return build


def unlink(r, node):
    """A damage that takes the list node at node out of its list."""
    nxt, prv = r.u64(node), r.u64(node + 8)

    def damage(p):
        dumpedit.patch(p, r.phys(prv), struct.pack("<Q", nxt))
        dumpedit.patch(p, r.phys(nxt + 8), struct.pack("<Q", prv))
    return damage


def hidden_task(r, ring):
    """kp_sleeper_c unlinked from the task list, still in the PID table and
    its parent's children list: what a DKOM rootkit does."""
    pid = r.pid_of("kp_sleeper_c")
    task = r.tasks[pid][0]
    return (unlink(r, task + r.off["task.tasks"]),
            [(["check", "--json", "tasks"],
              ck_check_found("tasks", "pid %d (kp_sleeper_c)" % pid, "not in the task list", task)),
             (["ps", "--json"], ck_ps_stops([], (), hidden=pid))])


def runqueue(r, ring):
    """CPU 1's run queue left out (its pages with nr_running and curr)."""
    o = r.off
    rq1 = r.run.sym["runqueues"] + r.u64(r.run.sym["__per_cpu_offset"] + 8)
    if r.u32(rq1 + o["rq.cpu"]) != 1:
        raise SetupError("per_cpu(runqueues, 1) at 0x%x does not hold cpu 1" % rq1)
    pages = sorted({(rq1 + o["rq.nr_running"]) & ~0xFFF, (rq1 + o["rq.curr"]) & ~0xFFF})

    def damage(p):
        for a in pages:
            dumpedit.drop_page(p, r.phys(a))
    return damage, [(["loadavg", "--json"], ck_loadavg_unknown_running),
                    (["check", "--json", "tasks"], ck_check_cannot("tasks", "CPU 1")),
                    (["ps", "--json"], ck_ps_runqueue)]


def middle_ids(ring, n):
    ids = ring.ids()
    if len(ids) < 4 * n:
        raise SetupError("the printk ring holds %d records" % len(ids))
    return ids, ids[len(ids) // 2:len(ids) // 2 + n]


def dmesg_page(r, ring):
    """The page of printk descriptors holding the middle record left out."""
    ids, (mid,) = middle_ids(ring, 1)
    page = ring.desc(mid) & ~0xFFF
    # A descriptor with any of its bytes on the page is lost with it.
    start = lambda i: ring.desc(i) - ring.state_off
    on = [i for i in ids if start(i) < page + 4096 and page < start(i) + ring.desc_size]
    return (lambda p: dumpedit.drop_page(p, r.phys(page)),
            [(["dmesg", "-r"], ck_dmesg_hole(ring, on))])


def garble(r, ring, which):
    def damage(p):
        for i in which:
            a = r.phys(ring.desc(i))
            v = struct.unpack("<Q", dumpedit.read(p, a, 8))[0]
            dumpedit.patch(p, a, struct.pack("<Q", v ^ 1 << 24))
    return damage


def dmesg_ids(r, ring):
    """Ten descriptors in the middle no longer hold their ids."""
    _, ten = middle_ids(ring, 10)
    ck = ck_dmesg_hole(ring, ten)
    return garble(r, ring, ten), [(["dmesg", "-r"], ck), (["dmesg", "--json"], ck_dmesg_json_hole(10))]


def dmesg_ids_all(r, ring):
    """No descriptor holds its id."""
    ids, _ = middle_ids(ring, 1)
    return garble(r, ring, [ring.tail] + ids), [(["dmesg", "-r"], ck_dmesg_none)]


def module_roles(r):
    """(names newest first, {name: its users}, the modules that use others)."""
    names = list(r.modules)
    users = {m["name"]: [u for u in m["used_by"].split(",") if u and u != "-"] for m in r.ctx.pre["modules"]}
    return names, users, {u for us in users.values() for u in us}


def module_page(user):
    """A module's page left out: one nobody uses and that uses none (between
    others when there is one), or one that uses others (their used_by
    lists then name a module the dump lacks)."""
    def build(r, ring):
        names, users, uses = module_roles(r)
        if user:
            pick = [n for n in names if n in uses and not users[n]]
        else:
            pick = [n for n in names[1:-1] + names if not users[n] and n not in uses]
        if not pick:
            raise SetupError("no such module among %s" % users)
        node = r.module_node(pick[0])
        return lambda p: dumpedit.drop_page(p, r.phys(node)), [(["lsmod", "--json"], ck_lsmod_left_out(pick[0]))]
    return build


def module_cycle(r, ring):
    """The link after a middle module back to the first one."""
    names, _, _ = module_roles(r)
    mid = names[len(names) // 2]
    node, first = r.module_node(mid), r.module_node(names[0])
    return (lambda p: dumpedit.patch(p, r.phys(node), struct.pack("<Q", first)),
            [(["lsmod", "--json"], ck_lsmod_cycle(mid, node))])


def hidden_module(r, ring):
    """A module that uses others unlinked from the modules list, still in
    mod_tree and sysfs: what a module rootkit does to hide."""
    names, users, uses = module_roles(r)
    name = next((n for n in names if n in uses and not users[n]), None)
    if name is None:
        raise SetupError("no module using others: %s" % users)
    return (unlink(r, r.module_node(name)),
            [(["check", "--json", "modules"],
              ck_check_found("modules", "module %s" % name, "not in the modules list", r.modules[name])),
             (["lsmod", "--json"], ck_lsmod_as(drop=(name,)))])


def module_counts(r, ring):
    """refcnt INT_MIN and the taints O and E on a module without taints."""
    name = next((m["name"] for m in r.ctx.pre["modules"] if not m["taints"]), None)
    if name is None:
        raise SetupError("every module is tainted")
    base = r.modules[name]

    def damage(p):
        dumpedit.patch(p, r.phys(base + r.off["module.refcnt"]), struct.pack("<I", 0x80000000))
        dumpedit.patch(p, r.phys(base + r.off["module.taints"]),
                       struct.pack("<Q", 1 << TAINT_OOT_MODULE | 1 << TAINT_UNSIGNED_MODULE))

    def as_damaged(m):
        if m["name"] == name:
            m["refcnt"], m["taints"] = None, "(OE)"
    return damage, [(["lsmod", "--json"], ck_lsmod_as(change=as_damaged))]


CASES = [
    ("ps-page-first", ["ps-page-first"], task_page(lambda r: 1)),
    ("ps-page-middle", ["ps-page-middle"], task_page(lambda r: r.pid_of("kp_sleeper_b"))),
    ("ps-cycle", ["ps-cycle"], task_link(False)),
    ("ps-wild", ["ps-wild"], task_link(True)),
    ("hidden-task", ["check-hidden-task", "ps-hidden-task"], hidden_task),
    ("runqueue", ["loadavg-runqueue", "check-runqueue", "ps-runqueue"], runqueue),
    ("dmesg-page", ["dmesg-desc-page"], dmesg_page),
    ("dmesg-ids", ["dmesg-ids", "dmesg-ids-json"], dmesg_ids),
    ("dmesg-ids-all", ["dmesg-ids-all"], dmesg_ids_all),
    ("lsmod-page", ["lsmod-page"], module_page(False)),
    ("lsmod-page-user", ["lsmod-page-user"], module_page(True)),
    ("lsmod-cycle", ["lsmod-cycle"], module_cycle),
    ("hidden-module", ["check-hidden-module", "lsmod-hidden-module"], hidden_module),
    ("module-counts", ["lsmod-refcnt-int-min"], module_counts),
]


# ---------------------------------------------------------------- jobs

def corrupt_jobs(run, kpeek, pool):
    """The damaged copies of run's ELF dump and their checks."""
    if run.kernel.id not in KERNELS or not run.full:
        return []
    jobs = []
    name = lambda ck: "%s:%s" % (run.prefix(SOURCE), ck)
    # The plain build: its peak RSS is kpeek's own (ASan's is not).
    kpeek = plain = rig.find_kpeek(prefer_asan=False)
    spent = Spent(run.name)
    intact = {}  # kpeek args -> the future of their run on the intact dump (its peak RSS)
    t0 = time.monotonic()

    def fail_all(names, why):
        for n in names:
            jobs.append((name(n), None, lambda res, c: (False, res[2]), None, (None, "", why)))
    ctx = recon = ring = None
    try:
        if "elf" not in run.dumps or not run.files:
            raise SetupError("no ELF dump or no files of %s (see the rig checks)" % run.name)
        ctx = run.ctx("elf")
        recon = Recon(run, kpeek, run.dumps["elf"][0], ctx)
        ring = Ring(recon)
    except (T.TruthError, SetupError, rig.RigError, OSError) as e:
        if recon:
            recon.close()
        for _, names, _ in CASES:
            fail_all(names, "setup: %s" % e)
        return jobs + (snapshot_jobs(run, kpeek, pool, ctx, spent) if ctx else [])
    for case, names, build in CASES:
        path = os.path.join(rig.BUILD, "%s.%s-%s.core" % (run.name, SOURCE, case))
        try:
            damage, checks = build(recon, ring)
            dumpedit.copy(run.dumps["elf"][0], path)
            damage(path)
        except (dumpedit.EditError, SetupError, rig.RigError, OSError) as e:
            fail_all(names, "setup of %s: %s" % (case, e))
            continue
        for n, (args, ck) in zip(names, checks):
            key = tuple(args)
            if key not in intact:
                intact[key] = pool.submit(run_bounded, plain, ["-c", run.dumps["elf"][0]] + args)
            jobs.append((name(n), pool.submit(run_bounded, plain, ["-c", path] + args),
                         bounded(ck, spent, intact[key]), ctx, None))
    recon.close()
    jobs += snapshot_jobs(run, kpeek, pool, ctx, spent)
    timed("%s corrupt checks' setup (damaged copies, kdump-d31 snapshots)" % run.name, t0)
    return jobs
