"""Campaign validation: every bad config stops with one line naming the field."""
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_campaign

from pinbench.stats.decisions import DECISIONS
from pinbench.workflow import campaign, jobsettings


def base() -> dict:
    return {
        "campaign": "unit",
        "machines": {"local": {"topology": "auto"}, "study": {"topology": "nehalem"}},
        "benchmarks": {"spin": {"source": "tests/data/spin.c", "input": "10"}},
        "threads": [1],
    }


def load(config):
    return campaign.load_campaign(config, ROOT)


def test_defaults_are_filled_and_machines_resolved():
    config, machines = load(base())
    assert config["repetitions"] == 35 and config["order"] == "interleaved"
    assert config["strategies"] == ["os", "random", "compact", "scatter"]
    assert config["compiler"] == {"cc": "gcc", "cflags": "-O2 -fopenmp", "ldflags": "-lm"}
    assert config["benchmarks"]["spin"]["timeout_s"] == 300
    assert machines["local"].measure and not machines["study"].measure
    assert machines["study"].spec.startswith("Package:2")
    assert campaign.run_argv(config, "spin", "/bin/spin", 1) == ["/bin/spin", "10"]
    assert campaign.build_sources(config, "spin") == [str(ROOT / "tests" / "data" / "spin.c")]
    assert campaign.build_command(config, "spin", "/out dir/spin") == (
        f"gcc -O2 -fopenmp -o '/out dir/spin' {ROOT}/tests/data/spin.c -lm")


def test_all_threads_means_every_placeable_pu():
    config = base() | {"threads": ["all", 1]}
    _, machines = load(config)
    assert machines["study"].threads == (8, 1)


def test_a_machine_may_have_its_own_thread_counts():
    config = base()
    config["machines"]["study"]["threads"] = [4, "all"]
    _, machines = load(config)
    assert machines["study"].threads == (4, 8) and machines["local"].threads == (1,)


@pytest.mark.parametrize("spec, counts", [
    ("Package:2 Core:4 PU:2", (2, 8, 16)),  # an SMT core, a socket, all
    ("Package:1 Core:16 PU:1", (16,)),  # flat: every placement of a count is alike
    ("Package:1 L3Cache:1 L2Cache:2 Core:1 PU:1", (2,)),  # the 2-core VM's shape: flat too
])
def test_the_default_campaign_measures_where_placements_differ_and_all(spec, counts):
    config = campaign.default_config(ROOT)
    assert config["threads"] == ["levels", "all"]
    config["machines"] = {"m": {"topology": spec}}
    _, machines = load(config)
    assert machines["m"].threads == counts


def test_levels_stand_where_they_are_written_and_need_the_machine_tree():
    config = base() | {"threads": [1, "levels", 4, "all"]}
    del config["machines"]["local"]
    assert load(config)[1]["study"].threads == (1, 4, 8)  # nehalem: 4 cores to a socket
    config = base() | {"threads": ["levels"]}
    config["machines"] = {"flat": {"topology": "Package:1 Core:4 PU:1"}}
    with pytest.raises(campaign.ConfigError, match=r"^threads: no thread count for machine "
                       r"'flat': levels gives none on its tree .*: a flat machine\); add all$"):
        load(config)
    config["machines"] = {"node": {"topology": "auto", "slurm": {"partition": "p", "cpus": 4,
                                                                 "node": "n1"}}}
    with pytest.raises(campaign.ConfigError, match=r"^threads: levels needs the tree of machine "
                       r"'node', which its SLURM node reads only when the campaign runs; give "
                       r"the machine its own thread counts \(machines\.node\.threads: "):
        load(config)


def edit(path, value):
    config = base()
    *parents, last = path
    node = config
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return config


DELETE = object()


