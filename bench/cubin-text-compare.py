#!/usr/bin/env python3
"""Compares two builds' cubins kernel by kernel, without CUDA's disassembler.

    python3 bench/cubin-text-compare.py OLD_CUBIN_DIR NEW_CUBIN_DIR

A cubin is an ELF file with one `.text.<kernel>` section of machine code per kernel. For every
cubin in both folders, this reads the section headers, and for every kernel in both builds says
whether its machine code is byte for byte the same. Kernels only in the new build are counted.
Why: a change of a template that adds a configuration (a parameter value no shipped tile had)
must leave every existing kernel as it was, and equal machine code shows it without a GPU.
Exit status 1 when some kernel's code differs.
"""
import hashlib
import pathlib
import struct
import sys


def text_sections(path):
    """{kernel name: sha1 of its .text section} of one ELF64 little-endian cubin."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit(f"{path}: not an ELF64 little-endian file")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    out = {}
    for name_off, kind, _flags, _addr, offset, size, *_ in headers:
        end = data.index(b"\0", names_at + name_off)
        name = data[names_at + name_off:end].decode()
        if name.startswith(".text.") and kind != 8:  # 8: NOBITS
            out[name[len(".text."):]] = hashlib.sha1(data[offset:offset + size]).hexdigest()
    return out


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    old_dir, new_dir = (pathlib.Path(a) for a in sys.argv[1:])
    differ = 0
    for new in sorted(new_dir.rglob("*.cubin")):
        rel = new.relative_to(new_dir)
        old = old_dir / rel
        if not old.exists():
            print(f"{rel}: new file, {len(text_sections(new))} kernels")
            continue
        a, b = text_sections(old), text_sections(new)
        same = [k for k in a if k in b and a[k] == b[k]]
        changed = [k for k in a if k in b and a[k] != b[k]]
        added = [k for k in b if k not in a]
        gone = [k for k in a if k not in b]
        differ += len(changed)
        print(f"{rel}: {len(same)} kernels the same, {len(changed)} differ, {len(added)} new, {len(gone)} gone")
        for k in changed:
            print(f"  differs: {k}")
        for k in added:
            print(f"  new: {k}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
