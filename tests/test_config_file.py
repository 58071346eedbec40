"""Malformed campaign files: each refused with one line by the real `pinbench run`, and what
plain `snakemake` says of them.

tests/data/bad_configs/ holds one file per class of mistake (BAD_CONFIGS says what each must
say); a few more are made here (too large, too long a number); the fuzz test mutates every
valid campaign of config/ and checks that each mutant validates or raises ConfigError, and
that Snakemake's validate() (plain `snakemake`) accepts every campaign pinbench accepts.
"""
import copy
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_campaign

from snakemake.utils import validate

from pinbench.cli import main as pinbench
from pinbench.workflow import campaign, config_file

BAD = ROOT / "tests" / "data" / "bad_configs"

#: file -> the start of its one-line error ({file}: the path given to the loader).
BAD_CONFIGS = {
    # YAML syntax: file, line and column
    "bad-indentation.yaml": "{file}:4:4: expected <block end>, but found '<block mapping start>'; "
                            "check the indentation",
    "tab-indentation.yaml": "{file}:3:1: a tab where YAML wants spaces",
    "unclosed-list.yaml": "{file}:3:9: expected ',' or ']', but got ':' (the '[' at line 2, "
                          "column 10 is not closed?)",
    "unclosed-mapping.yaml": "{file}:3:1: expected ',' or '}', but got '<scalar>' (the '{' at "
                             "line 2, column 11 is not closed?)",
    "empty.yaml": "{file}:1:1: empty file; a campaign is a mapping",
    "top-level-list.yaml": "{file}:1:1: the file holds a list; a campaign is a mapping",
    "top-level-scalar.yaml": "{file}:1:1: the file holds a single value; a campaign is a mapping",
    "python-tag.yaml": "{file}:1:11: tag !!python/object/apply:os.system is not allowed",
    "duplicate-key.yaml": "{file}:6:1: duplicate key 'benchmarks' (first at line 3)",
    "not-utf8.yaml": "{file}:4:54: not UTF-8 text (byte 0xe9)",
    "nul-byte-in-file.yaml": "{file}:4:46: character 0x0000 is not allowed in a YAML file",
    # values no schema keyword refuses
    "nan-confidence.yaml": "confidence: nan is not a finite number",
    "nan-weight.yaml": "weights.spin: nan is not a finite number",
    "inf-timeout.yaml": "benchmarks.spin.timeout_s: inf is not a finite number",
    "inf-tracing-timeout.yaml": "tracing.timeout_s: inf is not a finite number",
    "huge-timeout.yaml": "benchmarks.spin.timeout_s: 1e+300 is greater than the maximum of 604800",
    "nul-in-env.yaml": "env.GREETING: 'hello\\x00world' holds a NUL byte",
    "nul-in-benchmark-env.yaml": "benchmarks.spin.env: key 'A\\x00B' holds a NUL byte",
    "name-with-newline.yaml": "benchmarks: name 'spin\\n' is not allowed",
    "campaign-with-newline.yaml": "campaign: name 'newline\\n' is not allowed",
    "env-name-with-newline.yaml": "env: 'SIZE\\n' does not match",
    "float-thread-count.yaml": "threads.0: 2.0 is not valid under any of the given schemas",
    "billion-laughs.yaml": "env.L5: YAML aliases expand to more than 100,000 values",
    # checks across fields
    "traced-name-collision.yaml": "benchmarks.spin.traced: clashes with the traced variant of "
                                  "benchmark 'spin' (both would build bin/spin.traced)",
    "unbalanced-run.yaml": "benchmarks.spin.run: \"{binary} '{input}\" cannot be split into "
                           "arguments as a shell would (No closing quotation",
    "unbalanced-input.yaml": "benchmarks.spin.input: '\"10' cannot be split into arguments",
    "unbalanced-trace-input.yaml": "benchmarks.spin.trace_input: \"it's\" cannot be split",
    "nested-placeholder.yaml": "benchmarks.spin.build: unknown placeholder {width}",
    "missing-campaign.yaml": "(top level): 'campaign' is a required property",
    "too-few-repetitions.yaml": "repetitions: 2 runs per strategy are too few; the Speedup-Test "
                                "needs at least 3",
    "too-many-sockets.yaml": "strategies: lpgp-4 asks for 4 sockets; machine 'nehalem' has 2",
    "garbage-topology.yaml": "machines.broken.topology: topology file "
                             f"{BAD}/garbage-topology.xml is binary data, not hwloc XML text",
}


