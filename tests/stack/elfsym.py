#!/usr/bin/env python3
"""tests/stack/elfsym.py - addresses of a ptsynth trace to functions and
instruction bytes, from the ELF files its sideband maps (stdlib only).

    img = elfsym.Image(SIDEBAND)    # "mmap START END PGOFF PATH" lines
    img.func(addr)                  # (name, start, path) or None
    img.call_len(addr)              # length of the call instruction at
                                    # addr, None if it is not one
    img.own(addr)                   # addr is in the traced program's file
                                    # (the first mapping: ptsynth maps the
                                    # program first)
    img.calls_mcount(addr)          # the function at addr was built with -pg

Function names come from .symtab, else .dynsym (STT_FUNC and
STT_GNU_IFUNC; a zero-size symbol covers up to the next one); a PLT stub
is "SYM@plt" (the symbol of the GOT slot its `jmp *` reads), the
resolver's stub "PLT0".
"""
import bisect
import struct

PT_LOAD = 1
SHT_SYMTAB, SHT_DYNSYM, SHT_RELA = 2, 11, 4
STT_FUNC, STT_GNU_IFUNC = 2, 10


class Elf:
    """One ELF file: its loads, function symbols, relocations."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2:
            raise ValueError("%s: not a 64-bit ELF file" % path)
        (self.type, _, _, self.entry, phoff, shoff, _, _, phentsize, phnum,
         shentsize, shnum, shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", d, 16)
        self.loads = []
        for i in range(phnum):
            p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from(
                "<IIQQQQQQ", d, phoff + i * phentsize)
            if p_type == PT_LOAD:
                self.loads.append((p_offset, p_vaddr, p_filesz))
        self.sections = []
        for i in range(shnum):
            self.sections.append(struct.unpack_from(
                "<IIQQQQIIQQ", d, shoff + i * shentsize))
        names = self.sections[shstrndx] if shnum else None
        self.secname = {}
        for i, s in enumerate(self.sections):
            if names:
                self.secname[i] = self._str(names[4], s[0])
        self.funcs = self._symbols()

    def _str(self, off, idx):
        e = self.data.index(b"\0", off + idx)
        return self.data[off + idx:e].decode("utf-8", "replace")

    def _symbols(self):
        """Sorted (vaddr, size, name) of the function symbols."""
        out = []
        for want in (SHT_SYMTAB, SHT_DYNSYM):
            for s in self.sections:
                if s[1] != want:
                    continue
                strtab = self.sections[s[6]]
                for k in range(s[5] // 24):
                    st_name, st_info, _, st_shndx, st_value, st_size = \
                        struct.unpack_from("<IBBHQQ", self.data, s[4] + k * 24)
                    if (st_info & 15) in (STT_FUNC, STT_GNU_IFUNC) and \
                            st_shndx and st_value:
                        out.append((st_value, st_size, self._str(strtab[4], st_name)))
            if out:
                break
        out.sort()
        return out

    def vaddr(self, off):
        """The link-time address of file offset off, or None."""
        for p_offset, p_vaddr, p_filesz in self.loads:
            if p_offset <= off < p_offset + p_filesz:
                return p_vaddr + off - p_offset
        return None

    def section_of(self, va):
        """Name of the allocated section holding link address va."""
        for i, sh in enumerate(self.sections):
            if sh[2] & 2 and sh[3] <= va < sh[3] + sh[5]:
                return self.secname.get(i, "")
        return ""

    def plt_name(self, va):
        """"SYM@plt" for a PLT stub (its `jmp *GOT(%rip)`), "PLT0" for
        the resolver's stub, None if va is not in a .plt* section."""
        name = self.section_of(va)
        if not name.startswith(".plt"):
            return None
        if not hasattr(self, "got_sym"):
            self.got_sym = self._got_symbols()
        start = va - (va % 16)
        off = self.file_off(start)
        b = self.data[off:off + 16] if off is not None else b""
        k = b.find(b"\xff\x25")
        if k < 0 or len(b) < k + 6:
            return "PLT0"
        slot = start + k + 6 + struct.unpack_from("<i", b, k + 2)[0]
        sym = self.got_sym.get(slot)
        return sym + "@plt" if sym else "PLT0"

    def file_off(self, va):
        for p_offset, p_vaddr, p_filesz in self.loads:
            if p_vaddr <= va < p_vaddr + p_filesz:
                return p_offset + va - p_vaddr
        return None

    def _got_symbols(self):
        """{GOT slot link address: symbol name} of the relocations."""
        out = {}
        for s in self.sections:
            if s[1] != SHT_RELA or not s[6]:
                continue
            symtab = self.sections[s[6]]
            strtab = self.sections[symtab[6]]
            for k in range(s[5] // 24):
                r_offset, r_info, _ = struct.unpack_from("<QQq", self.data, s[4] + k * 24)
                if r_info >> 32:
                    st_name = struct.unpack_from("<I", self.data,
                                                 symtab[4] + (r_info >> 32) * 24)[0]
                    out[r_offset] = self._str(strtab[4], st_name)
        return out

    def func_at(self, va):
        """(name, start) of the function containing link address va."""
        plt = self.plt_name(va)
        if plt:
            return plt, va - (va % 16)
        i = bisect.bisect_right(self.funcs, (va, float("inf"), "")) - 1
        if i < 0:
            return None
        start, size, name = self.funcs[i]
        if size and va >= start + size:
            return None
        return name, start

    def func_end(self, va):
        """The end of the function containing va: its size, else the next
        symbol."""
        i = bisect.bisect_right(self.funcs, (va, float("inf"), "")) - 1
        if i >= 0 and self.funcs[i][1]:
            return self.funcs[i][0] + self.funcs[i][1]
        for start, _, _ in self.funcs[i + 1:]:
            if start > va:
                return start
        return va + 64

    def got_slot(self, symbol):
        """Link addresses of the GOT slots relocated to symbol."""
        if not hasattr(self, "got_sym"):
            self.got_sym = self._got_symbols()
        return [a for a, n in self.got_sym.items() if n == symbol]


class Image:
    """The executable mappings of a ptsynth sideband file."""

    def __init__(self, sideband):
        self.maps = []
        self.elves = {}
        with open(sideband) as f:
            for line in f:
                w = line.split()
                if w and w[0] == "mmap":
                    start, end, pgoff = (int(x, 16) for x in w[1:4])
                    path = " ".join(w[4:])
                    if path not in self.elves:
                        try:
                            self.elves[path] = Elf(path)
                        except (OSError, ValueError, struct.error):
                            self.elves[path] = None
                    self.maps.append((start, end, pgoff, path))
        self.program = self.maps[0][3] if self.maps else None

    def _where(self, addr):
        """(elf, link address, file offset) of a run-time address."""
        for start, end, pgoff, path in self.maps:
            if start <= addr < end and self.elves[path]:
                off = addr - start + pgoff
                e = self.elves[path]
                va = e.vaddr(off)
                if va is not None:
                    return e, va, off
        return None

    def own(self, addr):
        w = self._where(addr)
        return bool(w) and w[0].path == self.program

    def func(self, addr):
        """(name, run-time start, path) of the function at addr, or None."""
        w = self._where(addr)
        if not w:
            return None
        e, va, _ = w
        f = e.func_at(va)
        if not f:
            return None
        return f[0], addr - (va - f[1]), e.path

    def bytes_at(self, addr, n):
        w = self._where(addr)
        if not w:
            return b""
        return w[0].data[w[2]:w[2] + n]

    def calls_mcount(self, addr):
        """The function at addr calls mcount in its prologue (built with
        -pg): `call *mcount@GOTPCREL(%rip)` (ff 15) or `call mcount`
        (e8, non-PIC), in its prologue (first 64 bytes)."""
        w = self._where(addr)
        if not w:
            return False
        e, va, off = w
        if not hasattr(e, "mcount"):
            e.mcount = set(e.got_slot("mcount")) | set(e.got_slot("_mcount"))
            e.mcount |= {f[0] for f in e.funcs if f[2] in ("mcount", "_mcount")}
        size = min(64, e.func_end(va) - va)
        b = e.data[off:off + size]
        for i in range(len(b)):
            if b[i:i + 2] == b"\xff\x15" and len(b) >= i + 6:
                rel = struct.unpack_from("<i", b, i + 2)[0]
                if va + i + 6 + rel in e.mcount:
                    return True
            if b[i:i + 1] == b"\xe8" and len(b) >= i + 5:
                rel = struct.unpack_from("<i", b, i + 1)[0]
                if va + i + 5 + rel in e.mcount:
                    return True
        return False

    def call_len(self, addr):
        """Length of the call instruction at addr (E8 rel32, FF /2), or
        None if the bytes there are not a call."""
        b = self.bytes_at(addr, 16)
        i = 0
        while i < len(b) and b[i] in (0x66, 0x67, 0xf2, 0xf3, 0x2e, 0x3e):
            i += 1
        if i < len(b) and 0x40 <= b[i] <= 0x4f:
            i += 1  # REX
        if i >= len(b):
            return None
        if b[i] == 0xe8:
            return i + 5
        if b[i] != 0xff or i + 1 >= len(b) or (b[i + 1] >> 3) & 7 != 2:
            return None
        modrm = b[i + 1]
        mod, rm = modrm >> 6, modrm & 7
        n = i + 2
        if mod == 3:
            return n
        if rm == 4:  # SIB
            if n >= len(b):
                return None
            if mod == 0 and (b[n] & 7) == 5:
                n += 4  # no base: disp32
            n += 1
        if mod == 1:
            n += 1
        elif mod == 2 or (mod == 0 and rm == 5):
            n += 4  # disp32, or RIP-relative
        return n
