"""The layout's promises: the measuring process loads no placement algorithm, a Snakemake call
loads no numerical library of pinbench's, no module of pinbench imports itself through others
(no import circle) and the results stage imports nothing of the measure stage, and each fact
(a strategy name, the results layout, the runs table) has one home."""
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from pinbench.place.policies import NAMES as POLICY_NAMES
from pinbench.place.record import make_placement
from pinbench.place.registry import GRAPH as registry_graph
from pinbench.place.registry import BY_REGION, NAMES, STRATEGIES
from pinbench.results.layout import Layout, placement_key
from pinbench.results.placements import write_placement
from pinbench.results.runs import read_runs
from pinbench.topology import load

#: Top-level packages the process that times benchmarks must never import.
FORBIDDEN = {"networkx", "pymetis", "rustworkx", "numpy", "scipy", "matplotlib", "snakemake",
             "jinja2"}
#: pinbench packages it must not import either: it reads placement files, nothing more.
FORBIDDEN_OWN = ("pinbench.graph", "pinbench.place", "pinbench.trace", "pinbench.workflow",
                 "pinbench.stats", "pinbench.report")
#: What reading a campaign and the Snakefile (every Snakemake call) must not import: the
#: libraries of the stages, imported by the rules that run them.
NUMERICAL = FORBIDDEN - {"snakemake"}


def imported_modules(stderr: str) -> set[str]:
    """Module names from the ``-X importtime`` lines of a process's stderr."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines()
            if line.startswith("import time:") and line.count("|") == 2} - {"package"}


#: What the sequential design's job may import besides the fixed one's: NumPy and SciPy's
#: special functions for its looks, never scipy.stats or scipy.optimize (half a second each
#: job) nor the analysis.
SEQUENTIAL = ("pinbench.stats.sequential", "pinbench.stats.location", "pinbench.stats.attainable",
              "pinbench.stats.sample_size", "pinbench.stats.disk_cache", "pinbench.stats")


@pytest.mark.slow
@pytest.mark.parametrize("design", ["fixed", "sequential"])
def test_the_measuring_process_imports_no_placement_algorithm(spin_binaries, tmp_path, design):
    """A real job through ``python -m pinbench.measure``, every import of its life recorded;
    the sequential design's job looks once (after 3 rounds of 6) and imports its statistics
    alone."""
    topo = load("auto")
    threads = len(topo.placeable)
    repetitions = 2 if design == "fixed" else 6
    placements = []
    for strategy in ("os", "compact", "random"):
        path = tmp_path / f"{strategy}.json"
        write_placement(make_placement(topo, strategy, threads, seed=1,
                                       repetitions=repetitions), path)
        placements.append(str(path))
    spec = {"machine": "here", "benchmark": "spin", "threads": threads,
            "argv": [str(spin_binaries["gcc"]), "5"], "env": {}, "validate": "^validation: OK$",
            "time_regex": None, "timeout_s": 20, "repetitions": repetitions, "seed": 1,
            "order": "interleaved", "strategies": ["os", "compact", "random"]}
    if design == "sequential":
        spec["sequential"] = {"baseline": "os", "alpha": 0.05}
    out = tmp_path / "t.csv"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pinbench.measure", "--spec", json.dumps(spec),
         "--placements", *placements, "--journal", str(tmp_path / "t.jsonl"), "--out", str(out),
         "--lock", str(tmp_path / "lock")],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the job really ran (the sequential one may stop at its look): every import is counted
    runs = len(read_runs([out]))
    assert runs == 3 * repetitions if design == "fixed" else 9 <= runs <= 18
    modules = imported_modules(proc.stderr)
    assert "pinbench.measure.job" in modules and "pinbench.results.placements" in modules
    allowed = set() if design == "fixed" else {"numpy", "scipy"}
    heavy = sorted(m for m in modules if m.split(".")[0] in FORBIDDEN - allowed
                   or m.startswith(("scipy.stats", "scipy.optimize")))
    assert heavy == [], f"the measuring process imported {heavy[:10]}"
    if design == "sequential":  # it looked: the test of the looks was imported
        assert "pinbench.stats.location" in modules, "no look"
    own = sorted(m for m in modules if m.startswith(FORBIDDEN_OWN) and (
        design == "fixed" or m not in SEQUENTIAL))
    assert own == [], f"the measuring process imported {own}"


def numerical(modules: set[str]) -> set[str]:
    """The modules of :data:`NUMERICAL` libraries among ``modules``."""
    return {m for m in modules if m.split(".")[0] in NUMERICAL}


def importtime(*args: str, cwd=None) -> set[str]:
    """The modules a ``python -X importtime ARGS`` process imported (it must succeed)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True,
                          text=True, timeout=600, cwd=cwd)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return imported_modules(proc.stderr)


