"""``pinbench setup``: build pinbench's C helpers for this installation
(:mod:`pinbench.native`)."""
from __future__ import annotations

import argparse

from pinbench.native import NATIVE_DIR_VARIABLE, native_dir, setup


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """No options: what it builds, and where."""
    parser.description = (
        "Build pinbench's C helpers (the launcher, the placement's libraries, the tracers) "
        f"into {native_dir()} (set {NATIVE_DIR_VARIABLE} for another folder). Nothing is "
        "built again when nothing changed; one line says each helper that cannot be built "
        "here, and why.")


def run(args: argparse.Namespace) -> int:
    """Build what is missing or stale; 1 when a needed helper could not be built."""
    return setup()
