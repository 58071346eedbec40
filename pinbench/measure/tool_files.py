"""The files that a library loaded into a run writes for it (the OMPT tool's record, the
re-binding shim's): each written to ``PATH.part`` and renamed ``PATH`` when whole, read by the
measuring process after the run, then removed."""
from __future__ import annotations

import os


def take(path: str) -> str | None:
    """The text a run's library wrote to ``path`` (None: it wrote none, or did not finish);
    the file and any ``.part`` it left are removed."""
    try:
        with open(path) as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        for leftover in (path, path + ".part"):
            try:
                os.unlink(leftover)
            except OSError:
                pass