@pytest.mark.parametrize("path, value, message", [
    (("campaign",), DELETE, "(top level): 'campaign' is a required property"),
    (("campaign",), "../escape", "campaign: name '../escape' is not allowed"),
    (("repetitions",), 0, "repetitions: 0 runs per strategy are too few; the Speedup-Test "
                          "needs at least 3"),
    (("repetitions",), "many", "repetitions: 'many' is not of type 'integer'"),
    (("order",), "random", "order: 'random' is not one of"),
    (("stopping",), {"policy": "sprt"}, "stopping.policy: 'sprt' is not one of ['precision']"),
    (("stopping",), {"policy": "precision", "min": 50}, "stopping.min: 50 rounds before stopping"),
    (("stopping",), {"policy": "precision", "precision": 1.5},
     "stopping.precision: 1.5 is greater than or equal to the maximum of 1"),
    (("stopping",), {"policy": "precision", "min": 2}, "stopping.min: 2 is less than the minimum of 6"),
    (("stopping",), {"min": 5}, "stopping: 'policy' is a required property"),
    (("quiet",), {"threshold": 0}, "quiet.threshold: 0 is less than or equal to the minimum of 0"),
    (("quiet",), {"busy_s": -1}, "quiet.busy_s: -1 is less than the minimum of 0"),
    (("design",), "adaptive", "design: 'adaptive' is not one of ['fixed', 'sequential']"),
    (("power",), 0.5, "power: 0.5 is less than or equal to the minimum of 0.5"),
    (("futility",), 0.01, "Additional properties are not allowed ('futility' was unexpected)"),
    (("surprise",), 1, "Additional properties are not allowed ('surprise' was unexpected)"),
    (("threads",), [0], "threads.0: 0 is less than the minimum of 1"),
    (("threads",), [9], "threads: 9 threads exceed the "),
    (("machines", "study", "threads"), [4, 16], "machines.study.threads: 16 threads exceed the 8"),
    (("weights",), {"spin": 0}, "weights.spin: 0 is less than or equal to the minimum of 0"),
    (("weights",), {"other": 2}, "weights.other: not a benchmark of the campaign"),
    (("strategies",), ["os", "magic"], "strategies: unknown strategy 'magic'"),
    (("baseline",), "gp", "baseline: 'gp' is not one of the campaign's strategies"),
    (("benchmarks", "spin", "timeout_s"), -1, "benchmarks.spin.timeout_s: -1 is less than or equal"),
    (("benchmarks", "spin", "runn"), "x", "benchmarks.spin: Additional properties are not allowed"),
    (("benchmarks", "spin", "source"), "nowhere.c", "benchmarks.spin.source: nowhere.c does not exist"),
    (("benchmarks", "spin", "run"), "{binary} {size}", "benchmarks.spin.run: unknown placeholder {size}"),
    (("benchmarks", "spin", "run"), "/bin/true", "benchmarks.spin.run: must start the built {binary}"),
    (("benchmarks", "spin", "validate"), "([", "benchmarks.spin.validate: invalid regular expression"),
    (("benchmarks", "spin", "time_regex"), "time", "benchmarks.spin.time_regex: the regular expression needs a group"),
    (("benchmarks", "spin", "time"), {"regex": "t: \\S+", "unit": "ms"},
     "benchmarks.spin.time.regex: the regular expression needs a group"),
    (("benchmarks", "spin", "time"), {"regex": "t: (\\S+)", "unit": "min"},
     "benchmarks.spin.time.unit: 'min' is not one of ['s', 'ms', 'us', 'ns']"),
    (("benchmarks", "spin", "time"), {"regex": "t: (\\S+)", "stream": "log"},
     "benchmarks.spin.time.stream: 'log' is not one of ['stdout', 'stderr', 'both']"),
    (("benchmarks", "spin", "time"), {"regex": "t: (\\S+)", "match": "all"},
     "benchmarks.spin.time.match: 'all' is not one of ['first', 'last', 'sum']"),
    (("benchmarks", "spin", "time"), {"unit": "ms"}, "benchmarks.spin.time: 'regex' is a required"),
    (("benchmarks", "spin"), {"source": "tests/data/spin.c", "time_regex": "t: (\\S+)",
                              "time": {"regex": "t: (\\S+)", "unit": "ms"}},
     "benchmarks.spin.time: set with time_regex, its shorthand: keep one"),
    (("benchmarks", "spin", "time_share_expected"), 0.05,
     "benchmarks.spin.time_share_expected: the benchmark has no printed time (time or "
     "time_regex) to expect a share of"),
    (("benchmarks", "spin", "time_share_expected"), 1.5,
     "benchmarks.spin.time_share_expected: 1.5 is greater than the maximum of 1"),
    (("benchmarks", "spin", "env"), {"OMP_PLACES": "cores"}, "benchmarks.spin.env.OMP_PLACES: set by the launcher"),
    (("benchmarks", "../../etc"), {"source": "x.c"}, "benchmarks: name '../../etc' is not allowed"),
    (("machines", "study", "topology"), "vax", "machines.study.topology: no machine preset 'vax'"),
    (("machines", "study", "topology"), "Package:2 Bogus:1", "machines.study.topology: lstopo-no-graphics failed"),
    (("machines", "study", "measure"), True, "machines.study.measure: only a machine with topology \"auto\""),
    (("machines", "a b"), {"topology": "auto"}, "machines: name 'a b' is not allowed"),
    (("benchmarks", "spin", "build"), "make SIZE=${SIZE} -o {output}",
     "benchmarks.spin.build: unknown placeholder {SIZE} (known: "),
    (("benchmarks", "spin", "params"), {"size": ["1 M"]},
     "benchmarks.spin.params.size: the expanded benchmark's name 'spin-1 M' is not allowed"),
    (("benchmarks", "spin", "params"), {"threads": 4},
     "benchmarks.spin.params.threads: the name of a placeholder pinbench fills in"),
    (("benchmarks", "spin", "params"), {"n": []}, "benchmarks.spin.params.n: [] should be non-empty"),
    (("benchmarks", "spin", "input"), "{class}", "benchmarks.spin.input: unknown placeholder {class}"),
    (("benchmarks", "spin", "inputs"), ["tests/data/nowhere.h"],
     "benchmarks.spin.inputs: tests/data/nowhere.h does not exist"),
    (("benchmarks", "spin", "exit_status"), [256], "benchmarks.spin.exit_status.0: 256 is greater"),
    (("benchmarks", "spin", "metrics"), {"rate": "rate: \\S+"},
     "benchmarks.spin.metrics.rate: the regular expression needs a group"),
    (("benchmarks", "spin", "metrics"), {"rate": {"regex": "rate: \\S+", "required": False}},
     "benchmarks.spin.metrics.rate.regex: the regular expression needs a group"),
    (("benchmarks", "spin", "metrics"), {"rate": {"regex": "rate: (\\S+)", "required": "no"}},
     "benchmarks.spin.metrics.rate.required: 'no' is not of type 'boolean'"),
    (("benchmarks", "spin"), {"build": "make -C {tree} && cp x {output}"},
     "benchmarks.spin.build: unknown placeholder {tree}"),
])
def test_bad_config_is_refused_with_the_field_named(path, value, message):
    with pytest.raises(campaign.ConfigError) as info:
        load(edit(path, value))
    text = str(info.value)
    assert message in text and "\n" not in text


