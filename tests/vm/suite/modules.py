# SPDX-License-Identifier: MIT
# Checks of modules: lsmod, list of the modules list, and a walk of a
# module's own structures with its BTF.
import json

from .common import json_of, ran, udiff
from .results import limited, skipped


def module_line(m):
    return "%s %d %d %s %s 0x%x %s" % (m["name"], m["size"], m["refcnt"], m["used_by"], m["state"],
                                        m["base"], m["taints"])


def ck_lsmod(res, c):
    rows, why = json_of(res, "modules")
    if rows is None:
        return False, why
    try:
        got = [module_line({"name": r["name"], "size": int(r["size"]), "refcnt": int(r["refcnt"]),
                            "used_by": r["used_by"], "state": r["state"], "base": int(r["base"], 16),
                            "taints": r["taints"]}) for r in rows]
    except (KeyError, TypeError, ValueError) as e:
        return False, "row without name/size/refcnt/used_by/state/base/taints: %s" % e
    options = [[module_line(m) for m in c.pre["modules"]], [module_line(m) for m in c.post["modules"]]]
    if got in options:
        return True, ""
    return False, "modules differ from /proc/modules (name size refcnt used_by state base taints)\n" + \
        udiff(options[0], got)


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
