# SPDX-License-Identifier: MIT
# Damaged copies of an ELF dump, for the corrupt-state checks of the suite:
# a physical page left out (its PT_LOAD split around it, as a filtered
# dump lacks a page) or bytes rewritten at a physical address. Independent
# of libkpeek: the copy is made with cp (sparse), the program headers are
# rewritten at the end of the file.
import os
import struct
import subprocess

PT_LOAD = 1
PHDR = struct.Struct("<IIQQQQQQ")  # Elf64_Phdr


class EditError(Exception):
    pass


def copy(src, dst):
    """A writable sparse copy of src at dst."""
    if os.path.exists(dst):
        os.unlink(dst)
    r = subprocess.run(["cp", "--sparse=always", src, dst], capture_output=True, text=True)
    if r.returncode != 0:
        raise EditError("cp %s %s: %s" % (src, dst, r.stderr.strip() or r.returncode))
    os.chmod(dst, 0o600)  # cp keeps QEMU's read-only mode


def _phdrs(f):
    f.seek(0)
    h = f.read(64)
    if h[:4] != b"\x7fELF" or h[4] != 2:
        raise EditError("not an ELF64 file")
    phoff, = struct.unpack_from("<Q", h, 32)
    phentsize, phnum = struct.unpack_from("<HH", h, 54)
    if phentsize != PHDR.size:
        raise EditError("program headers of %d bytes" % phentsize)
    f.seek(phoff)
    data = f.read(phentsize * phnum)
    return [list(PHDR.unpack_from(data, i * PHDR.size)) for i in range(phnum)]


def file_offset(path, paddr, size):
    """Where physical paddr..paddr+size lies in the file."""
    with open(path, "rb") as f:
        for p in _phdrs(f):
            typ, _fl, off, _va, pa, filesz = p[:6]
            if typ == PT_LOAD and pa <= paddr and paddr + size <= pa + filesz:
                return off + paddr - pa
    raise EditError("physical 0x%x (%d bytes) is not in %s" % (paddr, size, path))


def patch(path, paddr, data):
    """Writes data at physical paddr of the dump at path."""
    off = file_offset(path, paddr, len(data))
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(data)


def read(path, paddr, size):
    with open(path, "rb") as f:
        f.seek(file_offset(path, paddr, size))
        return f.read(size)


def drop_page(path, paddr, page=4096):
    """Leaves the page holding physical paddr out of the dump: its PT_LOAD
    becomes the two around it (new program headers at the end of the
    file; the data stays where it is)."""
    start = paddr & ~(page - 1)
    with open(path, "r+b") as f:
        ph = _phdrs(f)
        out = []
        hit = False
        for p in ph:
            typ, flags, off, va, pa, filesz, memsz, align = p
            if typ != PT_LOAD or not (pa <= start < pa + filesz):
                out.append(p)
                continue
            hit = True
            before = start - pa
            after = pa + filesz - (start + page)
            if before > 0:
                out.append([typ, flags, off, va, pa, before, before, align])
            if after > 0:
                skip = before + page
                out.append([typ, flags, off + skip, va + skip if va else 0, pa + skip, after,
                            after, align])
        if not hit:
            raise EditError("physical 0x%x is not in %s" % (paddr, path))
        f.seek(0, os.SEEK_END)
        end = (f.tell() + 7) & ~7
        f.seek(end)
        f.write(b"".join(PHDR.pack(*p) for p in out))
        f.seek(32)
        f.write(struct.pack("<Q", end))
        f.seek(56)
        f.write(struct.pack("<H", len(out)))