def refusal(path: Path) -> str:
    """The ConfigError message of a campaign file, read and validated in this process."""
    with pytest.raises(campaign.ConfigError) as info:
        campaign.load_campaign(config_file.load(path), ROOT)
    return str(info.value)


def test_every_bad_config_has_its_expected_message():
    assert sorted(p.name for p in BAD.glob("*.yaml")) == sorted(BAD_CONFIGS)


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_pinbench_run_refuses_a_bad_config_in_one_line(name, tmp_path, capsys, monkeypatch):
    """Through the command's entry point in this process (a Python start and Snakemake's
    imports per file would cost a minute of the suite); the real command refuses the file
    too large to read below, and every file is one line before Snakemake is imported."""
    path = BAD / name
    monkeypatch.chdir(ROOT)
    status = pinbench(["run", str(path), "-n", "--directory", str(tmp_path)])
    said = capsys.readouterr()
    lines = (said.out + said.err).splitlines()
    expected = "pinbench run: error: " + BAD_CONFIGS[name].replace("{file}", str(path))
    assert status == 2 and len(lines) == 1, said.out + said.err
    assert lines[0].startswith(expected), lines[0]


def test_a_bad_config_is_refused_before_snakemake_is_imported():
    """A bad campaign file costs no import of Snakemake (about a second): it is said first."""
    found = subprocess.run([sys.executable, "-X", "importtime", "-m", "pinbench", "run",
                            str(BAD / "empty.yaml"), "-n", "--cores", "2"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert found.returncode == 2
    imported = {line.rsplit("|", 1)[1].strip() for line in found.stderr.splitlines()
                if line.startswith("import time:") and line.count("|") == 2}
    assert "pinbench.workflow.campaign" in imported and "snakemake.cli" not in imported


@pytest.mark.slow
def test_a_file_above_the_size_limit_is_refused_before_it_is_read(tmp_path):
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as handle:  # 40 MB, sparse: nothing is written but the size
        handle.write(b"campaign: huge\n")
        handle.truncate(40 << 20)
    proc = run_campaign(tmp_path, "-n", campaign=huge, timeout=300)
    assert proc.returncode == 2
    assert (proc.stdout + proc.stderr).splitlines() == [
        f"pinbench run: error: {huge}: 41943040 bytes; a campaign file may have at most "
        "1048576 bytes (1 MiB)"], proc.stderr


def test_other_things_yaml_refuses_come_out_in_one_line(tmp_path):
    cases = {
        "long-int.yaml": ("campaign: x\nseed: " + "9" * 5000 + "\n", ":2:7: integer of 5000 characters is too long"),
        "deep.yaml": ("campaign: x\nenv: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        "two-documents.yaml": ("campaign: x\n---\ncampaign: y\n",
                               ":2:1: expected a single document in the stream, but found another document"),
        "alias.yaml": ("campaign: *nowhere\n", ":1:11: found undefined alias 'nowhere'"),
        "unclosed-quote.yaml": ("campaign: 'x\nmachines: {}\n", ":3:1: found unexpected end of stream"),
        "json-duplicate.yaml": ('{"campaign": "a", "campaign": "b"}', ":1:19: duplicate key 'campaign'"),
    }
    for name, (text, expected) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        message = refusal(path)
        assert expected in message and len(message.splitlines()) == 1, message


def test_nested_aliases_are_refused_without_expanding_them():
    """billion-laughs.yaml expands to 9^10 strings: walked value by value, the check would
    take hours. It runs in a subprocess with a time limit, so a regression fails the test
    instead of hanging the suite."""
    code = ("import sys; from pathlib import Path\n"
            "from pinbench.workflow import campaign, config_file\n"
            "try: campaign.load_campaign(config_file.load(sys.argv[1]), Path.cwd())\n"
            "except campaign.ConfigError as exc: print(exc)")
    proc = subprocess.run([sys.executable, "-c", code, str(BAD / "billion-laughs.yaml")],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.stdout.startswith(BAD_CONFIGS["billion-laughs.yaml"]), proc.stdout + proc.stderr


def test_shared_anchors_are_read_and_a_value_holding_itself_is_refused(tmp_path):
    shared = tmp_path / "shared.yaml"
    shared.write_text("campaign: shared\nmachines: {here: {topology: \"Package:1 Core:2 PU:1\"}}\n"
                      "benchmarks:\n  a: &bench {source: benchmarks/triad.c, input: quick}\n"
                      "  b: *bench\n")
    config, _ = campaign.load_campaign(config_file.load(shared), ROOT)
    assert config["benchmarks"]["a"] == config["benchmarks"]["b"]
    assert config["benchmarks"]["b"]["input"] == "quick"
    cases = {"campaign: x\nenv: &env {A: *env}\n":
             "env.A: a YAML alias inside its own anchor (the value would hold itself)",
             "campaign: x\nthreads: [" + ", ".join(["1"] * 100_001) + "]\n":
             "threads: holds more than 100,000 values (a campaign holds a few hundred)"}
    for text, expected in cases.items():
        path = tmp_path / "bad.yaml"
        path.write_text(text)
        assert refusal(path) == expected


def test_json_and_a_byte_order_mark_are_read(tmp_path):
    config = yaml.safe_load((ROOT / "config" / "campaigns" / "study-plan.yaml").read_text())
    as_json = tmp_path / "study.json"
    as_json.write_text(json.dumps(config, indent=1))
    assert config_file.load(as_json) == config
    with_bom = tmp_path / "bom.yaml"
    with_bom.write_bytes(b"\xef\xbb\xbf" + (ROOT / "config" / "config.yaml").read_bytes())
    assert config_file.load(with_bom) == campaign.default_config(ROOT)


# --- plain snakemake ---------------------------------------------------------------------------

def snakemake(config: Path, workdir: Path, *args: str) -> subprocess.CompletedProcess:
    """Plain `snakemake --configfile CONFIG` on the repository's Snakefile."""
    return run_campaign(workdir, *args, campaign=config, plain=True, timeout=300)


def said(proc) -> list[str]:
    """What snakemake printed, but for the line saying it uses the workflow's profile."""
    return [line for line in (proc.stdout + proc.stderr).splitlines() if "profile" not in line]


@pytest.mark.slow
@pytest.mark.parametrize("name, args", [
    ("duplicate-key.yaml", ["-n"]),  # what Snakemake's reader lets through
    ("billion-laughs.yaml", ["-n"]),  # aliases of lists, which Snakemake's reader keeps shared
    ("nan-confidence.yaml", []),  # what no schema refuses; the profile's settings, every core
    ("traced-name-collision.yaml", ["--cores", "1"]),  # beyond the schema
])
def test_plain_snakemake_refuses_in_one_line_what_its_reader_lets_through(tmp_path, name, args):
    proc = snakemake(BAD / name, tmp_path, *args)
    assert proc.returncode == 1
    expected = "config error: " + BAD_CONFIGS[name].replace("{file}", str(BAD / name))
    lines = said(proc)
    assert len(lines) == 1 and lines[0].startswith(expected), proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name, problem", [
    ("missing-campaign.yaml", "ValidationError: 'campaign' is a required property"),
    ("huge-timeout.yaml", "ValidationError: 1e+300 is greater than the maximum of 604800"),
])
def test_plain_snakemake_refuses_a_schema_error_by_its_validate(tmp_path, name, problem):
    """The Snakefile checks the schema with Snakemake's validate(): its message, many lines
    (`pinbench run` says it in one)."""
    proc = snakemake(BAD / name, tmp_path, "-n")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1
    assert "Error validating config file." in out and problem in out, out
    assert "Traceback" not in out
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_plain_snakemake_says_in_its_words_what_its_reader_stops_at(tmp_path):
    """Snakemake reads --configfile before any line of the Snakefile runs."""
    proc = snakemake(BAD / "unclosed-list.yaml", tmp_path, "-n")
    assert proc.returncode == 1
    assert "Config file is not valid JSON or YAML" in proc.stdout + proc.stderr, proc.stderr
    assert not (tmp_path / "results").exists()


# --- fuzz -------------------------------------------------------------------------------------

VALID = [ROOT / "config" / "config.yaml", *sorted((ROOT / "config" / "campaigns").glob("*.yaml"))]
ODD_VALUES = [None, True, False, 0, -1, 1, 3, 2 ** 64, 10 ** 30, 1e308, -1e308, 0.5, 2.0,
              math.nan, math.inf, -math.inf, "", " ", "x\n", "a\x00b", "é", "'", '"', "{", "}",
              "{binary} '", "{nope}", "a" * 5000, "../..", "all", "auto", "os", "lpgp-64",
              "Package:2 PU:2", [], [None], [1, 1], {}, {"a": 1}, ["os", "os"]]
ODD_KEYS = ["", "x\n", "a b", "spin.traced", "pairs.traced", "OMP_PLACES", "\x00", 1, None]


def paths(node, prefix=()):
    """Every (path, value) below ``node``: dict keys and list indexes."""
    found = []
    if isinstance(node, dict):
        items = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return found
    for key, value in items:
        found.append(((*prefix, key), value))
        found += paths(value, (*prefix, key))
    return found


def mutate(config: dict, rng: random.Random) -> tuple[dict, str]:
    """One random mutation of ``config`` (a copy) and its description."""
    config = copy.deepcopy(config)
    path, value = rng.choice(paths(config))
    *parents, last = path
    node = config
    for key in parents:
        node = node[key]
    containers = [config] + [v for _, v in paths(config) if isinstance(v, dict)]
    kind = rng.choice(["delete", "replace", "replace", "retype", "rename", "insert"])
    if kind == "delete":
        del node[last]
    elif kind == "replace":
        node[last] = rng.choice(ODD_VALUES)
    elif kind == "retype":
        node[last] = rng.choice([[value], str(value), {"v": value}, 1 if value else 0])
    elif kind == "rename" and isinstance(node, dict):
        node[rng.choice(ODD_KEYS)] = node.pop(last)
    else:
        rng.choice(containers)[rng.choice(ODD_KEYS + ["repetitions", "surprise"])] = \
            rng.choice(ODD_VALUES)
    return config, f"{kind} {path}"


@pytest.mark.slow
@pytest.mark.parametrize("source", VALID, ids=lambda p: p.name)
def test_mutated_valid_configs_validate_or_raise_one_config_error(source, monkeypatch):
    original = config_file.load(source)
    validate(copy.deepcopy(original), str(campaign.SCHEMA), set_default=False)
    rng = random.Random(f"pinbench {source.name}")
    outcomes = {"valid": 0, "refused": 0}
    for _ in range(60):
        mutant, what = mutate(original, rng)
        text = yaml.safe_dump(mutant, allow_unicode=True)
        if rng.random() < 0.25:  # damage the text itself, too
            lines = text.splitlines()
            k = rng.randrange(len(lines))
            lines[k] = rng.choice(["", "\t" + lines[k], lines[k][: len(lines[k]) // 2],
                                   lines[k] + " [", lines[0]])
            text, what = "\n".join(lines) + "\n", what + f" and line {k + 1} damaged"
        try:
            parsed = config_file.parse(text, "mutant.yaml")
            campaign.load_campaign(copy.deepcopy(parsed), ROOT)
            outcomes["valid"] += 1
            validate(parsed, str(campaign.SCHEMA), set_default=False)  # plain snakemake's check
        except campaign.ConfigError as exc:
            assert len(str(exc).splitlines()) == 1, (what, str(exc))
            outcomes["refused"] += 1
        except Exception as exc:  # noqa: BLE001: the point of the test
            pytest.fail(f"{source.name}, {what}: {type(exc).__name__}: {exc}"[:2000])
    assert outcomes["refused"] > 10
