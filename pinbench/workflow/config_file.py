"""A campaign file read strictly: every problem is one ``FILE:LINE:COL: PROBLEM`` line.

:func:`load` reads a YAML (or JSON) campaign file into a mapping, refusing
what YAML parsers let through or report over many lines: a file above
:data:`MAX_BYTES` (refused before parsing), text that is not UTF-8, syntax
errors (bad or tab indentation, unclosed ``[`` or ``{``), duplicate keys,
tags beyond plain YAML (``!!python/object``...), an empty file, and a top
level that is not a mapping. Each raises :class:`ConfigError` naming the file
and, where there is one, the line and column.

``pinbench run`` and ``pinbench plan`` read the campaign with :func:`load` before
Snakemake starts, so every bad file is one line. Plain ``snakemake`` reads
``--configfile`` with its own reader before any line of the Snakefile runs, and
reports what that reader stops at in its own words; ``rules/common.smk`` then
reads the files again with :func:`load`, so what Snakemake's reader lets through
(a duplicate key...) is still refused in one line.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from pinbench.workflow.campaign import ConfigError

#: The largest campaign file read (1 MiB): campaigns are a few kilobytes.
MAX_BYTES = 1 << 20


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader that refuses duplicate keys and integers too long to convert."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            first: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # "<<: *defaults" merges a mapping whose keys may be overridden
                key = self.construct_object(key_node, deep=True)
                try:
                    seen = key in first
                except TypeError:  # an unhashable key: the base class refuses it
                    continue
                if seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (first at line {first[key]})",
                        key_node.start_mark)
                first[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node):
        try:
            return super().construct_yaml_int(node)
        except ValueError:  # more digits than int() converts (4300)
            raise yaml.constructor.ConstructorError(
                None, None, f"integer of {len(node.value)} characters is too long",
                node.start_mark) from None


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of character ``index`` of ``text``."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _yaml_problem(exc: yaml.YAMLError, name: str, text: str) -> str:
    """One line for a PyYAML error: where, what, and what it was parsing."""
    if isinstance(exc, yaml.reader.ReaderError):
        line, column = _position(text, exc.position)
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        return f"{name}:{line}:{column}: character {code:#06x} is not allowed in a YAML file"
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if problem.startswith("could not determine a constructor for the tag"):
        tag = problem.split("tag", 1)[1].strip().strip("'")
        tag = tag.replace("tag:yaml.org,2002:", "!!")
        problem = f"tag {tag} is not allowed (plain YAML values only)"
    elif mark is not None and ("'\\t'" in problem or text[mark.index:mark.index + 1] == "\t"):
        return f"{name}:{mark.line + 1}:{mark.column + 1}: a tab where YAML wants spaces " \
            "(YAML is indented with spaces, never tabs)"
    elif "<block end>" in problem:
        problem += "; check the indentation"
    context = getattr(exc, "context", None) or ""
    context_mark = getattr(exc, "context_mark", None)
    opened = {"while parsing a flow sequence": "[", "while parsing a flow mapping": "{"}
    if problem.startswith("but ") and context:  # "expected a single document", "but found..."
        problem = f"{context}, {problem}"
    elif context in opened and context_mark is not None:
        problem += (f" (the '{opened[context]}' at line {context_mark.line + 1}, column "
                    f"{context_mark.column + 1} is not closed?)")
    elif context and context_mark is not None and context_mark is not mark:
        problem += f" ({context} at line {context_mark.line + 1}, column {context_mark.column + 1})"
    where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark is not None else name
    return f"{where}: {problem}"


def _read_text(path: Path, name: str) -> str:
    """The file's text: refused above :data:`MAX_BYTES` (before reading it all) or if not UTF-8."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_BYTES:
                raise ConfigError(f"{name}: {size} bytes; a campaign file may have at most "
                                  f"{MAX_BYTES} bytes (1 MiB)")
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_BYTES:  # a pipe or a special file that stat does not size
        raise ConfigError(f"{name}: more than {MAX_BYTES} bytes; a campaign file may have at "
                          f"most {MAX_BYTES} bytes (1 MiB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(f"{name}:{line}:{column}: not UTF-8 text (byte {data[exc.start]:#04x}); "
                          "save the file as UTF-8") from None
    return text.removeprefix("\ufeff")


def _json(text: str):
    """A JSON document (Snakemake reads config files as JSON first), or None when it is not
    JSON or has a duplicate key (then YAML, a superset, says where)."""
    def pairs(items):
        if len({key for key, _ in items}) < len(items):
            raise ValueError("duplicate key")
        return dict(items)

    try:
        return json.loads(text, object_pairs_hook=pairs)
    except (ValueError, RecursionError):  # not JSON, or nested too deeply for it
        return None


def parse(text: str, name: str) -> dict:
    """The mapping a campaign file's ``text`` holds; ConfigError naming ``name``, line, column."""
    data = _json(text) if text.lstrip().startswith("{") else None
    if isinstance(data, dict):
        return data
    loader = None
    try:
        loader = _StrictLoader(text)  # refuses characters YAML does not allow (NUL...)
        node = loader.get_single_node()
        if node is None:
            raise ConfigError(f"{name}:1:1: empty file; a campaign is a mapping with at least "
                              "campaign, machines and benchmarks")
        if not isinstance(node, yaml.MappingNode):
            kind = "list" if isinstance(node, yaml.SequenceNode) else "single value"
            raise ConfigError(f"{name}:{node.start_mark.line + 1}:{node.start_mark.column + 1}: "
                              f"the file holds a {kind}; a campaign is a mapping "
                              "(campaign: ..., machines: ..., benchmarks: ...)")
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise ConfigError(_yaml_problem(exc, name, text)) from None
    except RecursionError:
        raise ConfigError(f"{name}: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def load(path: str | os.PathLike) -> dict:
    """The campaign mapping in the file ``path`` (see the module's docstring for what is refused)."""
    return parse(_read_text(Path(path), str(path)), str(path))

