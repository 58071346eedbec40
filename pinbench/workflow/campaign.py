"""A campaign file: validation against the JSON schema, then the checks a schema cannot make.

Every problem becomes one :class:`ConfigError` whose message names the field,
e.g. ``benchmarks.triad.timeout_s: -1 is less than or equal to the minimum of 0``.
Reading a campaign imports no numerical library (NumPy, SciPy, METIS...): ``pinbench run``
and the Snakefile read one at every call (tests/test_architecture.py).
"""
from __future__ import annotations

import copy
import glob
import math
import os
import re
import shlex
import string
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import yaml

from pinbench.errors import PinbenchError, escaped
from pinbench.measure.settings import SHORTHAND, Metric, metric
from pinbench.measure.stopping import fewest_for_interval
from pinbench.place.domains import PlacementError, slots, socket_groups, socket_slots
from pinbench.place.registry import WRAPPING, is_own_name, needs_matrix, parse_strategy
from pinbench.place.symmetry import level_counts
from pinbench.place.policies import predict
from pinbench.place.user import UserPlacement
from pinbench.results.runs import METRICS
from pinbench.results.layout import Layout
from pinbench.stats.attainable import too_few
from pinbench.stats.sample_size import MIN_N
from pinbench.topology import Topology, TopologyError, is_synthetic, load
from pinbench.workflow.params import ParamsError, expand as expand_params

#: The campaign file's JSON schema (``validate()`` of Snakemake reads it too).
SCHEMA = Path(__file__).resolve().parent / "schemas" / "campaign.schema.yaml"
#: The machine presets of the pinning study (``topology: nehalem``...), one YAML file each.
PRESETS = Path(__file__).resolve().parent / "presets"

#: Variables the launcher owns; a campaign may not set them.
RESERVED_ENV = frozenset({"OMP_NUM_THREADS", "OMP_PLACES", "OMP_PROC_BIND",
                          "OMP_DISPLAY_AFFINITY", "OMP_AFFINITY_FORMAT", "GOMP_CPU_AFFINITY",
                          "KMP_AFFINITY"})
BUILD_FIELDS = {"cc", "cflags", "ldflags", "source", "output"}
TRACE_BUILD_FIELDS = BUILD_FIELDS | {"trace_cflags", "trace_ldflags"}
RUN_FIELDS = {"binary", "input", "threads"}
#: The placeholders ``params`` may not take: those the commands already have.
BUILTIN_FIELDS = TRACE_BUILD_FIELDS | RUN_FIELDS | {"tree"}
#: Names of campaigns, machines and benchmarks (:data:`SCHEMA`): safe as path parts.
#: ``\Z``, not ``$``: the schema's patterns are searched with Python's ``re``, whose ``$``
#: also matches before a trailing newline.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z"
#: What a campaign string may not hold: the unprintable characters
#: (:func:`pinbench.errors.escaped`) but tab and newline (a multi-line command, a tab in a
#: regex), which print as they are.
_REFUSED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
#: The most values (mappings, lists and scalars) a campaign may hold, YAML aliases expanded.
#: Campaigns hold a few hundred; a file of aliases of aliases ("billion laughs") holds
#: billions once expanded, which every check, Snakemake's validate() and a JSON dump walk.
MAX_VALUES = 100_000


class ConfigError(PinbenchError, ValueError):
    """A campaign file is wrong; the message is one line naming the field.

    Control characters of the values it quotes are written as escapes, so that
    the message stays one line, and reaches the terminal as text, whatever the file holds.
    """

    def __init__(self, message: str):
        super().__init__(escaped(message))


@dataclass(frozen=True)
class Machine:
    """A machine of the campaign and the thread counts it runs."""

    name: str
    spec: str  #: "auto", an XML path or a synthetic string (presets resolved)
    #: the tree (None for a SLURM machine: its node reads its own when the campaign runs)
    topology: Topology | None
    measure: bool
    threads: tuple[int, ...]
    #: where it is measured on a SLURM cluster (the ``slurm`` settings), or None: here
    slurm: dict | None = None

    @property
    def pus(self) -> int:
        """Its placeable PUs (a SLURM node's: the CPUs its settings give)."""
        return len(self.topology.placeable) if self.topology is not None else self.slurm["cpus"]


def _with_defaults(validator_class):
    """A validator class that also fills in schema defaults, as Snakemake's ``validate`` does."""
    validate_props = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for key, sub in properties.items():
                if "default" in sub and key not in instance:
                    instance[key] = copy.deepcopy(sub["default"])
        yield from validate_props(validator, properties, instance, schema)

    # "integer" means an int: 2.0 would pass JSON Schema's integer and end up in paths as t2.0
    integers = validator_class.TYPE_CHECKER.redefine(
        "integer", lambda checker, instance: isinstance(instance, int)
        and not isinstance(instance, bool))
    return jsonschema.validators.extend(validator_class, {"properties": set_defaults},
                                        type_checker=integers)


