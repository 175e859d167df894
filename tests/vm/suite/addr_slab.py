# SPDX-License-Identifier: MIT
# Address forensics on slab objects the guest names itself (issue 29), on
# the ELF and kdump-compressed dumps of every guest, against the truth
# readings around the dump (addr_objects.py's rules):
#   addr-whatis-sockets  whatis of each TCP and UDP socket of /proc/net/
#                        {tcp,tcp6,udp,udp6} + 1 (their addresses, real to
#                        root under kernel.kptr_restrict=1): an allocated
#                        object of the protocol's slab cache (TCP, TCPv6,
#                        tw_sock_TCP, request_sock_TCP, UDP, UDPv6, or the
#                        cache it is merged into) that starts at the
#                        socket, offset 1;
#   addr-whatis-kmalloc  whatis of netlink sockets of /proc/net/netlink + 1
#                        (struct netlink_sock: sk_alloc() of a proto with no
#                        cache of its own, so kmalloc()): an allocated
#                        object of a kmalloc cache that starts there;
#   addr-whatis-freed    whatis of the TCP listeners kp_net opened, read
#                        from /proc/net/tcp and closed at its start
#                        (net.freed) + 1, in a slab with a socket it kept
#                        open, but those a socket of either reading has
#                        taken again: a free object of the TCP cache,
#                        offset 1 (on a
#                        CPU's or its slab's freelist, whose pointers
#                        CONFIG_SLAB_FREELIST_HARDENED encodes);
#   addr-slab-tcp        slab --allocated TCP: every TCP socket of
#                        /proc/net/tcp among the allocated objects;
#   addr-search-socket   search -k of the first TCP listener of /proc/net/tcp
#                        (a pointer to a known object): held by exactly one
#                        allocated sock_inode_cache object, its struct socket;
#   addr-search-kmalloc  search -k -s of the path of a Unix socket
#                        /proc/net/unix lists bound in both readings (a
#                        string in a kmalloc buffer: the struct unix_address
#                        of unix_create_addr(), bind()'s copy of the path):
#                        in exactly one allocated kmalloc object, within the
#                        first 16 bytes (refcnt, len, and hash until 5.16,
#                        then sun_family).
# A socket's cache is its protocol's (TCP, UDP, ...) or, where that cache
# was merged into another of the same size and flags (6.1's UDP into
# signal_cache), that other one, as /sys/kernel/slab's links say
# (cache_names()).
import re

import truth as T

from .addr_objects import (KERNEL_ADDR, PAGE, answer, fact, num, readings, search_json, slab_unknown, spread,
                           stable, text)
from .common import ran
from .results import outcome_of, passed

NET_FILES = ("tcp", "tcp6", "udp", "udp6")
# /proc/net/tcp's st of a timewait and of a request socket (get_openreq4())
TCP_TIME_WAIT, TCP_SYN_RECV, TCP_LISTEN = 6, 3, 10
# A search hit in a slab object, as search's one line says it.
SLAB_HIT = re.compile(r"^slab (\S+) object 0x([0-9a-f]+)\+0x([0-9a-f]+), allocated$")


def socket_cache(name, st):
    v6 = "v6" if name.endswith("6") else ""
    if name.startswith("udp"):
        return "UDP" + v6
    if st == TCP_TIME_WAIT:
        return "tw_sock_TCP" + v6
    if st == TCP_SYN_RECV:
        return "request_sock_TCP" + v6
    return "TCP" + v6


def sockets(files, tag):
    """[(file, pointer, state)] of /proc/net/{tcp,tcp6,udp,udp6}; a
    TruthError if the addresses are hashed (kptr_restrict was not 1)."""
    out, hashed = [], 0
    for name in NET_FILES:
        for line in text(files, "sys.%s.net-%s" % (tag, name)).splitlines()[1:]:
            p = line.split()
            if len(p) < 12:
                continue
            ptr = int(p[11], 16)
            if ptr < KERNEL_ADDR:
                hashed += 1
                continue
            out.append((name, ptr, int(p[3], 16)))
    if hashed and not out:
        raise T.TruthError("sys.%s.net-*: the socket addresses are hashed (kptr_restrict not 1)" % tag)
    return out


