# SPDX-License-Identifier: MIT
# Checks of modules: lsmod, list of the modules list, and a walk of a
# module's own structures with its BTF.
import json
import re

from .common import json_of, ran, udiff
from .results import limited, passed, skipped


def module_line(m):
    return "%s %d %d %s %s 0x%x %s" % (m["name"], m["size"], m["refcnt"], m["used_by"], m["state"],
                                        m["base"], m["taints"])


def proc_used_by(r):
    """lsmod --json's users (an array of names, null when unread, and
    permanent) as /proc/modules' column prints them ("a,b,", "[permanent],",
    "-"), to compare with the guest's own /proc/modules; None when unread."""
    if r["used_by"] is None:
        return None
    if not isinstance(r["used_by"], list) or not isinstance(r["permanent"], bool):
        raise TypeError("used_by %r permanent %r" % (r["used_by"], r["permanent"]))
    s = "".join(u + "," for u in r["used_by"]) + ("[permanent]," if r["permanent"] else "")
    return s or "-"


def ck_lsmod(res, c):
    rc, out, err = res
    excluded = (c.partial and rc == 2 and
                re.match(r"^kpeek: lsmod: incomplete: .*excluded from the dump.*\n$", err))
    rows, why = json_of((0, out, "") if excluded else res, "modules")
    if rows is None:
        return False, why
    try:
        got = [{"name": r["name"], "size": int(r["size"]),
                "refcnt": None if r["refcnt"] is None else int(r["refcnt"]),
                "used_by": proc_used_by(r), "state": r["state"], "base": int(r["base"], 16),
                "taints": r["taints"]} for r in rows]
    except (KeyError, TypeError, ValueError) as e:
        return False, "row without name/size/refcnt/used_by/state/base/taints: %s" % e
    if excluded:
        return compare_partial(got, c)
    got = [module_line(m) for m in got]
    options = [[module_line(m) for m in c.pre["modules"]], [module_line(m) for m in c.post["modules"]]]
    if got in options:
        return True, ""
    return False, "modules differ from /proc/modules (name size refcnt used_by state base taints)\n" + \
        udiff(options[0], got)


def compare_partial(got, c):
    """lsmod of a dump that left out pages a module's users or fields live
    in (makedumpfile -d 31 of a kernel it does not know, which drops slab
    pages): every module kpeek listed is in /proc/modules with every field
    equal, except users kpeek says it could not read (null); the modules
    /proc/modules has and kpeek did not list are skipped entries."""
    problems, skips = [], []
    for rows in (c.pre["modules"], c.post["modules"]):
        want = {m["name"]: m for m in rows}
        problems, skips = [], []
        for m in got:
            w = want.pop(m["name"], None)
            if w is None:
                problems.append("%s: listed, but not in /proc/modules" % m["name"])
                continue
            if m["used_by"] is None:
                w = dict(w, used_by=None)
                skips.append("%s: its users: not read, a page left out of the dump" % m["name"])
            if m != {k: w[k] for k in m}:
                problems.append("%s: kpeek %s, /proc/modules %s" % (m["name"], module_line_any(m),
                                                                     module_line_any(w)))
        skips += ["%s: not listed, left out of the dump" % n for n in want]
        order = [m["name"] for m in rows if m["name"] in {g["name"] for g in got}]
        if [m["name"] for m in got] != order:
            problems.append("modules not in /proc/modules' order: %s" % [m["name"] for m in got])
        if not problems:
            break
    if problems:
        return False, "%d differences from /proc/modules:\n%s" % (len(problems), "\n".join(problems))
    if not [m for m in got if m["used_by"] is not None]:
        return skipped("the dump leaves out every module's users")
    return passed("", skips)


def module_line_any(m):
    return module_line(dict(m, refcnt=-1 if m["refcnt"] is None else m["refcnt"],
                            used_by="(null)" if m["used_by"] is None else m["used_by"]))


def ck_list_modules(res, c):
    """list -H -o module.list -s module.name modules: /proc/modules' names,
    in its order."""
    rows, why = json_of(res, "entries")
    if rows is None:
        return False, why
    try:
        got = [r["members"]["name"] for r in rows]
    except (KeyError, TypeError) as e:
        return False, "entries without members.name (%s): %s" % (e, rows[:2])
    options = [[m["name"] for m in c.pre["modules"]], [m["name"] for m in c.post["modules"]]]
    if got in options:
        return True, ""
    return False, "module names differ from /proc/modules\n" + udiff(options[0], got)


# A list of a module's own structures: qemu_fw_cfg's fw_cfg_entry_cache of
# struct fw_cfg_sysfs_entry, a type only the module's BTF has.
MODULE_BTF_ARGS = ["list", "-H", "-o", "fw_cfg_sysfs_entry.list", "-s",
                   "fw_cfg_sysfs_entry.select,size,name", "--json", "fw_cfg_entry_cache"]


def ck_module_btf(files, partial=False):
    """kpeek's walk of qemu_fw_cfg's entries with the module's BTF against
    the module's sysfs files (/sys/firmware/qemu_fw_cfg/by_key/*/{key,size,
    name}): the same entries, field by field. partial: makedumpfile -d 31
    for a kernel it does not know (7.2) may leave out the pages of the BTF
    or of the entries; kpeek must then say which page is missing."""
    def ck(res, c):
        rc, out, err = res
        if partial and rc not in (0, None) and "excluded from the dump" in err:
            return skipped("the dump leaves out what the walk needs: %s" % err.strip())
        # A kernel without module BTF (5.10: CONFIG_DEBUG_INFO_BTF_MODULES
        # came in 5.11) has no /sys/kernel/btf/qemu_fw_cfg: kpeek must say so.
        if "qemu_fw_cfg" not in files.get("boot.btf", b"").decode("utf-8", "replace").split():
            if rc not in (0, None) and "no module BTF" in err:
                return limited(err.strip())
            return False, "the guest has no /sys/kernel/btf/qemu_fw_cfg, yet kpeek %s" % ran(res)
        want = sorted(tuple(l.split(" ", 2)) for l in files.get("fwcfg.entries", b"").decode(
            "utf-8", "replace").splitlines() if l.count(" ") >= 2)
        if not want:
            return False, "the guest recorded no fw_cfg entries (fwcfg.entries)"
        try:
            got = sorted((str(e["members"]["select"]), str(e["members"]["size"]), e["members"]["name"])
                         for e in json.loads(out)["entries"])
        except (ValueError, KeyError, TypeError):
            return False, "not the expected JSON: %s; output:\n%s" % (ran(res), out[-2000:])
        if rc == 0 and got == want:
            return True, ""
        return False, "kpeek %s\n  sysfs %s (%s)" % (got, want, ran(res))
    return ck
