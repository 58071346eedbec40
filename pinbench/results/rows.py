"""A table's rows as typed records: each CSV field read by the type its record's field has.

Every table pinbench writes and reads back has one dataclass (the runs table's
:class:`pinbench.results.runs.RunRecord`, the analysis' verdicts and comparisons in
:mod:`pinbench.stats.analyse`, the models' rows in :mod:`pinbench.stats.models`...). Its
fields are the table's columns, in order (:func:`columns`): those without a default are
required (:func:`required`), a field with a default is a column added later, read as its
default from a table written before it. A field's type says how its text reads
(:func:`parsers`): ``int`` and ``float`` as numbers, ``float | None`` and ``int | None`` as
None when empty, ``bool`` as ``"True"``, ``bool | None`` as True, False or None (empty:
unknown), anything else as the text itself.
"""
from __future__ import annotations

import csv
import dataclasses
import functools
import typing
from pathlib import Path

T = typing.TypeVar("T")


def _parser(kind) -> typing.Callable[[str], object]:
    """How a field of type ``kind`` reads from its text."""
    if kind is bool:
        return lambda text: text == "True"
    if kind == bool | None:
        return {"True": True, "False": False}.get
    if kind in (int, float):
        return kind
    if kind in (float | None, int | None):
        inner = float if kind == float | None else int
        return lambda text: inner(text) if text else None
    return str


@functools.cache
def parsers(cls: type) -> dict[str, typing.Callable[[str], object]]:
    """Per field of the dataclass ``cls``, how its text reads (:func:`_parser`)."""
    return {name: _parser(kind) for name, kind in typing.get_type_hints(cls).items()}


@functools.cache
def columns(cls: type) -> list[str]:
    """Every field of ``cls``, in order: the columns a table of it is written with."""
    return [field.name for field in dataclasses.fields(cls)]


@functools.cache
def required(cls: type) -> list[str]:
    """The fields of ``cls`` without a default: the columns every table of it has."""
    return [field.name for field in dataclasses.fields(cls)
            if field.default is dataclasses.MISSING
            and field.default_factory is dataclasses.MISSING]


def record(cls: type[T], row: dict[str, str]) -> T:
    """The record ``cls`` of one CSV row of strings (a field whose column is absent: its
    default)."""
    read = parsers(cls)
    return cls(**{name: parse(row[name]) for name, parse in read.items() if name in row})


def read_records(cls: type[T], path: Path) -> list[T]:
    """The rows of a table of ``cls`` records; ValueError (one line) for a table without one of
    their columns (written by another version of pinbench) or a field that does not read."""
    with Path(path).open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in required(cls) if name not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path} has no column {missing[0]!r}: it was written by another "
                             "version of pinbench (pinbench run analyses the runs again)")
        try:
            return [record(cls, row) for row in reader]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}, line {reader.line_num}: {exc}") from None
