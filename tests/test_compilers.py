"""Compilers side by side (``compilers:``): every benchmark built and measured once per
compiler, each compiler's cells compared with the first's (pinbench.stats.runtimes)."""
from __future__ import annotations

import csv

import numpy as np
import pytest
import yaml
from conftest import ROOT, needs_two_cpus, report_text, run_campaign, run_record
from optional_tools import requires

from pinbench.stats.runtimes import compare_compilers, lines
from pinbench.workflow.campaign import ConfigError, load_campaign

CAMPAIGN = {"campaign": "cc", "machines": {"m": {"topology": "nehalem"}}, "threads": [2],
            "compilers": {"gcc": {"cc": "gcc"}, "clang": {"cc": "clang", "cflags": "-O1 -fopenmp"}},
            "weights": {"spin": 2},
            "benchmarks": {"spin": {"source": "tests/data/spin.c"}}}


def test_every_benchmark_is_built_once_per_compiler():
    config, _ = load_campaign(yaml.safe_load(yaml.safe_dump(CAMPAIGN, sort_keys=False)), ROOT)
    assert list(config["benchmarks"]) == ["spin-gcc", "spin-clang"]
    assert config["weights"] == {"spin-gcc": 2, "spin-clang": 2}
    from pinbench.workflow.campaign import build_command, compiled

    gcc = build_command(config, "spin-gcc", "/out/spin-gcc")
    clang = build_command(config, "spin-clang", "/out/spin-clang")
    assert gcc.startswith("gcc -O2 -fopenmp -o /out/spin-gcc ")
    assert clang.startswith("clang -O1 -fopenmp -o /out/spin-clang ") and clang.endswith("-lm")
    assert compiled(config) == {"spin-gcc": ("spin", "gcc"), "spin-clang": ("spin", "clang")}


@pytest.mark.parametrize("change, message", [
    ({"compilers": {"gcc": {"cc": "gcc"}}}, "compilers: two or more"),
    ({"benchmarks": {"spin": {"source": "tests/data/spin.c", "build": "make spin"}}},
     "benchmarks.spin.build: does not use {cc}"),
    ({"benchmarks": {"spin": {"source": "tests/data/spin.c"},
                     "spin-gcc": {"source": "tests/data/spin.c"}}},
     "benchmarks.spin-gcc: the name of spin built by compiler 'gcc'"),
])
def test_a_bad_compilers_entry_is_one_line(change, message):
    with pytest.raises(ConfigError, match=message):
        load_campaign(yaml.safe_load(yaml.safe_dump(CAMPAIGN | change, sort_keys=False)), ROOT)


def _runs(bench: str, strategy: str, times) -> list:
    return [run_record(benchmark=bench, strategy=strategy, repetition=k, order_index=k,
                       time_s=float(t), verification="ok") for k, t in enumerate(times)]


def test_a_planted_difference_between_compilers_is_found_and_only_it():
    rng = np.random.default_rng(1)
    same = lambda: 1.0 * np.exp(rng.normal(0, 0.02, 35))  # noqa: E731
    records = (_runs("a-gcc", "compact", same()) + _runs("a-clang", "compact", 1.3 * same())
               + _runs("b-gcc", "compact", same()) + _runs("b-clang", "compact", same()))
    compiled = {"a-gcc": ("a", "gcc"), "a-clang": ("a", "clang"), "b-gcc": ("b", "gcc"),
                "b-clang": ("b", "clang")}
    rows = compare_compilers(records, compiled, ["gcc", "clang"])
    verdicts = {(r["benchmark"], r["compiler"], r["against"]): r["verdict"] for r in rows}
    assert verdicts == {("a", "clang", "gcc"): "slower",
                        ("b", "clang", "gcc"): "no measurable difference"}
    assert 1.25 < next(r for r in rows if r["benchmark"] == "a")["ratio"] < 1.35
    assert lines(rows).startswith("compilers side by side: 2 cells, 1 with a measurable")


@pytest.mark.slow
@needs_two_cpus
@requires("clang")
def test_a_campaign_compares_its_compilers(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "campaign.yaml").write_text(yaml.safe_dump(sort_keys=False, data={
        "campaign": "cc", "repetitions": 5, "threads": [2], "strategies": ["os", "compact"],
        "compilers": {"gcc": {"cc": "gcc"}, "clang": {"cc": "clang"}},
        "machines": {"here": {"topology": "auto"}},
        "benchmarks": {"spin": {"source": str(ROOT / "tests" / "data" / "spin.c"),
                                "input": "20", "timeout_s": 20}}}))
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "compilers side by side: 2 cells" in run.stdout
    results = work / "results" / "cc"
    with open(results / "runs.csv", newline="") as handle:
        benches = {row["benchmark"] for row in csv.DictReader(handle)}
    assert benches == {"spin-gcc", "spin-clang"}
    with open(results / "stats" / "runtimes.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {(r["compiler"], r["against"], r["benchmark"], r["strategy"]) for r in rows} == {
        ("clang", "gcc", "spin", "os"), ("clang", "gcc", "spin", "compact")}
    assert all(r["verdict"] in ("slower", "faster", "no measurable difference") for r in rows)
    assert "Compilers side by side" in report_text(results)
