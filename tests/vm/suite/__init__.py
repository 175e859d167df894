# SPDX-License-Identifier: MIT
# The QEMU integration suite as a package; tests/vm/run-suite runs it, and
# doc/testing.md describes it.
#
# A check's name is KERNEL:GUEST:SOURCE:CHECK. Kernels: tests/vm/kernels.conf.
# Guests: l5 (-cpu max: 5-level paging) and l4 (la57=off) on x86-64, a52 and
# a48 (n48: without pointer authentication) on arm64 (guest.py), and the
# guests of their own "rootkit" (rootkit.py)
# and "kdump" (kdump.py). Sources (sources.py runs the command list on each):
#   live          kpeek inside the guest, on /proc/kcore
#   elf-novmci    dump-guest-memory before qemu_fw_cfg is loaded: no VMCOREINFO
#   elf           dump-guest-memory, ELF with VMCOREINFO
#   kdump-flat    dump-guest-memory -z: kdump zlib, QEMU's flattened layout
#   kdump         the same reassembled by makedumpfile -R (standard layout)
#   kdump-lzo, kdump-snappy   dump-guest-memory -l/-s, when this QEMU can
#                 (Debian's 7.2: "not available now"); asked once a run
# and, on the first guest of each kernel (dumps.py, checks.py):
#   elf-snap      kpeek snapshot of the elf dump, made on the host
#   kdump-d31     makedumpfile -d 31 -c of elf-snap (makedumpfile refuses
#                 QEMU's ELF dumps themselves); kdump-d31-lzo the same with -l
#   snap          kpeek snapshot taken inside the guest from /proc/kcore,
#                 written to a virtio-9p share (kernels with 9p)
#   elf-patched-table, elf-patched-call   copies of the elf dump with one
#                 syscall hook written by the rig: check syscalls must flag it
#   panic         the ELF dump of the first guest after sysrq c
#   elf-novmci+elf  kpeek diff of the two ELF dumps
# and on the first guest of some kernels:
#   elf-damaged   copies of the elf dump, each damaged once (corrupt.py:
#                 5.10, 6.1, 7.2, 7.2-arm64); kdump-d31:snapshot-* there too
#   live-churn    kpeek live while tasks, threads and a module come and go
#                 (churn.py: 6.1, 7.2-arm64)
# and in guests of their own (KERNEL:rootkit:SOURCE, KERNEL:kdump:SOURCE):
#   rootkit live/elf/kdump-flat/panic   the test rootkit (tests/vm/modules),
#                 where it can be built (6.1)
#   kdump vmcore, kdump d31   a real kdump (crashkernel=, kexec -p): the
#                 crash kernel's /proc/vmcore and makedumpfile -c -d 31 of it
#                 (x86-64, the standard flavour of each release)
# The rig's own steps are checks too (KERNEL:GUEST:rig:STEP), and bad input
# on the host is KERNEL:err:NAME (errors.py).
#
# Modules: runner (main loop, summary), results (accounting), common (shared
# helpers, Ctx), guest, rootkit, kdump (the guests), dumps (host-made dumps,
# page checks), sources (the command list, a guest's jobs), and one module
# of checks per area: symbols, tasks, modules, dmesg, bt, console (the
# console's crash output), panic, checks (kpeek check), process (one process
# in depth: the processes of ../kp_proc.c), system (memory, slab caches,
# network, sockets, run queues, IRQs), errors, taints (the taint mask),
# corrupt (damaged dumps), churn (live churn), python (the Python bindings
# on the elf and kdump dumps of every main guest: ../pycheck.py). The rig
# (../rig.py) boots the guests; the guest's own view is parsed by ../truth.py.
