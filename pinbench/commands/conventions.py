"""What every ``pinbench`` command shares: its parser (errors in one line), ``-q/-v``,
``--json`` output, and inputs that cannot be read said as one line.

The conventions are the ecosystem's (hyperfine, pyperf, ReFrame): a usage or input error is
one line ``pinbench COMMAND: error: MESSAGE`` on stderr and exit status 2; ``-q`` leaves out
what a command says on stderr beside its results, ``-v`` adds an error's traceback; ``--json``
prints one JSON document on stdout and nothing else there.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import sys
from collections.abc import Iterator

from pinbench.errors import InputError, PinbenchError, UsageError


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors raise :class:`UsageError` (said in one line by
    :mod:`pinbench.cli`) instead of printing the usage and exiting."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(**kwargs)

    def error(self, message: str):
        raise UsageError(f"{message} (see {self.prog} --help)")


def verbosity_options(parser: argparse.ArgumentParser, default=0) -> None:
    """``-q/--quiet`` and ``-v/--verbose``, each counted (``-vv``), on ``parser``
    (``default=argparse.SUPPRESS`` on a subcommand's parser: it keeps its command's count)."""
    parser.add_argument("-q", "--quiet", action="count", default=default,
                        help="say nothing on stderr but errors and warnings")
    parser.add_argument("-v", "--verbose", action="count", default=default,
                        help="say more (an error's traceback too)")


def json_option(parser: argparse.ArgumentParser) -> None:
    """``--json``: the results as one JSON document on stdout."""
    parser.add_argument("--json", action="store_true",
                        help="print the results as one JSON document on stdout")


def say(args: argparse.Namespace, line: str) -> None:
    """A line beside the results (progress, where a file went), on stderr unless ``-q``."""
    if getattr(args, "verbosity", 0) >= 0:
        print(line, file=sys.stderr)


def _finite(value):
    """``value`` with every NaN or infinity as None (JSON has neither), records (dataclasses)
    as objects."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _finite(dataclasses.asdict(value))
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def print_json(data) -> None:
    """``data`` as one JSON document on stdout (NaN and infinities as null).

    >>> print_json({"p": float("nan"), "n": [1, 2.5]})
    {"p": null, "n": [1, 2.5]}
    """
    print(json.dumps(_finite(data), default=str))


@contextlib.contextmanager
def bad_input() -> Iterator[None]:
    """Inside, a file that cannot be read (OSError) or a value that cannot be used
    (ValueError) is an :class:`InputError`: one line, exit status 2."""
    try:
        yield
    except PinbenchError:
        raise
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise InputError(f"{where}{exc.strerror or exc}") from exc
    except ValueError as exc:
        raise InputError(str(exc)) from exc
