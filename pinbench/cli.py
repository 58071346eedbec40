"""The ``pinbench`` command: one entry point for every stage.

    pinbench [-V] [-q|-v] COMMAND [ARGS...]     (docs/cli.md; pinbench COMMAND --help)

Each command's parser and what it does live in its module of :mod:`pinbench.commands`; this
module reads the options every command shares (``-V/--version``, ``-q/--quiet``,
``-v/--verbose``, before or after the command), builds the parser of the command asked for
and runs it. A :class:`pinbench.errors.PinbenchError` (a usage error, an input that cannot be
used, a campaign file's error, a C helper ``pinbench setup`` has not built) is caught here
once: one line ``pinbench COMMAND: error: MESSAGE`` on stderr and exit status 2 (with ``-v``,
its traceback before it). Any other exception is a bug and keeps its traceback (status 1).

This module imports only the standard library at start: a command imports its stage when it
runs, so ``pinbench --version`` and ``pinbench --help`` stay quick.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import traceback

from pinbench.commands import COMMANDS
from pinbench.commands.conventions import Parser, verbosity_options
from pinbench.errors import PinbenchError, UsageError, first_line


class _Version(argparse.Action):
    """``-V/--version``: the version and the build's provenance (:mod:`pinbench.provenance`)."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from pinbench.provenance import describe

        print(describe())
        parser.exit(0)


def commands_help() -> str:
    """Every command with its line, by group (``pinbench --help``)."""
    groups: dict[str, list[str]] = {}
    for name, (_, group, text) in COMMANDS.items():
        groups.setdefault(group, []).append(f"  {name:<12} {text}")
    lines = []
    for group, entries in groups.items():
        lines += [f"{group}:", *entries, ""]
    lines += ["pinbench COMMAND --help describes each command; run and plan pass any other",
              "option to Snakemake (e.g. -n, --cores 4, --executor slurm)."]
    return "\n".join(lines)


def top_parser() -> Parser:
    """The options before the command, the command and its arguments."""
    parser = Parser(prog="pinbench", usage="pinbench [-V] [-q | -v] COMMAND [ARGS...]",
                    description="Thread-placement campaigns on OpenMP programs, with rigorous "
                                "statistics.", epilog=commands_help(),
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-V", "--version", action=_Version,
                        help="print the version and the commit it was built from")
    verbosity_options(parser)
    parser.add_argument("command", metavar="COMMAND", nargs="?", help="one of the commands below")
    parser.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def command_parser(name: str):
    """The parser of command ``name`` and its module (which has ``run(args)``)."""
    module_name, _, text = COMMANDS[name]
    module = importlib.import_module(f"pinbench.commands.{module_name}")
    parser = Parser(prog=f"pinbench {name}", description=text[:1].upper() + text[1:] + ".")
    verbosity_options(parser)
    module.arguments(parser, name)
    return parser, module


def main(argv: list[str] | None = None) -> int:
    """Run ``pinbench [OPTIONS] COMMAND ARGS``; its exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    prog, verbosity = "pinbench", 0
    try:
        top = top_parser().parse_args(argv)
        verbosity = top.verbose - top.quiet
        if top.command is None:
            raise UsageError("give a command (pinbench --help lists them)")
        if top.command not in COMMANDS:
            raise UsageError(f"unknown command {top.command!r} (pinbench --help lists them)")
        prog = f"pinbench {top.command}"
        parser, module = command_parser(top.command)
        args = module.parse(parser, top.args) if hasattr(module, "parse") \
            else parser.parse_args(top.args)
        args.command = top.command
        args.verbosity = verbosity = verbosity + args.verbose - args.quiet
        return module.run(args) or 0
    except PinbenchError as exc:
        if verbosity > 0:
            traceback.print_exc()
        print(f"{prog}: error: {first_line(exc)}", file=sys.stderr)
        return 2
