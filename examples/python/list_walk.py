# SPDX-License-Identifier: MIT
# A walk of a kernel list_head list by hand and with the helper, as in
# drgn's user guide: the task list from init_task, each task's parent.
#   python3 -m kpeek -c DUMP examples/python/list_walk.py
# For drgn, only the imports change:
#   from drgn import container_of
#   from drgn.helpers.linux.list import list_for_each_entry
from kpeek import container_of
from kpeek.helpers.linux.list import list_for_each_entry

init_task = prog["init_task"]
head = init_task.tasks.address_of_()

# By hand: follow next until the head comes back.
by_hand = []
pos = head.next
while pos != head:
    task = container_of(pos, "struct task_struct", "tasks")
    by_hand.append(task.pid.value_())
    pos = pos.next

with_helper = [task.pid.value_()
               for task in list_for_each_entry("struct task_struct", head, "tasks")]
assert by_hand == with_helper, (by_hand, with_helper)

for task in list_for_each_entry("struct task_struct", head, "tasks"):
    parent = task.real_parent
    print("%d %s <- %d %s" % (task.pid.value_(), task.comm.string_().decode(),
                              parent.pid.value_(), parent.comm.string_().decode()))