def test_reading_a_campaign_imports_no_numerical_library():
    """What ``pinbench run`` does before Snakemake starts, and the Snakefile at every call."""
    code = ("import sys\nfrom pathlib import Path\nfrom pinbench.workflow import project\n"
            "for path in sys.argv[1:]:\n    project.read_campaign(Path(path), Path.cwd())\n")
    campaigns = [ROOT / "config" / "config.yaml", *(ROOT / "config" / "campaigns").glob("*.yaml")]
    modules = importtime("-c", code, *map(str, campaigns), cwd=ROOT)
    assert "pinbench.workflow.campaign" in modules
    assert sorted(numerical(modules)) == []


@pytest.mark.slow
def test_a_snakemake_call_imports_no_numerical_library_of_its_own(tmp_path):
    """A real ``pinbench run -n`` of a campaign with every kind of job (a measured and a
    planned machine, graph strategies and their traces, explained runs) loads only the
    numerical libraries that Snakemake loads by itself (its SLURM plugin loads NumPy, its
    report plugin Jinja); and the pinbench modules it loads, imported alone, load none."""
    campaign = {"campaign": "imports", "repetitions": 3, "explain": {"repetitions": 6},
                "strategies": ["os", "random", "compact", "scatter", "lp-compact", "gp",
                               "hierarchical"],
                "machines": {"here": {"topology": "auto"}, "nehalem": {"topology": "nehalem"}},
                "benchmarks": {"spin": {"source": str(ROOT / "tests" / "data" / "spin.c"),
                                        "input": "5"}}}
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(campaign))
    run = importtime("-m", "pinbench", "run", "campaign.yaml", "-n", cwd=tmp_path)
    assert {"pinbench.workflow.rule_bodies", "pinbench.workflow.snakemake_adapter"} <= run
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "Snakefile").write_text('rule all:\n    output: "x"\n'
                                                '    shell: "touch {output}"\n')
    own = importtime("-m", "snakemake", "-s", "own/Snakefile", "-d", "own", "-n", "--cores", "1",
                     cwd=tmp_path)
    assert sorted(numerical(run) - numerical(own)) == [], "pinbench's Snakefile imported these"
    ours = sorted(m for m in run if m.split(".")[0] == "pinbench")
    alone = importtime("-c", "".join(f"import {m}\n" for m in ours))
    assert sorted(numerical(alone)) == [], "the modules the Snakefile imports import these"


