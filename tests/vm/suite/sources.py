# SPDX-License-Identifier: MIT
# What runs on each source of a guest: the command list (the CHECK part of
# KERNEL:GUEST:SOURCE:CHECK) and the jobs of one guest.
import rig
import truth as T

from .addr import addr_checks
from .bt import ck_bt_all, ck_bt_cpus, ck_panic_bt
from .checks import ck_check_clean, ck_patched_json, ck_patched_text
from .common import SYMBOLS, notes
from .dmesg import ck_dmesg
from .dumps import ck_excluded, ck_pages, d31_compressors
from .errors import ck_error
from .modules import ck_list_modules, ck_lsmod
from .panic import ck_no_panic, ck_panic
from .report import KINDS, ck_report_running, report_jobs
from .process import process_checks
from .symbols import ck_diff_jiffies, ck_info_format, ck_info_levels, ck_info_value, ck_print_jiffies, ck_print_nr_cpu_ids, ck_print_string, ck_rd_banner, ck_sym, ck_sym_list, ck_sym_module, ck_sym_recovered, ck_vtop, ck_watch, module_function
from .system import system_checks
from .taints import ck_taint
from .tasks import ck_loadavg, ck_ps


def command_checks(run, source):
    """[(check name, kpeek args, check)] for one source of one guest."""
    live = source == "live"
    if run.arch == "arm64":
        facts = [("info-kimage_voffset", ["info"], ck_info_value("kimage_voffset", "kimage_voffset")),
                 ("info-PAGE_OFFSET", ["info"], ck_info_value("PAGE_OFFSET", "pob"))]
    else:
        facts = [("info-phys_base", ["info"], ck_info_value("phys_base", "phys_base")),
                 ("info-page_offset_base", ["info"], ck_info_value("page_offset_base", "pob"))]
    c = [("info", ["info"], ck_info_levels)] + facts + [
         ("sym-list", ["sym", "-l"], ck_sym_list(lambda c: run.vmcoreinfo_only_syms))]
    c += [("sym-" + s, ["sym", s], ck_sym(s)) for s in SYMBOLS]
    if not live:
        mf = module_function(run, run.dumps[source][1]) if source in run.dumps else None
        args = ["sym", mf[2], "0x%x" % (mf[0] + 8)] if mf else ["sym", "kp_no_module"]
        c.append(("sym-module-function", args, ck_sym_module(mf)))
    c += [("print-init_task.comm", ["print", "init_task.comm"],
           ck_print_string("the idle task of CPU 0", lambda c: "swapper/0")),
          ("print-release", ["print", "init_uts_ns.name.release"],
           ck_print_string("uname -r", lambda c: T.text(c.files, "boot.uname").strip())),
          ("print-nr_cpu_ids", ["print", "nr_cpu_ids"], ck_print_nr_cpu_ids),
          ("print-jiffies", ["print", "jiffies"], ck_print_jiffies),
          ("vtop-_text", ["vtop", "_text"], ck_vtop("_text")),
          ("vtop-directmap", ["vtop", "0x%x" % run.direct[0] if run.direct else "?"], ck_vtop("direct")),
          ("rd-banner", ["rd", "-a", "--json", "linux_banner"], ck_rd_banner),
          ("list-modules", ["list", "-H", "-o", "module.list", "-s", "module.name", "--json", "modules"],
           ck_list_modules),
          ("ps", ["ps", "--json"], ck_ps(True)),
          ("ps-threads", ["ps", "-t", "--json"], ck_ps(False)),
          ("lsmod", ["lsmod", "--json"], ck_lsmod),
          ("loadavg", ["loadavg", "--json"], ck_loadavg),
          ("dmesg", ["dmesg", "-r"], ck_dmesg),
          ("check", ["check", "--json"], ck_check_clean(run)),
          ("panic-none", ["panic", "--json"], ck_no_panic),
          ("taint", ["panic", "--json"], ck_taint),
          ("report", ["report", "--json"], ck_report_running),
          ("bt-all", ["bt", "--all", "--json"], ck_bt_all)]
    if live:
        c += [("watch-jiffies", None, ck_watch),
              ("watch-jiffies-computed", None, lambda res, c: ck_watch(res, c, 1)),
              ("sym-unknown", None, ck_error),
              ("sym-list-restricted", None, ck_sym_list(lambda c: run.vmcoreinfo_only_syms))]
    else:
        c.append(("info-format", ["info"], ck_info_format(source)))
    if source == "elf" and run.has_functions_kallsyms:
        # Issue 36: the recovery of variables, checked where kallsyms has them.
        c.append(("sym-recovered", ["--kallsyms", run.functions_kallsyms, "sym", "-l", "--json"],
                  ck_sym_recovered))
    if live and not run.full:
        # A kernel's second guest (other paging levels) runs the core live
        # commands only (kp_live=core): its first guest runs the process,
        # system and address ones on the same kernel, and 4-level paging
        # live is another kernel's first guest.
        return c
    # One process in depth: the workload of tests/vm/kp_proc.c.
    c += process_checks(run, source)
    # The system: the workload of tests/vm/init net_workload and kp_proc's net role.
    c += system_checks(run, source)
    c += addr_checks(run, source)
    return c


