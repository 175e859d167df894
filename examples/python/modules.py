# SPDX-License-Identifier: MIT
# lsmod the way drgn's documentation walks the module list: run with
#   python3 -m kpeek -c DUMP examples/python/modules.py
# For drgn, only the import changes:
#   from drgn.helpers.linux.list import list_for_each_entry
from kpeek.helpers.linux.list import list_for_each_entry

print("%-20s %10s" % ("Module", "Size"))
for mod in list_for_each_entry("struct module", prog["modules"].address_of_(), "list"):
    name = mod.name.string_().decode()
    # mem[] since 6.4 (/proc/modules sums its parts), core_layout before it
    try:
        size = sum(mem["size"] for mem in mod.mem.value_())
    except AttributeError:
        size = mod.core_layout.size.value_()
    print("%-20s %10d" % (name, size))
