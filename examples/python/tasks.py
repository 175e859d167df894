# SPDX-License-Identifier: MIT
# Every task with its state, as drgn's documentation lists them: run with
#   python3 -m kpeek -c DUMP examples/python/tasks.py
# (prog is bound as drgn binds it). For drgn, only the imports change:
#   from drgn.helpers.linux.pid import for_each_task
#   from drgn.helpers.linux.sched import task_state_to_char
from kpeek.helpers.linux.pid import for_each_task
from kpeek.helpers.linux.sched import task_state_to_char

print("%7s %7s %s %s" % ("PID", "PPID", "S", "COMM"))
for task in sorted(for_each_task(prog), key=lambda t: t.pid.value_()):
    print("%7d %7d %s %s" % (task.pid.value_(), task.real_parent.pid.value_(),
                             task_state_to_char(task), task.comm.string_().decode()))