# Sources that hold the same pages as another, whose checks are all run:
# makedumpfile -d 31 with another compressor than zlib (kdump-d31-lzo ...)
# as kdump-d31, and QEMU's flattened kdump file as the kdump file
# makedumpfile -R makes of it. What each adds is how its pages are found
# and decompressed, read by these (kernel text and data, page tables, the
# log, every task, slab objects, a process's memory; the format's name) and
# by rd-pages (kdump-flat's pages against the ELF dump and libkdumpfile),
# and issue 29's whatis (one run of every address: slab objects, stacks,
# symbols, modules, vmalloc areas; -p: per-CPU areas and iomem), slab, page
# and (kdump-flat) search -u.
VARIANT_CHECKS = {"info", "info-format", "sym-jiffies", "print-release", "vtop-directmap", "rd-banner",
                  "ps-threads", "dmesg", "report", "bt-all", "proc-status", "proc-files", "addr-slab-tcp",
                  "addr-page-envpage", "addr-search-user"}


def variant(source):
    return source == "kdump-flat" or source.startswith("kdump-d31-")


def variant_check(name):
    return name in VARIANT_CHECKS or name.startswith("addr-whatis-")


def guest_jobs(r, kpeek, pool, compressors):
    """(name, future or None, check, ctx, result or None) of one guest."""
    jobs = []

    def fail_all(source, why):
        for tag, args, ck in command_checks(r, source):
            jobs.append(("%s:%s" % (r.prefix(source), tag), None, lambda res, c: (False, res[2]), None,
                         (None, "", why)))

    if not r.files:
        fail_all("live", "the guest wrote no files (see the rig checks)")
    else:
        for tag, args, ck in command_checks(r, "live"):
            block = "info" if tag.startswith("info") else "panic-none" if tag == "taint" else \
                "addr-whatis" if tag.startswith("addr-whatis-") and tag != "addr-whatis-percpu" else tag
            try:
                ctx = r.live_ctx(block)
            except T.TruthError as e:
                jobs.append(("%s:%s" % (r.prefix("live"), tag), None, lambda res, c: (False, res[2]), None,
                             (None, "", "no ground truth: %s" % e)))
                continue
            jobs.append(("%s:%s" % (r.prefix("live"), tag), None, ck, ctx, r.live_result(block)))
    expected = ["elf-novmci", "elf", "kdump-flat", "kdump"]
    if r.full:
        expected += ["elf-snap"] + [c[0] for c in d31_compressors(r, compressors)] + \
            (["snap"] if r.snapshot else [])
    expected += [x for x in r.dumps if x not in expected]
    for source in expected:
        if source not in r.dumps:
            fail_all(source, "no %s dump of %s (see the rig checks)" % (source, r.name))
            continue
        try:
            ctx = r.ctx(source)
        except T.TruthError as e:
            fail_all(source, "no ground truth: %s" % e)
            continue
        runs_of = {}
        checks = command_checks(r, source)
        if variant(source):
            checks = [x for x in checks if variant_check(x[0])]
        for tag, args, ck in checks:
            key = tuple(args)
            if key not in runs_of:
                runs_of[key] = pool.submit(rig.run_kpeek, kpeek, ["-c", r.dumps[source][0]] + args)
            jobs.append(("%s:%s" % (r.prefix(source), tag), runs_of[key], ck, ctx, None))
    for source, paddr in sorted(r.excluded.items()):
        jobs.append(("%s:rd-excluded-page" % r.prefix(source),
                     pool.submit(rig.run_kpeek, kpeek, ["-c", r.dumps[source][0], "rd", "-p",
                                                        "0x%x" % paddr, "8"]),
                     ck_excluded(paddr), None, None))
    # Page contents of the kdump files against the ELF dump of the same stop
    # and libkdumpfile.
    if "elf" in r.dumps and r.files:
        ram, _ = T.iomem(r.files)
        big = max(ram, key=lambda x: x[1] - x[0]) if ram else (0, 0)
        pages = [(big[0] + (big[1] - big[0]) * i // 17) & ~0xFFF for i in range(1, 17)]
        # libkdumpfile 0.5.1 refuses the upper pages of arm64 RAM (which
        # starts at 1 GiB) in QEMU's kdump files ("Out-of-bounds PFN", seen
        # with 6.12 arm64); the ELF dump of the same stop still checks them.
        use_lib = r.arch == "amd64"
        if not use_lib:
            notes.append("%s: kdump pages checked against the ELF dump only (libkdumpfile "
                         "refuses upper arm64 pages)" % r.kernel.id)
        for source in ("kdump-flat", "kdump"):
            if source not in r.dumps:
                continue
            futs = [pool.submit(rig.run_kpeek, kpeek, ["-c", r.dumps[source][0], "rd", "-p", "--json",
                                                       "0x%x" % p, "4096"]) for p in pages]
            jobs.append(("%s:rd-pages" % r.prefix(source), futs,
                         ck_pages(r.dumps["elf"][0], pages, (r.dumps[source][0], source == "kdump" and use_lib)),
                         None, None))
    # diff between the two ELF dumps of the guest (before and after
    # qemu_fw_cfg), each within its own brackets.
    if "elf-novmci" in r.dumps and "elf" in r.dumps and r.files:
        try:
            a = (T.Stamp(r.files, "truth.s0.post"), T.Stamp(r.files, "truth.s0-after.pre"))
            b = (T.Stamp(r.files, "truth.s1.post"), T.Stamp(r.files, "truth.s1-after.pre"))
            jobs.append(("%s:diff-jiffies" % r.prefix("elf-novmci+elf"),
                         pool.submit(rig.run_kpeek, kpeek, ["diff", "--json", "jiffies",
                                                            r.dumps["elf-novmci"][0], r.dumps["elf"][0]]),
                         ck_diff_jiffies(a, b), None, None))
        except T.TruthError as e:
            jobs.append(("%s:diff-jiffies" % r.prefix("elf-novmci+elf"), None,
                         lambda res, c: (False, res[2]), None, (None, "", "no ground truth: %s" % e)))
    if r.panic_command:
        name = "%s:panic-summary" % r.prefix("panic")
        if r.panic:
            jobs.append((name, pool.submit(rig.run_kpeek, kpeek, ["-c", r.panic[0], "panic", "--json"]),
                         ck_panic(r.panic[1], r.kernel.release), None, None))
            jobs.append(("%s:bt-panic" % r.prefix("panic"),
                         pool.submit(rig.run_kpeek, kpeek, ["-c", r.panic[0], "bt", "--json"]),
                         ck_panic_bt(r.panic[1], r.arch), None, None))
            jobs += report_jobs(r.prefix, {"panic": r.panic[0]}, r.panic[1], r.kernel.release,
                                KINDS[r.panic_command], kpeek, pool, files=r.files)
            jobs.append(("%s:bt-cpus" % r.prefix("panic"),
                         pool.submit(rig.run_kpeek, kpeek, ["-c", r.panic[0], "bt", "-a", "--json"]),
                         ck_bt_cpus, None, None))
        else:
            why = (None, "", "no dump of the panicked guest (see the rig checks)")
            for what in ("panic-summary", "bt-panic", "bt-cpus", "report"):
                jobs.append(("%s:%s" % (r.prefix("panic"), what), None, lambda res, c: (False, res[2]),
                             None, why))
    for source in ("elf-patched-table", "elf-patched-call") if r.full and not r.no_data_symbols else ():
        name = "%s:check-syscalls" % r.prefix(source)
        if source not in r.patched:
            if source == "elf-patched-call" and "x64_sys_call" not in r.sym and r.sym:
                continue  # this kernel has no x64_sys_call() dispatcher
            why = (None, "", "no %s dump of %s (see the rig checks)" % (source, r.name))
            jobs.append((name, None, lambda res, c: (False, res[2]), None, why))
            jobs.append((name + "-json", None, lambda res, c: (False, res[2]), None, why))
            continue
        path, where_re, where, table, nr, target = r.patched[source]
        jobs.append((name, pool.submit(rig.run_kpeek, kpeek, ["-c", path, "check", "syscalls"]),
                     ck_patched_text(where_re, where, target), None, None))
        jobs.append((name + "-json", pool.submit(rig.run_kpeek, kpeek,
                                                 ["-c", path, "check", "--json", "syscalls"]),
                     ck_patched_json(table, nr, target), None, None))
    return jobs
