"""Stable seeds derived from the campaign seed, so every random choice is reproducible."""
from __future__ import annotations

import hashlib


def derive_seed(seed: int, *parts: object) -> int:
    """A 64-bit seed for one purpose, e.g. ``derive_seed(1, "order", "pairs", 8)``.

    The same arguments give the same seed on every machine and Python version
    (unlike ``hash()``), and different parts give unrelated seeds.
    """
    text = "\x1f".join([str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