def slab_names(files, tag):
    return {l.split()[0] for l in text(files, "sys.%s.slabinfo" % tag).splitlines()[2:] if l.strip()}


def cache_names(files, tag):
    """{cache name: the name /proc/slabinfo lists it under}. A cache merged
    into another (mm/slab_common.c find_mergeable()) is in /sys/kernel/slab
    a link to the directory of the cache it shares, whose kmem_cache keeps
    the name of the cache made first: the one /proc/slabinfo lists."""
    listed = slab_names(files, tag)
    links = dict(l.split() for l in text(files, "sys.%s.slablinks" % tag).splitlines() if len(l.split()) == 2)
    by_target = {links[n]: n for n in listed if n in links}
    out = {n: n for n in listed}
    for alias, target in links.items():
        if alias not in out and target in by_target:
            out[alias] = by_target[target]
    return out


def socket_picks(run, source):
    """([(file, pointer, cache)], [(file, pointer, cache name)] of sockets
    whose cache /proc/slabinfo and /sys/kernel/slab do not name)."""
    pre, _ = readings(run, source)
    names = cache_names(run.files, pre)
    picks, merged = [], []
    for name, ptr, st in stable(run, source, sockets):
        cache = socket_cache(name, st)
        if cache in names:
            picks.append((name, ptr, names[cache]))
        else:
            merged.append((name, ptr, cache))
    return picks, merged


def slab_object(what, allocated):
    """one(pick, answer) for answer(): whatis of a (name, pointer, cache)
    pick + 1 says that cache's object at pointer, offset 1, allocated or
    free as asked."""
    def one(pick, got):
        name, ptr, cache = pick
        s = (fact(got, "slab") or {}).get("slab") or {}
        want = {"cache_name": cache, "object": ptr, "offset": 1, "allocated": allocated}
        have = {k: num(s.get(k)) if k == "object" else s.get(k) for k in want}
        if have != want:
            unknown = slab_unknown(got)
            if unknown and (have == dict(want, allocated=None) or not fact(got, "slab")):
                return unknown
            return "%s %s socket 0x%x + 1: whatis %s, want %s" % (what, name, ptr, have, want)
        return None
    return one


def ck_sockets(picks, merged):
    def ck(res, c):
        o = outcome_of(answer(res, picks, slab_object("open", True)))
        if o.kind != "pass" or not merged:
            return o
        return passed(o.detail, o.skipped + ["%s socket 0x%x: cache %s in neither /proc/slabinfo nor "
                                             "/sys/kernel/slab" % m for m in merged])
    return ck


def slab_span(files, tag, cache):
    """Bytes of one slab of cache (/proc/slabinfo's pagesperslab)."""
    for l in text(files, "sys.%s.slabinfo" % tag).splitlines()[2:]:
        p = l.split()
        if len(p) > 5 and p[0] == cache:
            return int(p[5]) * PAGE
    raise T.TruthError("no %s line in sys.%s.slabinfo" % (cache, tag))


# kmalloc's caches: kmalloc-SIZE, kmalloc-cg-SIZE (memcg accounted, 5.14+),
# kmalloc-rnd-NN-SIZE (CONFIG_RANDOM_KMALLOC_CACHES, 6.6+).
KMALLOC_RE = re.compile(r"^kmalloc-(?:cg-|rnd-\d+-)?\d+k?$")


def netlink_socks(files, tag):
    """The sk addresses of /proc/net/netlink (real under kptr_restrict=1)."""
    out = []
    for line in text(files, "sys.%s.net-netlink" % tag).splitlines()[1:]:
        p = line.split()
        if p and int(p[0], 16) >= KERNEL_ADDR:
            out.append(int(p[0], 16))
    return out


