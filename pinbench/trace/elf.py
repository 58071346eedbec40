"""What a 64-bit little-endian ELF file names in its dynamic section: the shared libraries it
needs (``DT_NEEDED``), as ``readelf -d`` lists them, read with the standard library alone."""
from __future__ import annotations

import struct
from pathlib import Path

_SHT_DYNAMIC, _DT_NULL, _DT_NEEDED = 6, 0, 1


def needed_libraries(path: Path | str) -> list[str] | None:
    """The ``DT_NEEDED`` entries of a 64-bit little-endian ELF file, in order (``[]``: a static program);
    None for any other file (a script) or one that cannot be read whole."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if data[:6] != b"\x7fELF\x02\x01":  # 64-bit, little-endian (x86-64, AArch64)
        return None
    section, entry = "<IIQQQQIIQQ", "<qQ"
    try:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        sections = [struct.unpack_from(section, data, shoff + k * shentsize)
                    for k in range(shnum)]
        found = []
        for _, kind, _, _, offset, size, link, *_ in sections:
            if kind != _SHT_DYNAMIC:
                continue
            strings = sections[link][4]
            for at in range(offset, offset + size, struct.calcsize(entry)):
                tag, value = struct.unpack_from(entry, data, at)
                if tag == _DT_NULL:
                    break
                if tag == _DT_NEEDED:
                    start = strings + value
                    found.append(data[start:data.index(b"\0", start)].decode("utf-8", "replace"))
        return found
    except (struct.error, IndexError, ValueError):
        return None  # cut short or damaged