def _where(path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _refusal(text: str) -> str:
    """Why a campaign string cannot be taken, or "" (see :func:`check_values`)."""
    found = _REFUSED.search(text)
    if found is None:
        return ""
    char = found.group()
    if char == "\0":
        return "holds a NUL byte, which no argument, environment variable or file name can hold"
    if "\ud800" <= char <= "\udfff":
        return (f"holds a lone surrogate ({char!r}), which is no character and cannot be "
                "written as UTF-8 (to a file or a terminal)")
    return (f"holds the control character {char!r}, which a terminal would obey when the "
            "value is printed (of the control characters only tab and newline are allowed)")


def _children(value) -> list:
    """The (key or index, item) pairs of a mapping or a list; none for a scalar."""
    if isinstance(value, dict):
        return list(value.items())
    return list(enumerate(value)) if isinstance(value, list) else []


def check_size(config: dict) -> None:
    """Refuse a campaign holding more than :data:`MAX_VALUES` values once its YAML aliases are
    expanded, or holding itself (an alias inside its own anchor), naming the field.

    A YAML reader gives every alias its anchor's own object, so ten lines of aliases of
    aliases make a graph whose tree, walked value by value, holds billions of values. The
    expanded size of each mapping and list is computed once (memoised by identity) in one
    depth-first walk of the graph: linear in the file. The field named is the first (in the
    file's order) whose expansion is too large and which is an anchor, or holds only values
    small enough.
    """
    size: dict[int, int] = {}  # id -> values below a mapping or list, itself included, capped
    refs: dict[int, int] = {}  # id -> the places a mapping or list is reached from
    walking: set[int] = set()  # the mappings and lists above the value popped
    stack: list[tuple[tuple, object, bool]] = [((), config, False)]
    while stack:  # iterative: a deeply nested file must not exhaust the stack
        path, value, finished = stack.pop()
        key = id(value)
        if finished:
            walking.discard(key)
            size[key] = min(MAX_VALUES + 1, 1 + sum(size.get(id(item), 1)
                                                    for _, item in _children(value)))
            continue
        if key in walking:
            raise ConfigError(f"{_where(path)}: a YAML alias inside its own anchor (the value "
                              "would hold itself)")
        refs[key] = refs.get(key, 0) + 1
        if key in size:
            continue
        walking.add(key)
        stack.append((path, value, True))
        stack.extend(((*path, k), item, False) for k, item in _children(value)
                     if isinstance(item, (dict, list)))
    if size[id(config)] <= MAX_VALUES:
        return
    path, value = (), config
    while refs[id(value)] == 1 and (big := next(((k, item) for k, item in _children(value)
                                                 if size.get(id(item), 1) > MAX_VALUES), None)):
        path, value = (*path, big[0]), big[1]
    what = "YAML aliases expand to" if max(refs.values()) > 1 else "holds"
    raise ConfigError(f"{_where(path)}: {what} more than {MAX_VALUES:,} values (a campaign "
                      "holds a few hundred)")


def check_values(config: dict) -> None:
    """Refuse what no schema keyword can: a campaign too large once its YAML aliases are
    expanded (:func:`check_size`), NaN or infinite numbers, and strings (values and
    keys) holding a NUL byte, a control character but tab and newline, or a lone surrogate.

    NaN passes every bound (each comparison with it is false) and neither NaN nor
    infinity is a usable confidence, timeout or weight; a NUL byte cannot be part
    of an argument, an environment variable or a file name; an escape sequence (ESC...)
    in a value Snakemake's job lines print (the run and build commands) would reach the
    terminal raw, clearing it or setting its title; a lone surrogate (``"\\ud800"`` in
    YAML) cannot be written as UTF-8, so the report would fail once everything is measured.
    """
    check_size(config)
    stack = [((), config)]
    while stack:  # iterative: a deeply nested file must not exhaust the stack
        path, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{_where(path)}: {value} is not a finite number")
        if isinstance(value, str) and (why := _refusal(value)):
            raise ConfigError(f"{_where(path)}: {value!r} {why}")
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and (why := _refusal(key)):
                    raise ConfigError(f"{_where(path)}: key {key!r} {why}")
                stack.append(((*path, key), item))
        elif isinstance(value, list):
            stack.extend(((*path, k), item) for k, item in enumerate(value))


def schema_error(error: jsonschema.ValidationError) -> str:
    """One line for a schema violation: the field, then the problem."""
    where = _where(error.absolute_path)
    if error.validator == "pattern" and error.schema["pattern"] == NAME_PATTERN:
        return (f"{where}: name {error.instance!r} is not allowed (use 1-64 letters, digits, "
                "'_', '.' or '-', starting with a letter or digit; names become path parts)")
    if where == "repetitions" and error.validator == "minimum":  # the schema's minimum: MIN_N
        return (f"repetitions: {error.instance} runs per strategy are too few; the Speedup-Test "
                f"needs at least {MIN_N} (its Shapiro-Wilk test of normality is not defined on "
                "fewer)")
    return f"{where}: {error.message}"


def validate_schema(config: dict, schema_path: Path) -> dict:
    """Check ``config`` against the schema, fill defaults in place, and return it."""
    schema = yaml.safe_load(schema_path.read_text())
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is not None:
        raise ConfigError(schema_error(error))
    return config


def _placeholders(template: str, where: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc} in {template!r}") from None


def _check_template(template: str, allowed: set[str], where: str) -> set[str]:
    used = _placeholders(template, where)
    unknown = sorted(used - allowed)
    try:  # also placeholders nested in a format spec ("{cc:{x}}"), and the specs themselves
        template.format(**dict.fromkeys(allowed, ""))
    except KeyError as exc:
        unknown = unknown or [str(exc.args[0])]
    except (ValueError, IndexError) as exc:
        raise ConfigError(f"{where}: {exc} in {template!r}") from None
    if unknown:
        name = unknown[0]
        raise ConfigError(f"{where}: unknown placeholder {{{name}}} "
                          f"(known: {', '.join('{%s}' % a for a in sorted(allowed))}; "
                          f"for a literal brace write it twice, e.g. ${{{{{name}}}}})")
    return used


def _check_regex(pattern: str | None, where: str, groups: int = 0) -> None:
    if pattern is None:
        return
    try:
        compiled = re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise ConfigError(f"{where}: invalid regular expression ({exc})") from None
    if compiled.groups < groups:
        raise ConfigError(f"{where}: the regular expression needs a group capturing the number")


def _check_metric(setting: str | dict, where: str) -> Metric:
    """A metric as written (a regex, or ``{regex, required}``) checked, in the one shape a
    job holds (:func:`pinbench.measure.settings.metric`): a required metric is its regex
    however written, so its journals' fingerprints are those of a campaign that wrote it so."""
    if isinstance(setting, str):
        _check_regex(setting, where, groups=1)
        return metric(setting)
    _check_regex(setting["regex"], f"{where}.regex", groups=1)
    return metric(setting["regex"], setting.get("required", True))


def _check_time(bench: dict, where: str) -> dict | None:
    """The benchmark's printed time as written (``time``, or its shorthand ``time_regex``)
    checked, as ``time`` with every key (None: the launcher's wall time)."""
    if bench["time"] is not None and bench["time_regex"] is not None:
        raise ConfigError(f"{where}.time: set with time_regex, its shorthand: keep one")
    if bench["time_regex"] is not None:
        _check_regex(bench["time_regex"], f"{where}.time_regex", groups=1)
        return {"regex": bench["time_regex"]} | SHORTHAND
    if bench["time"] is not None:
        _check_regex(bench["time"]["regex"], f"{where}.time.regex", groups=1)
    elif "time_share_expected" in bench:
        raise ConfigError(f"{where}.time_share_expected: the benchmark has no printed time "
                          "(time or time_regex) to expect a share of")
    return bench["time"]


def _check_env(env: dict, where: str) -> None:
    owned = sorted(set(env) & RESERVED_ENV)
    if owned:
        raise ConfigError(f"{where}.{owned[0]}: set by the launcher for each strategy; "
                          "a campaign may not set it")


def _check_run(config: dict, name: str, where: str) -> None:
    """``run``, ``input`` and ``trace_input`` split into arguments as a shell would (shlex)."""
    bench = config["benchmarks"][name]
    for field in ("input", "trace_input", "run", "sequential"):
        value = bench.get(field)
        if value is None:
            continue
        try:
            shlex.split(value)
        except ValueError as exc:
            raise ConfigError(f"{where}.{field}: {value!r} cannot be split into arguments as a "
                              f"shell would ({exc})") from None
    for traced in (False, True):
        try:
            run_argv(config, name, "binary", 1, traced)
        except ValueError as exc:
            field = "trace_input" if traced and bench["trace_input"] is not None else "input"
            raise ConfigError(f"{where}.run: {bench['run']!r} with {field} {bench[field]!r} "
                              f"cannot be split into arguments as a shell would ({exc})") from None


def _check_derived_names(config: dict) -> None:
    """No benchmark is named like another one's traced variant (``bin/X`` and ``bin/X.traced``)."""
    layout = Layout.of(config["campaign"])
    plain = {layout.binary("M", name): name for name in config["benchmarks"]}
    for name in config["benchmarks"]:
        traced = layout.binary("M", name, traced=True)
        if traced in plain:
            built = Path(traced).name
            raise ConfigError(f"benchmarks.{plain[traced]}: clashes with the traced variant of "
                              f"benchmark {name!r} (both would build bin/{built}); rename it")


def repetitions_warning(config: dict, machines: dict[str, Machine]) -> str:
    """What to say before measuring when the campaign's runs per strategy cannot make any
    strategy significantly faster or slower (:func:`pinbench.stats.attainable.too_few`), in
    a cell (Holm over its strategies) or over the whole report (the campaign's
    ``report_decision`` over every cell's), naming each level that fails and the least
    repetitions with which both can; "" when they can. The fewest runs a strategy may end
    with count: ``stopping.min`` when jobs may stop early. Identical placements, tested
    once, would make fewer tests: the count here is the most there can be.
    """
    runs = config["stopping"]["min"] if config["stopping"] else config["repetitions"]
    tested = len(config["strategies"]) - 1
    field = "stopping.min" if config["stopping"] else "repetitions"
    everywhere = report_tests(config, machines)
    said = too_few(runs, runs, tested, everywhere, 1 - config["confidence"],
                   config["report_decision"]) if everywhere else ""
    return f"{field}: {said}" if said else ""


def report_tests(config: dict, machines: dict[str, Machine]) -> int:
    """The most tests the report can make: every strategy but the baseline in every measured
    cell (identical placements, tested once, make fewer)."""
    cells = sum(len(config["benchmarks"]) * len(m.threads) for m in machines.values()
                if m.measure)
    return (len(config["strategies"]) - 1) * cells


def own_placements(entries: dict) -> dict[str, UserPlacement]:
    """The campaign's own placements (its ``placements:`` entries), by name."""
    return {name: UserPlacement.of(name, entry) for name, entry in entries.items()}


def _check_own_placements(config: dict, machines: dict[str, Machine]) -> None:
    """Each placement of the campaign's own is named apart from pinbench's strategies, and
    gives a PU to every thread of every thread count on every machine that has a tree."""
    for name, placement in own_placements(config["placements"]).items():
        if is_own_name(name):
            raise ConfigError(f"placements.{name}: the name of one of pinbench's strategies; "
                              "give it another")
        if name not in config["strategies"]:
            continue
        for machine in machines.values():
            if machine.topology is None:  # a SLURM node: checked when placing, on its tree
                continue
            for n in machine.threads:
                try:
                    placement.place(machine.topology, n)
                except PlacementError as exc:
                    raise ConfigError(f"placements.{name} on machine {machine.name!r} with {n} "
                                      f"threads: {exc}") from None


def _check_policies(config: dict, machines: dict[str, Machine]) -> None:
    """A runtime's policy has a place for every thread, on every machine with a tree."""
    for strategy in config["strategies"]:
        if not parse_strategy(strategy, own_placements(config["placements"]))[0].policy:
            continue
        for machine in machines.values():
            for n in machine.threads if machine.topology is not None else ():
                try:
                    predict(machine.topology, strategy, n)
                except PlacementError as exc:
                    raise ConfigError(f"strategies: {strategy} on machine {machine.name!r} with "
                                      f"{n} threads: {exc}") from None


def _check_sockets(config: dict, machines: dict[str, Machine]) -> None:
    """Every ``lpgp-K``/``gplp-K`` finds K sockets, and room for the threads, on every machine."""
    for strategy in config["strategies"]:
        sockets = parse_strategy(strategy, own_placements(config["placements"]))[1]
        for machine in machines.values() if sockets is not None else ():
            if machine.topology is None:  # a SLURM node: checked when placing, on its tree
                continue
            for n in machine.threads:
                pus = slots(machine.topology, n)
                have = len(socket_slots(machine.topology, pus))
                if sockets > have:
                    raise ConfigError(f"strategies: {strategy} asks for {sockets} sockets; "
                                      f"machine {machine.name!r} has {have} with PUs for "
                                      f"{n} threads")
                try:
                    socket_groups(machine.topology, pus, sockets, n)
                except PlacementError as exc:
                    raise ConfigError(f"strategies: {strategy} on machine {machine.name!r} "
                                      f"with {n} threads: {exc}") from None


def _check_benchmarks(config: dict, root: Path) -> None:
    tracing = traces(config)
    for name, bench in config["benchmarks"].items():
        where = f"benchmarks.{name}"
        params = set(bench["params"])
        clash = sorted(params & BUILTIN_FIELDS)
        if clash:
            raise ConfigError(f"{where}.params.{clash[0]}: the name of a placeholder pinbench "
                              "fills in; choose another")
        has_tree = {"tree"} if "tree" in bench or "source" in bench else set()
        used = _check_template(bench["build"], BUILD_FIELDS | params | has_tree, f"{where}.build")
        traced = (_check_template(bench["trace_build"], TRACE_BUILD_FIELDS | params | has_tree,
                                  f"{where}.trace_build") if tracing else set())
        for field in ("input", "trace_input"):
            if bench[field] is not None:
                _check_template(bench[field], params | {"threads"}, f"{where}.{field}")
        if "source" in bench:
            source = root / bench["source"]  # an absolute path stays as it is
            try:
                exists = source.is_file()
            except OSError as exc:  # e.g. a name too long
                raise ConfigError(f"{where}.source: {exc.strerror}") from None
            if not exists:
                raise ConfigError(f"{where}.source: {bench['source']} does not exist")
            bench["source"] = str(source)
        elif "source" in used or "source" in traced:
            command = "build" if "source" in used else "trace_build"
            raise ConfigError(f"{where}.source: required by the {command} command")
        if "output" not in used:
            raise ConfigError(f"{where}.build: must write the binary to {{output}}")
        if "binary" not in _check_template(bench["run"], RUN_FIELDS | params, f"{where}.run"):
            raise ConfigError(f"{where}.run: must start the built {{binary}}")
        if bench.get("sequential") is not None:
            _check_template(bench["sequential"], RUN_FIELDS | params, f"{where}.sequential")
        if "tree" in bench:
            bench["tree"] = str(root / bench["tree"])
        if "cwd" in bench:
            bench["cwd"] = _run_folder(bench["cwd"], root, f"{where}.cwd")
        if "inputs" in bench:
            bench["inputs"] = _input_patterns(bench["inputs"], root, f"{where}.inputs")
        _check_run(config, name, where)
        _check_regex(bench["validate"], f"{where}.validate")
        bench["time"] = _check_time(bench, where)
        bench["metrics"] = {name: _check_metric(setting, f"{where}.metrics.{name}")
                            for name, setting in bench["metrics"].items()}
        _check_env(bench["env"], f"{where}.env")
        _check_file_names(config, name, where)


def _check_file_names(config: dict, name: str, where: str) -> None:
    """The files a benchmark's build reads (Snakemake's job lines may name them) have
    printable names: no control character, no byte that is not UTF-8."""
    for path in build_sources(config, name):
        if _REFUSED.search(path):
            field = "inputs" if "inputs" in config["benchmarks"][name] else "source"
            raise ConfigError(f"{where}.{field}: the build reads {path!r}, a file name with a "
                              "control character or bytes that are not UTF-8; rename it")


def _run_folder(folder: str, root: Path, where: str) -> str:
    """A benchmark's ``cwd`` as an absolute path (a relative one is read from ``root``); it
    must be a folder."""
    path = os.path.normpath(root / folder)  # an absolute path stays as it is
    if not os.path.isdir(path):
        raise ConfigError(f"{where}: {folder} is not a folder (the runs start there)")
    return path


def _input_patterns(patterns: list[str], root: Path, where: str) -> list[str]:
    """The ``inputs`` patterns made absolute (relative ones are read from ``root``); a path
    without a wildcard must exist (a pattern may match nothing until a build has run)."""
    absolute = []
    for pattern in patterns:
        path = pattern if Path(pattern).is_absolute() else str(root / pattern)
        if not glob.has_magic(path) and not Path(path).is_file():
            raise ConfigError(f"{where}: {pattern} does not exist")
        absolute.append(path)
    return absolute


def input_files(patterns: list[str]) -> list[str]:
    """Every file the ``inputs`` patterns match now (``**`` spans folders), sorted, once."""
    return sorted({path for pattern in patterns for path in glob.glob(pattern, recursive=True)
                   if Path(path).is_file()})


def resolve_topology(spec: str, presets: Path, root: Path) -> str:
    """A topology value with presets expanded and relative XML paths made absolute."""
    if spec == "auto" or is_synthetic(spec):
        return spec
    preset = presets / f"{spec}.yaml"
    if re.fullmatch(r"[A-Za-z0-9_-]+", spec):
        if not preset.is_file():
            known = ", ".join(sorted(p.stem for p in presets.glob("*.yaml")))
            raise ConfigError(f"no machine preset {spec!r} (presets: {known})")
        return yaml.safe_load(preset.read_text())["topology"]
    path = Path(spec) if Path(spec).is_absolute() else root / spec
    return str(path)


def _machines(config: dict, presets: Path, root: Path) -> dict[str, Machine]:
    machines = {}
    for name, entry in config["machines"].items():
        where = f"machines.{name}"
        if "slurm" in entry:
            machines[name] = _slurm_machine(config, name, entry)
            continue
        try:
            spec = resolve_topology(entry["topology"], presets, root)
            topo = load(spec)
        except (ConfigError, TopologyError) as exc:
            raise ConfigError(f"{where}.topology: {exc}") from None
        except OSError as exc:  # e.g. a name too long for a file name
            raise ConfigError(f"{where}.topology: {exc.strerror}") from None
        measure = entry.get("measure", spec == "auto")
        if measure and spec != "auto":
            raise ConfigError(f"{where}.measure: only a machine with topology \"auto\" is "
                              "measured here; other topologies are planned (placements only)")
        machines[name] = Machine(name, spec, topo, measure,
                                 _thread_counts(config, name, entry, len(topo.placeable), topo))
    return machines


def _thread_counts(config: dict, name: str, entry: dict, pus: int,
                   topo: Topology | None) -> tuple[int, ...]:
    """A machine's thread counts, each at most ``pus``: ``all`` resolved to ``pus``, ``levels``
    to the counts at which placements differ on its tree ``topo``
    (:func:`pinbench.place.symmetry.level_counts`; None: a SLURM node's, read there)."""
    field = f"machines.{name}.threads" if "threads" in entry else "threads"
    threads = []
    for written in entry.get("threads", config["threads"]):
        if written == "levels" and topo is None:
            raise ConfigError(f"{field}: levels needs the tree of machine {name!r}, which its "
                              "SLURM node reads only when the campaign runs; give the machine "
                              f"its own thread counts (machines.{name}.threads: [2, 8, all], say)")
        counts = level_counts(topo) if written == "levels" else [pus if written == "all"
                                                                 else written]
        for count in counts:
            if count > pus and not config["oversubscribe"]:
                raise ConfigError(f"{field}: {count} threads exceed the {pus} placeable PUs "
                                  f"of machine {name!r} (oversubscribe: true allows that)")
            if count not in threads:
                threads.append(count)
    if not threads:
        raise ConfigError(f"{field}: no thread count for machine {name!r}: levels gives none "
                          "on its tree (no level of it groups more than one PU and fewer than "
                          "all where placements differ: a flat machine); add all")
    return tuple(threads)


def _slurm_machine(config: dict, name: str, entry: dict) -> Machine:
    """A machine measured on a SLURM node: its own topology (``auto``), read there."""
    where, slurm = f"machines.{name}", entry["slurm"]
    if entry["topology"] != "auto":
        raise ConfigError(f"{where}.topology: a SLURM machine is measured on its node, whose "
                          "topology is read there: write \"auto\"")
    if ("node" in slurm) == bool(slurm.get("pool")):
        raise ConfigError(f"{where}.slurm: name one `node` (nodes compared as machines of their "
                          "own) or set `pool: true` (any node of the partition, pooled)")
    if entry.get("measure") is False:
        raise ConfigError(f"{where}.measure: a SLURM machine is measured (leave the machine out "
                          "to skip it)")
    return Machine(name, "auto", None, True,
                   _thread_counts(config, name, entry, slurm["cpus"], None), dict(slurm))


def _check_oversubscribed(config: dict, machines: dict[str, Machine]) -> None:
    """Only the strategies that wrap place more threads than a machine's PUs."""
    for strategy in config["strategies"]:
        if parse_strategy(strategy, own_placements(config["placements"]))[0].wraps:
            continue
        for machine in machines.values():
            pus = machine.pus
            over = [n for n in machine.threads if n > pus]
            if over:
                raise ConfigError(f"strategies: {strategy} cannot place {over[0]} threads on the "
                                  f"{pus} placeable PUs of machine {machine.name!r} (oversubscribed "
                                  f"thread counts take only {', '.join(WRAPPING)})")


def load_campaign(config: dict, root: Path) -> tuple[dict, dict[str, Machine]]:
    """Validate a campaign config (filling defaults) and resolve its machines.

    ``root`` is the project's directory: relative paths in the campaign are read from it.
    """
    check_values(config)
    validate_schema(config, SCHEMA)
    _check_derived_names(config)
    try:
        own = own_placements(config["placements"])
        graph = [s for s in config["strategies"] if needs_matrix(s, own)]
    except PlacementError as exc:
        raise ConfigError(f"strategies: {exc}") from None
    if graph and config["tracing"]["when"] == "never":
        raise ConfigError(f"tracing.when: \"never\", but strategy {graph[0]!r} needs the "
                          "affinity matrices a tracer makes")
    if config["metric"] not in METRICS:
        raise ConfigError(f"metric: {config['metric']!r} is none of {', '.join(METRICS)}")
    if config["baseline"] not in config["strategies"]:
        raise ConfigError(f"baseline: {config['baseline']!r} is not one of the campaign's strategies")
    _check_env(config["env"], "env")
    try:
        config["benchmarks"], config["weights"] = expand_params(config["benchmarks"],
                                                                config["weights"])
    except ParamsError as exc:
        raise ConfigError(str(exc)) from None
    if config["stopping"] and config["design"] == "sequential":
        raise ConfigError("stopping: the sequential design stops each cell on its verdict; "
                          "a stopping rule on precision goes with design: fixed only")
    fewest = fewest_for_interval(config["confidence"])
    if config["explain"] and config["explain"]["repetitions"] < fewest:
        raise ConfigError(f"explain.repetitions: {config['explain']['repetitions']} explained runs "
                          f"per strategy give no interval of their median at confidence "
                          f"{config['confidence']:g}; at least {fewest} do")
    if config["stopping"] and config["stopping"]["min"] > config["repetitions"]:
        raise ConfigError(f"stopping.min: {config['stopping']['min']} rounds before stopping is "
                          f"more than the {config['repetitions']} repetitions")
    config["benchmarks"], config["weights"] = expand_compilers(config)
    strangers = sorted(set(config["weights"]) - set(config["benchmarks"]))
    if strangers:
        raise ConfigError(f"weights.{strangers[0]}: not a benchmark of the campaign")
    _check_benchmarks(config, root)
    machines = _machines(config, PRESETS, root)
    _check_oversubscribed(config, machines)
    _check_sockets(config, machines)
    _check_own_placements(config, machines)
    _check_policies(config, machines)
    return config, machines


def default_config(root: Path) -> dict:
    """The default campaign, ``config/config.yaml``: the bundled benchmarks on this machine."""
    return yaml.safe_load((root / "config" / "config.yaml").read_text())


def traces(config: dict) -> bool:
    """Whether the campaign traces its benchmarks (``tracing.when``; auto: a graph strategy asks)."""
    when = config["tracing"]["when"]
    return when == "always" or (
        when == "auto" and any(needs_matrix(s, own_placements(config["placements"]))
                               for s in config["strategies"]))


def expand_compilers(config: dict) -> tuple[dict, dict]:
    """The benchmarks and weights, each benchmark once per compiler of ``compilers`` (as
    ``X-<name>``, built with that compiler: :func:`compiler_of`); as they are without.

    ConfigError for a single compiler, a build that does not use ``{cc}`` (every compiler
    would build the same program), or an expanded name a benchmark already has.
    """
    compilers, benchmarks = config["compilers"], config["benchmarks"]
    if not compilers:
        return benchmarks, config["weights"]
    if len(compilers) < 2:
        raise ConfigError("compilers: two or more to compare (one: set compiler instead)")
    expanded, weights = {}, {}
    for bench, entry in benchmarks.items():
        if "{cc}" not in entry["build"]:
            raise ConfigError(f"benchmarks.{bench}.build: does not use {{cc}}, so every "
                              "compiler of compilers would build the same program")
        for name in compilers:
            built = f"{bench}-{name}"
            if built in benchmarks:
                raise ConfigError(f"benchmarks.{built}: the name of {bench} built by compiler "
                                  f"{name!r}; rename it")
            expanded[built] = entry | {"compiler": name}
            if bench in config["weights"]:
                weights[built] = config["weights"][bench]
    return expanded, weights | {k: v for k, v in config["weights"].items()
                                if k not in benchmarks}


def compiled(config: dict) -> dict[str, tuple[str, str]]:
    """Each benchmark built by one of ``compilers`` -> (the benchmark as written, the
    compiler's name); empty without ``compilers``."""
    return {bench: (bench[:-len(entry["compiler"]) - 1], entry["compiler"])
            for bench, entry in config["benchmarks"].items() if "compiler" in entry}


def compiler_of(config: dict, bench: str) -> dict[str, str]:
    """The compiler settings (``cc``, ``cflags``, ``ldflags``) that build ``bench``: its
    compiler's of ``compilers``, the campaign's ``compiler`` filling what it leaves out."""
    name = config["benchmarks"][bench].get("compiler")
    return config["compiler"] | (config["compilers"][name] if name else {})


def _fields(entry: dict, **builtins: str) -> dict[str, str]:
    """The values of a command's placeholders: the benchmark's params, then pinbench's own."""
    return dict(entry["params"]) | builtins


#: The placeholders of a build command that name files (absolute paths, shell-quoted).
PATH_FIELDS = ("output", "source", "tree")


def build_fields(config: dict, bench: str, output: str,
                 traced_flags: tuple[str, str] | None = None) -> dict[str, str]:
    """The values of the placeholders of a benchmark's build command (:func:`build_command`),
    the paths of :data:`PATH_FIELDS` absolute and not yet quoted."""
    entry = config["benchmarks"][bench]
    tree = traced_tree(output) if traced_flags and "tree" in entry else build_tree(config, bench)
    fields = _fields(entry, **compiler_of(config, bench), output=os.path.abspath(output),
                     source=entry.get("source", ""), tree=tree)
    if traced_flags is not None:
        fields.update(trace_cflags=traced_flags[0], trace_ldflags=traced_flags[1])
    return fields


def build_template(config: dict, bench: str, traced: bool = False) -> str:
    """A benchmark's ``build`` command as written, or its ``trace_build`` (``traced``)."""
    return config["benchmarks"][bench]["trace_build" if traced else "build"]


def build_command(config: dict, bench: str, output: str,
                  traced_flags: tuple[str, str] | None = None) -> str:
    """The shell command that builds one benchmark into ``output`` (made an absolute path,
    so a ``cd`` in the command does not break it; ``{tree}`` and ``{source}`` are absolute).

    With ``traced_flags`` (compile and link flags of the tsan tracer), the
    benchmark's ``trace_build`` command, which builds the traced variant (in a copy of
    its ``tree``, if it has one: :func:`traced_tree`).
    """
    fields = build_fields(config, bench, output, traced_flags)
    fields.update({name: shlex.quote(fields[name]) for name in PATH_FIELDS})
    return build_template(config, bench, traced_flags is not None).format(**fields)


def build_sources(config: dict, bench: str, generated: frozenset[str] = frozenset()) -> list[str]:
    """The files a build reads: its ``inputs``, or the source and the C/C++ headers beside it;
    but not those a build of it wrote (``generated``: such a file changes with every build)."""
    entry = config["benchmarks"][bench]
    if "inputs" in entry:
        files = input_files(entry["inputs"])
    elif "source" in entry:
        source = entry["source"]
        files = [source, *sorted(str(p) for ext in ("*.h", "*.hpp")
                                 for p in Path(source).parent.glob(ext))]
    else:
        files = []
    return [path for path in files if path not in generated]


def traced_tree(output: str) -> str:
    """Where the traced variant ``output`` of a benchmark with a ``tree`` is built: a private
    copy of the tree beside the binary (:mod:`pinbench.workflow.building`)."""
    return os.path.abspath(output) + ".tree"


def build_tree(config: dict, bench: str) -> str:
    """What a build writes into, so that builds writing one place never run together: its
    ``tree``, else its source's directory, else its build command as written (one benchmark
    expanded by ``params``, or several with one command, build alike)."""
    entry = config["benchmarks"][bench]
    if "tree" in entry:
        return entry["tree"]
    if "source" in entry:
        return str(Path(entry["source"]).parent)
    return "build: " + entry["build"]


def sequential_argv(config: dict, bench: str, binary: str) -> list[str] | None:
    """The argument vector of the benchmark's ``sequential`` command (T_s), or None."""
    entry = config["benchmarks"][bench]
    if entry.get("sequential") is None:
        return None
    size = entry["input"].format(**_fields(entry, threads="1"))
    return shlex.split(entry["sequential"].format(**_fields(
        entry, binary=shlex.quote(os.path.abspath(binary)), input=size, threads="1")))


def run_env(config: dict, bench: str) -> dict[str, str]:
    """What a benchmark's runs and traces add to their environment: the campaign's ``env``,
    then the benchmark's."""
    return config["env"] | config["benchmarks"][bench]["env"]


def run_argv(config: dict, bench: str, binary: str, threads: int,
             traced: bool = False) -> list[str]:
    """The argument vector of one run (no shell, so the launcher times the program itself);
    the binary as an absolute path.

    ``traced`` uses the benchmark's ``trace_input`` when it has one.
    """
    entry = config["benchmarks"][bench]
    size = entry["trace_input"] if traced and entry["trace_input"] is not None else entry["input"]
    size = size.format(**_fields(entry, threads=str(threads)))
    return shlex.split(entry["run"].format(**_fields(
        entry, binary=shlex.quote(os.path.abspath(binary)), input=size, threads=str(threads))))
