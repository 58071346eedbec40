"""A full disk, made for real: a small tmpfs mounted for a campaign's results (root only), and
a file that fills it. ``tests/test_disk_full.py`` and ``perf/fault_injection.py`` use them."""
from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path


class CannotMount(OSError):
    """Mounting a tmpfs is not allowed here (str: the reason ``mount`` gave)."""


@contextlib.contextmanager
def small_file_system(path: Path, size: int) -> Iterator[Path]:
    """A tmpfs of ``size`` bytes mounted at ``path`` (made, if missing) while in the block;
    :class:`CannotMount` where ``mount`` refuses (not root)."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        raise CannotMount(mounted.stderr.strip() or f"mount exited {mounted.returncode}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def fill(folder: Path) -> Path:
    """Write a file in ``folder`` until its file system is full; the file."""
    filler = folder / "filler"
    with open(filler, "wb") as handle:
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"\0" * (1 << 20))
                handle.flush()
    return filler
