# SPDX-License-Identifier: MIT
"""kpeek: read-only kernel memory with drgn's object model, without DWARF.

    import kpeek
    prog = kpeek.program_from_core_dump("vmcore")
    print(prog["jiffies"].value_())
    for task in kpeek.helpers.linux.for_each_task(prog):
        print(task.pid.value_(), task.comm.string_())

Types come from the kernel's own BTF, symbols from its kallsyms: nothing
beside the dump is needed. The objects are libkpeek's (the kpeek command
shows the same values); see kpeek.helpers.linux for the walkers.
"""
import enum as _enum

from kpeek._kpeek import (  # noqa: F401
    Error,
    FaultError,
    Object,
    Program,
    Symbol,
    Type,
    TypeMember,
    cast,
    container_of,
    libkpeek_version,
    program_from_core_dump,
    program_from_kernel,
    sizeof,
)


class TypeKind(_enum.IntEnum):
    """What a Type is (drgn's TypeKind; the values are libkpeek's kp_type_kind)."""

    VOID = 0
    INT = 1
    BOOL = 2
    FLOAT = 3
    STRUCT = 4
    UNION = 5
    ENUM = 6
    TYPEDEF = 7
    POINTER = 8
    ARRAY = 9
    FUNCTION = 10


class StackFrame:
    """A frame of Program.stack_trace(), innermost first, as drgn's: pc, sp,
    name (None without a symbol), symbol() (LookupError without one), and
    exact: pc is where the CPU was, not a return address."""

    __slots__ = ("pc", "sp", "name", "_symbol", "exact")

    def __init__(self, pc, sp, name, symbol, exact):
        self.pc, self.sp, self.name, self._symbol, self.exact = pc, sp, name, symbol, exact

    def symbol(self):
        if self._symbol is None:
            raise LookupError("no symbol at 0x%x" % self.pc)
        return self._symbol

    def __repr__(self):
        return "StackFrame(pc=0x%x, name=%r)" % (self.pc, self.name)


# drgn's FaultError(message, address) attributes.
FaultError.message = property(lambda self: self.args[0])
FaultError.address = property(lambda self: self.args[1] if len(self.args) > 1 else None)
FaultError.__str__ = lambda self: str(self.args[0])

__all__ = [
    "Error", "FaultError", "Object", "Program", "StackFrame", "Symbol", "Type",
    "TypeKind", "TypeMember", "cast", "container_of", "program_from_core_dump",
    "program_from_kernel", "sizeof",
]