def test_graph_strategies_need_tracing():
    config = base() | {"strategies": ["os", "lpgp-2"], "tracing": {"when": "never"}}
    with pytest.raises(campaign.ConfigError, match="tracing.when: \"never\", but strategy 'lpgp-2'"):
        load(config)
    config = base() | {"strategies": ["os", "lpgp", "hierarchical"]}
    loaded, _ = load(config)
    assert campaign.traces(loaded) and not campaign.traces(load(base())[0])


def test_pinbench_run_stops_with_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("campaign: x\nmachines: {local: {topology: auto}}\n"
                   "benchmarks: {spin: {source: tests/data/spin.c, timeout_s: -1}}\n")
    proc = subprocess.run([sys.executable, "-m", "pinbench", "run", str(bad), "-n"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert (proc.stdout + proc.stderr).splitlines() == [
        "pinbench run: error: benchmarks.spin.timeout_s: -1 is less than or equal to the "
        "minimum of 0"]


def test_the_default_campaign_and_the_examples_are_valid():
    config, machines = load(campaign.default_config(ROOT))
    assert config["benchmarks"] and any(m.measure for m in machines.values())
    for path in (ROOT / "config" / "campaigns").glob("*.yaml"):
        load(yaml.safe_load(path.read_text()))


def test_the_schema_name_pattern_is_the_one_the_errors_describe():
    schema = yaml.safe_load((ROOT / "pinbench" / "workflow" / "schemas" / "campaign.schema.yaml").read_text())
    assert schema["$defs"]["name"]["pattern"] == campaign.NAME_PATTERN


def test_the_report_decision_is_one_the_analysis_makes():
    schema = yaml.safe_load((ROOT / "pinbench" / "workflow" / "schemas" / "campaign.schema.yaml").read_text())
    assert schema["properties"]["report_decision"]["enum"] == list(DECISIONS)
    assert load(base())[0]["report_decision"] == "fwer"
    with pytest.raises(campaign.ConfigError, match="report_decision: 'bonferroni' is not one of"):
        load(base() | {"report_decision": "bonferroni"})


def test_a_literal_brace_is_written_twice_as_the_error_says():
    config = edit(("benchmarks", "spin", "build"), "{cc} -o {output} {source} -DSIZE=${SIZE}")
    with pytest.raises(campaign.ConfigError, match=r"for a literal brace write it twice, "
                                                   r"e\.g\. \$\{\{SIZE\}\}"):
        load(config)
    config = edit(("benchmarks", "spin", "build"), "{cc} -o {output} {source} -DSIZE=${{SIZE}}")
    loaded, _ = load(config)
    assert campaign.build_command(loaded, "spin", "/o").endswith("-DSIZE=${SIZE}")


def test_params_expand_a_benchmark_into_one_per_value_usable_in_every_command():
    config = base() | {"weights": {"spin": 2}}
    config["benchmarks"]["spin"] |= {
        "params": {"class": ["S", "W"], "n": 4, "mode": ["a", "b"]},
        "build": "{cc} -DCLASS={class} -o {output} {source}",
        "input": "{n} {class}", "run": "{binary} -t {threads} {input} {mode}"}
    loaded, _ = load(config)
    assert list(loaded["benchmarks"]) == ["spin-S-a", "spin-S-b", "spin-W-a", "spin-W-b"]
    assert loaded["weights"] == dict.fromkeys(loaded["benchmarks"], 2)
    assert campaign.run_argv(loaded, "spin-W-b", "/b/spin", 8) == ["/b/spin", "-t", "8", "4", "W",
                                                                  "b"]
    assert "-DCLASS=W -o /out" in campaign.build_command(loaded, "spin-W-a", "/out")
    assert loaded["benchmarks"]["spin-S-a"]["description"].endswith("(class=S, mode=a)")


def test_commands_get_absolute_paths_and_the_thread_count():
    config = base()
    config["benchmarks"]["spin"]["run"] = "{binary} -t {threads} {input}"
    loaded, _ = load(config)
    assert campaign.run_argv(loaded, "spin", "bin/spin", 3) == [
        str(Path("bin/spin").resolve()), "-t", "3", "10"]
    assert f" -o {Path('out/spin').resolve()} " in campaign.build_command(loaded, "spin", "out/spin")


def test_source_is_needed_only_by_the_commands_that_run():
    config = base()
    config["benchmarks"]["spin"] = {"build": "cp /bin/true {output}", "run": "{binary}"}
    loaded, _ = load(config)  # nothing traced: trace_build's {source} does not matter
    assert campaign.build_sources(loaded, "spin") == []
    config = base() | {"strategies": ["os", "gp"]}
    config["benchmarks"]["spin"] = {"build": "cp /bin/true {output}", "run": "{binary}"}
    with pytest.raises(campaign.ConfigError, match="benchmarks.spin.source: required by the "
                                                   "trace_build command"):
        load(config)


def test_declared_inputs_and_tree_are_what_the_build_reads_and_writes():
    config = base()
    config["benchmarks"]["spin"] |= {"inputs": ["tests/data/*.c", "tests/data/none/*.h"],
                                     "tree": "tests/data",
                                     "build": "cd {tree} && cc -o {output} spin.c",
                                     "trace_build": "cd {tree} && cc {trace_cflags} -o {output}"}
    loaded, _ = load(config)
    files = campaign.build_sources(loaded, "spin")
    assert str(ROOT / "tests/data/spin.c") in files and all(f.endswith(".c") for f in files)
    spin = str(ROOT / "tests/data/spin.c")
    assert spin not in campaign.build_sources(loaded, "spin", frozenset([spin]))
    assert campaign.build_tree(loaded, "spin") == str(ROOT / "tests/data")
    assert campaign.build_command(loaded, "spin", "/o").startswith(f"cd {ROOT}/tests/data && ")
    assert campaign.build_command(loaded, "spin", "/b/x.traced", ("-T", "-L")).startswith(
        "cd /b/x.traced.tree && ")


def test_the_design_is_fixed_by_default_and_sequential_decides_at_alpha_over_the_report():
    """4 strategies, 1 benchmark, 1 thread count on the one measured machine (the study's is
    only planned): 3 tests in the report, each comparison decided at 0.05 / 3."""
    config, machines = load(base())
    assert config["design"] == "fixed" and jobsettings.sequential_design(config, 3) is None
    config, machines = load(base() | {"design": "sequential"})
    tests = campaign.report_tests(config, machines)
    assert tests == 3
    settings = jobsettings.job_settings(config, "local", "spin", 1, "bin/spin", (1,),
                                        report_tests=tests)
    assert settings.sequential == {"baseline": "os", "power": 0.85,
                                   "alpha": pytest.approx(0.05 / 3)}
    assert "sequential" not in jobsettings.job_settings(config | {"design": "fixed"}, "local",
                                                        "spin", 1, "bin/spin").to_json()
    with pytest.raises(campaign.ConfigError, match="stopping: the sequential design stops each "
                                                   "cell on its verdict"):
        load(base() | {"design": "sequential", "stopping": {"policy": "precision"}})


def test_too_few_repetitions_to_find_any_winner_are_said_before_measuring():
    """3 runs: 1/10 is the smallest two-sided p-value; 4 strategies make 3 tests per cell
    (0.05/3), so nothing can be significant: the warning names both levels and the runs
    with which both can. Enough runs for a cell but not for the report's 2 benchmarks: the
    report's level alone, and the runs it needs. A machine only planned has nothing
    measured: nothing to say."""
    config, machines = load(base() | {"repetitions": 3})
    warning = campaign.repetitions_warning(config, machines)
    assert warning.startswith("repetitions: with 3 runs against 3 the smallest p-value is 0.1: "
                              "no strategy can be found faster or slower than the baseline in a "
                              "cell (3 tests, Holm at 0.05: at most 0.05/3) nor over the whole "
                              "report (3 tests")
    assert warning.endswith("6 runs per strategy can in a cell and over the whole report")
    two = base() | {"repetitions": 4, "strategies": ["os", "compact"],
                    "benchmarks": {b: {"source": "tests/data/spin.c"} for b in ("x", "y")}}
    config, machines = load(two)
    warning = campaign.repetitions_warning(config, machines)  # 0.05 >= 2/70 > 0.05 / 2
    assert "baseline over the whole report (2 tests" in warning
    config, machines = load(two | {"strategies": ["os", "compact", "scatter", "random"],
                                   "repetitions": 5})
    assert campaign.repetitions_warning(config, machines) == ""  # 2/252 <= 0.05 / 6
    config, machines = load(two | {"report_decision": "fdr", "repetitions": 4})
    assert campaign.repetitions_warning(config, machines) == ""  # 2/70 <= 0.05: BH can
    config, machines = load(base() | {"repetitions": 35, "stopping": {"policy": "precision",
                                                                      "min": 6}})
    assert campaign.repetitions_warning(config, machines) == ""  # 2/924 <= 0.05 / 3
    planned = base() | {"repetitions": 3, "machines": {"study": {"topology": "nehalem"}}}
    assert campaign.repetitions_warning(*load(planned)) == ""


#: What a terminal obeys (ESC sequences setting the title and clearing the screen, CSI as
#: one C1 byte, CR, BEL, DEL) and what no encoding writes (a lone surrogate).
UNPRINTABLE_VALUES = [
    (("benchmarks", "spin", "description"), "\ud800",
     "benchmarks.spin.description: '\\ud800' holds a lone surrogate ('\\ud800'), which is no "
     "character and cannot be written as UTF-8"),
    (("benchmarks", "spin", "input"), "\x1b]0;PWNED\x07\x1b[2J 10",
     "benchmarks.spin.input: '\\x1b]0;PWNED\\x07\\x1b[2J 10' holds the control character "
     "'\\x1b', which a terminal would obey when the value is printed (of the control "
     "characters only tab and newline are allowed)"),
    (("benchmarks", "spin", "run"), "{binary} {input}\r", "benchmarks.spin.run: '{binary} "
     "{input}\\r' holds the control character '\\r'"),
    (("benchmarks", "spin", "params"), {"size": ["1\x9b2J"]},
     "benchmarks.spin.params.size.0: '1\\x9b2J' holds the control character '\\x9b'"),
    (("benchmarks", "spin", "env"), {"GREETING": "bell\x07"},
     "benchmarks.spin.env.GREETING: 'bell\\x07' holds the control character '\\x07'"),
    (("env",), {"A\x7f": "1"}, "env: key 'A\\x7f' holds the control character '\\x7f'"),
    (("compiler",), {"cflags": "-O2 \udcff"}, "compiler.cflags: '-O2 \\udcff' holds a lone surrogate"),
    (("machines", "study", "topology"), "Package:2\x1b[H PU:1",
     "machines.study.topology: 'Package:2\\x1b[H PU:1' holds the control character '\\x1b'"),
]


@pytest.mark.parametrize("path, value, message", UNPRINTABLE_VALUES)
def test_control_characters_and_lone_surrogates_are_refused_at_validation(path, value,
                                                                           message):
    with pytest.raises(campaign.ConfigError) as info:
        load(edit(path, value))
    assert str(info.value).startswith(message)
    assert str(info.value).isprintable() and str(info.value).isascii()


def test_tabs_and_newlines_stay_allowed():
    """A multi-line build command, a tab in a regex."""
    config = base()
    config["benchmarks"]["spin"] |= {
        "build": "gcc -O2 -fopenmp -o {output} \\\n  {source} -lm\n", "validate": "^ok\tdone$",
        "description": "two\nlines"}
    config, _ = load(config)
    assert config["benchmarks"]["spin"]["validate"] == "^ok\tdone$"


def test_a_file_the_build_reads_needs_a_printable_name(tmp_path):
    """Snakemake's job lines name the files a build reads (``inputs``, the headers beside a
    ``source``): one with an escape sequence in its name is refused."""
    (tmp_path / "spin.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "\x1b[2J.h").write_text("\n")
    config = base()
    config["benchmarks"]["spin"]["source"] = str(tmp_path / "spin.c")
    with pytest.raises(campaign.ConfigError) as info:
        load(config)
    assert str(info.value) == (
        f"benchmarks.spin.source: the build reads '{tmp_path}/\\x1b[2J.h', a file name with a "
        "control character or bytes that are not UTF-8; rename it")
    config["benchmarks"]["spin"]["inputs"] = [str(tmp_path / "*.c")]
    assert campaign.build_sources(load(config)[0], "spin") == [str(tmp_path / "spin.c")]


@pytest.mark.parametrize("plain", [False, pytest.param(True, marks=pytest.mark.slow)],
                         ids=["pinbench run", "plain snakemake"])
def test_no_escape_sequence_of_a_campaign_reaches_the_terminal(tmp_path, plain):
    """The run command Snakemake's job line prints (``input``), a benchmark's name the
    schema refuses (Snakemake's validate() quotes it): one line, its escapes written out."""
    (tmp_path / "campaign.yaml").write_text(
        'campaign: esc\nmachines: {local: {topology: auto}}\nthreads: [1]\n'
        'benchmarks: {spin: {source: tests/data/spin.c, input: "\\e]0;PWNED\\a\\e[2J 10"},\n'
        '             "\\e[31mred": {source: tests/data/spin.c}}\n')
    proc = run_campaign(tmp_path, "-n", plain=plain, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "\x1b" not in output and "\x07" not in output
    assert "error: benchmarks" in output and "holds the control character '\\x1b'" \
        in output
