#!/usr/bin/env python3
"""Retargets one ELF version requirement of a shared library, in place: the entry of
.gnu.version_r that names OLD (e.g. libcublas.so.12) is made to name NEW (libcublas.so.13),
with NEW's ELF hash. Run it after `patchelf --replace-needed OLD NEW FILE`, which adds NEW to the
dynamic string table; without this step the loader still asks for a version node of OLD.

usage: retarget-verneed.py FILE OLD NEW
"""
import struct
import sys


def elf_hash(name: bytes) -> int:
    h = 0
    for c in name:
        h = ((h << 4) + c) & 0xFFFFFFFF
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & 0xFFFFFFFF
    return h


def c_string(data: bytes, offset: int) -> bytes:
    return bytes(data[offset:data.index(b"\0", offset)])


def main(path: str, old: str, new: str) -> int:
    data = bytearray(open(path, "rb").read())
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit(f"{path}: not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = sections[shstrndx][4]
    by_name = {c_string(data, names_at + s[0]).decode(): s for s in sections}
    verneed = by_name.get(".gnu.version_r")
    if verneed is None:
        sys.exit(f"{path}: no .gnu.version_r section")
    strtab = sections[verneed[6]]
    strings = bytes(data[strtab[4]:strtab[4] + strtab[5]])
    wanted = new.encode() + b"\0"
    new_at = strings.find(b"\0" + wanted)
    if new_at < 0:
        sys.exit(f"{path}: {new} is not in the dynamic string table; run patchelf --replace-needed first")
    new_at += 1
    changed = 0
    entry = verneed[4]
    for _ in range(verneed[7]):
        _, count, _, aux, next_entry = struct.unpack_from("<HHIII", data, entry)
        at = entry + aux
        for _ in range(count):
            _, flags, other, name, next_aux = struct.unpack_from("<IHHII", data, at)
            if c_string(strings, name) == old.encode():
                struct.pack_into("<IHHII", data, at, elf_hash(new.encode()), flags, other, new_at, next_aux)
                changed += 1
            at += next_aux
        if next_entry == 0:
            break
        entry += next_entry
    open(path, "wb").write(data)
    print(f"{path}: {changed} version requirement(s) {old} -> {new}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