def test_the_registry_is_the_only_list_of_strategy_names():
    assert NAMES == ("os", "random", "compact", "scatter", "lp-compact", "lp-scatter", "gp",
                     "lpgp", "gplp", "hierarchical", "per-region", "phase-weighted",
                     *POLICY_NAMES)
    assert POLICY_NAMES[:2] == ("close-threads", "close-cores")
    assert [n for n, s in STRATEGIES.items() if s.takes_sockets] == ["lpgp", "gplp"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # no module but the registry spells a graph strategy's name as a string literal
    for folder in ("pinbench",):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                if not name.endswith(".py") or name == "registry.py":
                    continue
                text = open(os.path.join(dirpath, name)).read()
                for strategy in (*registry_graph, *BY_REGION):
                    assert f'"{strategy}"' not in text, f"{name} names {strategy!r}"


def test_the_layout_reads_back_what_it_writes():
    layout = Layout.of("c")
    path = layout.placement("m-1", "pairs.v2", 16, "lpgp-4")
    assert path == "results/c/m-1/placements/pairs.v2/t16/lpgp-4.json"
    key = placement_key(path)
    assert (key.machine, key.benchmark, key.threads, key.strategy) == ("m-1", "pairs.v2", 16, "lpgp-4")
    assert layout.runs("{machine}", "{bench}", "{n}") == "results/c/{machine}/runs/{bench}/t{n}.csv"
    assert layout.log("{machine}", "measure", "{bench}", "{n}") == \
        "results/c/{machine}/logs/measure/{bench}/t{n}.log"
    assert layout.log(None, "report") == "results/c/logs/report.log"
    assert layout.sidecar("m", "b", 4) == "results/c/m/affinity/b/t4.json"


def module_name(path: Path) -> str:
    """The module a file of the package is: ``pinbench/results/layout.py`` is
    ``pinbench.results.layout``, a package's ``__init__.py`` the package."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imported(tree: ast.Module, name: str, is_package: bool, modules: set[str]) -> set[str]:
    """The pinbench modules module ``name`` imports: every ``import`` statement in it, at module
    level and inside functions and classes alike, but those under ``if TYPE_CHECKING:``
    (annotations only: never run). ``from pinbench.x import y`` imports ``pinbench.x.y`` when
    that is a module, else ``pinbench.x``; the packages above a module hold no imports."""
    found = set()
    todo = [tree]
    while todo:
        node = todo.pop()
        if _type_checking(node):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package up
                package = name.split(".")[:len(name.split(".")) - (not is_package)]
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            found |= {f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                      for alias in node.names}
    return {module for module in found if module in modules} - {name}


def import_graph() -> dict[str, set[str]]:
    """Every module of the package pinbench -> the pinbench modules it imports
    (:func:`imported`), read from the sources (nothing is imported)."""
    files = {module_name(path): path for path in (ROOT / "pinbench").rglob("*.py")}
    modules = set(files)
    return {name: imported(ast.parse(path.read_text()), name, path.name == "__init__.py",
                           modules) for name, path in files.items()}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm): each
    a set of modules that import one another, in a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = stack[stack.index(module):]
            del stack[stack.index(module):]
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_the_import_graph_finds_a_circle():
    """The graph and its circles, checked on a package made for it: a circle through a
    function-level import and a relative import is found, an import for annotations only
    is none."""
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}, "p.e": set()}
    assert import_circles(graph) == [["p.a", "p.b", "p.c"]]
    source = ("from typing import TYPE_CHECKING\nfrom . import b\nif TYPE_CHECKING:\n"
              "    from pinbench.x import c\ndef f():\n    import pinbench.x.d\n")
    assert imported(ast.parse(source), "pinbench.x.a", False,
                    {"pinbench.x.a", "pinbench.x.b", "pinbench.x.c", "pinbench.x.d"}) == \
        {"pinbench.x.b", "pinbench.x.d"}


def test_no_module_of_pinbench_imports_itself_through_others():
    """No import circle in the package (module-level and function-level imports counted),
    and the results stage never imports the measure stage: the measuring process writes
    results through :mod:`pinbench.results`, not the other way round."""
    graph = import_graph()
    assert {"pinbench.results.layout", "pinbench.measure.job"} <= set(graph)
    assert import_circles(graph) == []
    into_measure = {module: sorted(m for m in imports if m.startswith("pinbench.measure"))
                    for module, imports in graph.items()
                    if module.startswith("pinbench.results")}
    assert {module: found for module, found in into_measure.items() if found} == {}