def ck_kmalloc(picks):
    def one(ptr, got):
        s = (fact(got, "slab") or {}).get("slab") or {}
        have = {k: num(s.get(k)) if k == "object" else s.get(k) for k in ("cache_name", "object", "offset",
                                                                         "allocated")}
        unknown = slab_unknown(got)
        if unknown and (not fact(got, "slab") or (KMALLOC_RE.match(have["cache_name"] or "") and
                                                  have == dict(have, object=ptr, offset=1, allocated=None))):
            return unknown
        if not KMALLOC_RE.match(have["cache_name"] or "") or \
                have != dict(have, object=ptr, offset=1, allocated=True):
            return "netlink socket 0x%x + 1: whatis %s, want an allocated kmalloc object at 0x%x, offset 1" % (
                ptr, have, ptr)
        return None
    return lambda res, c: answer(res, picks, one)


def freed_picks(run, source):
    """[(name, pointer, cache)] of net.freed's sockets that no socket of
    the readings around the dump has at its address, and whose slab holds
    a TCP socket both readings list (kp_net keeps every other one open):
    so the slab is still the TCP cache's. (A slab whose objects were all
    freed goes back to the page allocator, and another cache may have it.)
    TCP's cache is never merged (SLAB_TYPESAFE_BY_RCU): only a TCP socket
    can take a freed one's place, and /proc/net/tcp lists every one kp_net
    or anyone else made. A slab is 2^order pages, so aligned to its size
    (the buddy allocator's blocks) in the direct map."""
    pre, post = readings(run, source)
    taken = {ptr for tag in (pre, post) for _, ptr, _ in sockets(run.files, tag)}
    cache = cache_names(run.files, pre).get("TCP")
    if cache != "TCP":
        raise T.TruthError("TCP's cache is %r in sys.%s.slabinfo and .slablinks, not its own" % (cache, pre))
    span = slab_span(run.files, pre, cache)
    kept = {ptr // span for name, ptr, _ in stable(run, source, sockets) if name == "tcp"}
    out = []
    for line in text(run.files, "net.freed").splitlines():
        p = line.split()
        if len(p) == 2 and p[0] == "tcp":
            ptr = int(p[1], 16)
            if ptr not in taken and ptr // span in kept:
                out.append(("tcp", ptr, cache))
    return out


def ck_freed(picks):
    return lambda res, c: answer(res, picks, slab_object("closed", False))


def ck_slab_tcp(ptrs):
    def ck(res, c):
        rc, out, err = res
        if rc != 0:
            return False, ran(res)
        got = set()
        for line in out.split():
            try:
                got.add(int(line, 16))
            except ValueError:
                return False, "not an address per line: %r" % line
        missing = [p for p in ptrs if p not in got]
        if missing:
            return False, "TCP sockets of /proc/net/tcp not listed as allocated: %s (of %d listed)" % (
                ", ".join("0x%x" % p for p in missing), len(got))
        return True, "%d TCP sockets among %d allocated objects" % (len(ptrs), len(got))
    return ck


def listener(run, source):
    """The first TCP listener of /proc/net/tcp in both readings (kp_net's
    listeners stay open; tests/vm/init picks the same one live)."""
    for name, ptr, st in stable(run, source, sockets):
        if name == "tcp" and st == TCP_LISTEN:
            return ptr
    raise T.TruthError("no TCP listener of /proc/net/tcp in both readings")


def ck_search_socket(ptr):
    """search -k of a TCP listener's struct sock: held by exactly one
    allocated sock_inode_cache object (its struct socket's sk: each socket
    a process opened has one)."""
    def ck(res, c):
        hits, why = search_json(res)
        if hits is None or why:
            return False, why
        held = [(num(h.get("address")), m) for h, m in ((h, SLAB_HIT.match(h.get("what") or "")) for h in hits)
                if m and m.group(1) == "sock_inode_cache"]
        if len(held) != 1:
            return False, "TCP listener 0x%x: %d sock_inode_cache hits %s among %d: %s" % (
                ptr, len(held), [h for h, _ in held], len(hits), [h.get("what") for h in hits][:12])
        return True, "TCP listener 0x%x held by struct socket 0x%s, among %d hits" % (
            ptr, held[0][1].group(2), len(hits))
    return ck


def unix_paths(files, tag):
    """[(struct sock, path)] of the Unix sockets /proc/net/unix lists
    bound to a path of the file system (an abstract one's starts with '@')."""
    out = []
    for line in text(files, "sys.%s.net-unix" % tag).splitlines()[1:]:
        p = line.split()
        if len(p) == 8 and p[7].startswith("/") and int(p[0].rstrip(":"), 16) >= KERNEL_ADDR:
            out.append((int(p[0].rstrip(":"), 16), p[7]))
    return out


def bound_path(run, source):
    for sk, path in stable(run, source, unix_paths):
        if 12 <= len(path) <= 100 and all(0x21 <= ord(ch) < 0x7f for ch in path):
            return sk, path
    raise T.TruthError("no Unix socket of /proc/net/unix bound to a printable path of 12 to 100 "
                       "bytes in both readings")


UNIX_ADDRESS_HEAD = 16


def ck_search_kmalloc(sk, path):
    def ck(res, c):
        hits, why = search_json(res)
        if hits is None or why:
            return False, why
        held = [m for m in (SLAB_HIT.match(h.get("what") or "") for h in hits)
                if m and KMALLOC_RE.match(m.group(1)) and int(m.group(3), 16) <= UNIX_ADDRESS_HEAD]
        if len(held) != 1:
            return False, "%r (Unix socket 0x%x): %d hits in allocated kmalloc objects within %d bytes " \
                "of their start, among %d: %s" % (path, sk, len(held), UNIX_ADDRESS_HEAD, len(hits),
                                                 [h.get("what") for h in hits][:12])
        return True, "%r (Unix socket 0x%x) in %s object 0x%s+0x%s, among %d hits" % (
            path, sk, held[0].group(1), held[0].group(2), held[0].group(3), len(hits))
    return ck


def whatis_check(name, picks, args, check, why):
    """One whatis check of picks, or a failing one that says why not."""
    if picks:
        return (name, ["whatis", "--json"] + args, check)
    return (name, ["info"], lambda res, c: (False, why))


def slab_checks(run, source):
    """[(check name, kpeek args, check)] of one dump source."""
    out = []
    try:
        picks, merged = socket_picks(run, source)
        why = "no TCP or UDP socket in both readings"
    except T.TruthError as e:
        picks, merged, why = [], [], str(e)
    out.append(whatis_check("addr-whatis-sockets", picks, ["0x%x" % (p[1] + 1) for p in picks],
                            ck_sockets(picks, merged), why))
    tcp = [ptr for name, ptr, cache in picks if cache == "TCP"]
    if tcp:
        out.append(("addr-slab-tcp", ["slab", "--allocated", "TCP"], ck_slab_tcp(tcp)))
    else:
        out.append(("addr-slab-tcp", ["info"], lambda res, c, why=why: (False, "no TCP socket: %s" % why)))
    try:
        nl, why = spread(stable(run, source, netlink_socks)), "no netlink socket in both readings"
    except T.TruthError as e:
        nl, why = [], str(e)
    out.append(whatis_check("addr-whatis-kmalloc", nl, ["0x%x" % (p + 1) for p in nl], ck_kmalloc(nl), why))
    try:
        freed, why = freed_picks(run, source), "no closed socket in a slab with an open one, or not taken again"
    except T.TruthError as e:
        freed, why = [], str(e)
    out.append(whatis_check("addr-whatis-freed", freed, ["0x%x" % (p[1] + 1) for p in freed],
                            ck_freed(freed), why))
    try:
        ptr = listener(run, source)
        out.append(("addr-search-socket", ["search", "-k", "--json", "0x%x" % ptr], ck_search_socket(ptr)))
    except T.TruthError as e:
        why2 = str(e)
        out.append(("addr-search-socket", ["info"], lambda res, c: (False, why2)))
    try:
        sk, path = bound_path(run, source)
        out.append(("addr-search-kmalloc", ["search", "-k", "--json", "-s", path], ck_search_kmalloc(sk, path)))
    except T.TruthError as e:
        why3 = str(e)
        out.append(("addr-search-kmalloc", ["info"], lambda res, c: (False, why3)))
    return out
