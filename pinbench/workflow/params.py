"""A benchmark's ``params``: variables for its commands, and lists that expand it into several.

``params: {class: [S, W], size: 1000}`` on benchmark ``is`` makes two benchmarks,
``is-S`` and ``is-W``, each with ``{class}`` and ``{size}`` usable in ``build``,
``run``, ``input``, ``trace_input`` and ``trace_build``. Several lists expand into
every combination, named by their values in the order the lists are written.
A weight given to ``is`` applies to each of its expansions.
"""
from __future__ import annotations

import copy
import itertools
import re

from pinbench.errors import PinbenchError

#: What a benchmark's name must look like (the campaign schema's ``name``).
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class ParamsError(PinbenchError, ValueError):
    """A ``params`` entry cannot be expanded; the message names the field."""


def _text(value) -> str:
    """A parameter's value as it is written into commands (``1e6`` stays ``1000000.0``)."""
    return str(value)


def expand(benchmarks: dict, weights: dict) -> tuple[dict, dict]:
    """The benchmarks with every list-valued ``params`` expanded, and the weights to match.

    Each resulting benchmark's ``params`` maps names to strings.

    >>> benchmarks, weights = expand({"is": {"params": {"class": ["S", "W"], "n": 4}}},
    ...                              {"is": 2})
    >>> sorted(benchmarks), benchmarks["is-W"]["params"], weights
    (['is-S', 'is-W'], {'n': '4', 'class': 'W'}, {'is-S': 2, 'is-W': 2})
    """
    expanded, new_weights = {}, {k: v for k, v in weights.items() if k not in benchmarks}
    for name, entry in benchmarks.items():
        params = entry.get("params", {})
        lists = {key: value for key, value in params.items() if isinstance(value, list)}
        scalars = {key: _text(value) for key, value in params.items() if key not in lists}
        if not lists:
            expanded[name] = entry | {"params": scalars}
            if name in weights:
                new_weights[name] = weights[name]
            continue
        for values in itertools.product(*lists.values()):
            texts = [_text(v) for v in values]
            child = f"{name}-{'-'.join(texts)}"
            if not NAME.fullmatch(child):
                key = next(k for k, v in zip(lists, texts) if not NAME.fullmatch(f"{name}-{v}"))
                raise ParamsError(
                    f"benchmarks.{name}.params.{key}: the expanded benchmark's name {child!r} "
                    "is not allowed (values become name parts: letters, digits, '_', '.', '-'; "
                    "at most 64 characters in all)")
            if child in benchmarks or child in expanded:
                raise ParamsError(f"benchmarks.{name}.params: the expanded benchmark {child!r} "
                                  "has the name of another benchmark")
            entry_copy = copy.deepcopy(entry)
            entry_copy["params"] = scalars | dict(zip(lists, texts))
            label = ", ".join(f"{k}={v}" for k, v in zip(lists, texts))
            entry_copy["description"] = f"{entry.get('description', '')} ({label})".lstrip()
            expanded[child] = entry_copy
            if name in weights:
                new_weights[child] = weights[name]
    return expanded, new_weights
