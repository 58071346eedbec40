"""The command layer's conventions (pinbench/cli.py, pinbench/commands/): one line and exit
status 2 for every usage or input error, -V, -q/-v before or after any command, --json as one
document on stdout, and docs/cli.md in step with every command's --help. In process, no
campaign run (``plan --json``: tests/test_workflow.py)."""
import argparse
import json
import re

import pytest
from conftest import ROOT
from test_compare import results_folder

from pinbench import cli
from pinbench.cli import command_parser, main
from pinbench.commands import COMMANDS, conventions
from pinbench.errors import PinbenchError
from pinbench.provenance import describe

CLI_DOC = ROOT / "docs" / "cli.md"
#: Per command, arguments with an input it cannot use (``{tmp}``: a fresh empty folder).
BAD_INPUT = {
    "run": ["{tmp}/missing.yaml"],
    "plan": ["{tmp}/missing.yaml", "-n"],
    "report": ["{tmp}/missing.yaml"],
    "place": ["--topology", "{tmp}/missing.xml", "--threads", "2", "--strategy", "compact"],
    "trace": ["--threads", "0", "--out", "{tmp}/m.csv", "--", "/bin/true"],
    "topology": ["{tmp}/missing.xml"],
    "matrix": ["{tmp}/missing.csv", "{tmp}/out.csv", "--to", "numalize"],
    "system": ["--window", "-1"],
    "remeasure": ["{tmp}", "--machine", "m", "--benchmark", "b", "--threads", "1"],
    "speeduptest": ["{tmp}/x.txt", "{tmp}/y.txt"],
    "analyse": ["{tmp}/runs.csv", "{tmp}/out"],
    "compare": ["{tmp}/a", "{tmp}/b"],
    "store": ["list", "--store", "{tmp}/store.sqlite"],
    "setup": ["extra"],
}


def one_error_line(capsys, command: str) -> str:
    """The one stderr line of a failed command (nothing on stdout), without its prefix."""
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1, err
    prefix = f"pinbench {command}: error: "
    assert err.startswith(prefix), err
    return err[len(prefix):]


def test_every_command_has_a_bad_input_case():
    assert sorted(BAD_INPUT) == sorted(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_bad_option_is_one_line_and_status_2(command, capsys):
    assert main([command, "--no-such-option"]) == 2
    said = one_error_line(capsys, command)  # or the arguments it lacks, said first
    assert "--no-such-option" in said or "arguments are required" in said


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_input_is_one_line_and_status_2(command, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in BAD_INPUT[command]]
    assert main([command, *args]) == 2
    assert "Traceback" not in one_error_line(capsys, command)


def test_no_command_and_an_unknown_one_are_one_line(capsys):
    for argv, said in (([], "give a command"), (["nosuch"], "unknown command 'nosuch'")):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(f"pinbench: error: {said}") and err.count("\n") == 1


@pytest.mark.parametrize("option", ["-V", "--version"])
def test_version(option, capsys):
    with pytest.raises(SystemExit) as stop:
        main([option])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out == describe() + "\n" and re.match(r"pinbench \d+\.\d+\.\d+ \(", out)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_quiet_and_verbose_go_before_or_after_every_command(command, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["-q", "-v", command, "-v", "-q", "--help"])
    assert stop.value.code == 0 and f"usage: pinbench {command}" in capsys.readouterr().out


def test_quiet_leaves_out_what_a_command_says_beside_its_results(capsys):
    for verbosity, said in ((1, "said\n"), (0, "said\n"), (-1, "")):
        conventions.say(argparse.Namespace(verbosity=verbosity), "said")
        assert capsys.readouterr() == ("", said)


def test_verbose_adds_the_traceback_of_an_error(tmp_path, capsys):
    assert main(["-v", "topology", str(tmp_path / "missing.xml")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "Traceback (most recent call last):"
    assert err[-1].startswith("pinbench topology: error: topology file ")


def test_an_unexpected_exception_keeps_its_traceback(monkeypatch):
    """A bug is not an input error: it is not caught (Python prints it, status 1)."""
    def broken(args):
        raise KeyError("a bug")

    real = cli.command_parser

    def parser_of_a_broken_command(name):
        parser, module = real(name)
        return parser, type("Broken", (), {"run": staticmethod(broken)})

    monkeypatch.setattr(cli, "command_parser", parser_of_a_broken_command)
    with pytest.raises(KeyError):
        main(["topology", "auto"])
    assert issubclass(PinbenchError, Exception) and not issubclass(KeyError, PinbenchError)


def test_the_project_s_errors_are_one_family_keeping_their_older_bases():
    from pinbench.graph.matrix import MatrixError
    from pinbench.native import NotBuilt
    from pinbench.place.domains import PlacementError
    from pinbench.results.formats import FormatError
    from pinbench.stats.speeduptest import SampleError
    from pinbench.topology import TopologyError
    from pinbench.trace.build import TraceError
    from pinbench.workflow.campaign import ConfigError

    for error in (MatrixError, PlacementError, FormatError, SampleError, ConfigError):
        assert issubclass(error, PinbenchError) and issubclass(error, ValueError)
    for error in (NotBuilt, TraceError):
        assert issubclass(error, PinbenchError) and issubclass(error, RuntimeError)
    assert issubclass(TopologyError, PinbenchError)


def test_parsers_live_in_the_command_layer_only():
    """The library modules keep functions: no parser and no ``main`` outside pinbench/cli.py
    and pinbench/commands/ (the simulations' developer scripts excepted)."""
    package = ROOT / "pinbench"
    found = [str(path.relative_to(package)) for path in package.rglob("*.py")
             if re.search(r"ArgumentParser\(|^def main\(", path.read_text(), flags=re.M)]
    assert "cli.py" in found and "commands/measure.py" in found  # python -m pinbench.measure
    assert [path for path in found if path != "cli.py"
            and not path.startswith(("commands/", "stats/simulate"))] == []


# --- --json: one document on stdout ---------------------------------------------------------

def json_of(capsys, argv: list[str], status: int = 0):
    """The one JSON document a command printed on stdout."""
    assert main(argv) == status
    return json.loads(capsys.readouterr().out)


def test_system_json(capsys):
    status = main(["system", "--json", "--window", "0"])  # 1 when this machine is busy
    found = json.loads(capsys.readouterr().out)
    assert status == (0 if found["ok"] else 1)
    assert {"name", "value", "ok", "advice"} <= set(found["checks"][0])
    assert found["ok"] == all(check["ok"] for check in found["checks"])


def test_topology_json(capsys):
    found = json_of(capsys, ["topology", "Package:2 Core:2 PU:1", "--json"])
    assert found["summary"].startswith("Package:2") and found["pus"] == [0, 1, 2, 3]
    assert found["placeable"] == [0, 1, 2, 3] and "Core" in found["levels"]


def test_analyse_compare_and_store_json(tmp_path, capsys):
    a = results_folder(tmp_path / "a" / "c", 1.0)
    b = results_folder(tmp_path / "b" / "c", 1.3)
    analysed = json_of(capsys, ["analyse", str(a / "runs.csv"), str(tmp_path / "stats"),
                                "--json"])
    assert analysed["stats"]["format"] and len(analysed["verdicts"]) == 1
    assert {row["strategy"] for row in analysed["comparisons"]} == {"os", "compact"}
    assert analysed["files"]["verdicts"] == str(tmp_path / "stats" / "verdicts.csv")

    compared = json_of(capsys, ["compare", str(a), str(b), "--out", str(tmp_path / "cmp"),
                                "--json"], status=1)
    assert compared["gate"] == "FAIL" and compared["a"]["commit"] == "abc123"
    slower = [cell for cell in compared["cells"] if cell["strategy"] == "compact"]
    assert slower[0]["verdict"] == "slower" and compared["only_a"] == []
    assert compared["report"] == str(tmp_path / "cmp" / "index.html")

    store = str(tmp_path / "store.sqlite")
    assert main(["store", "add", str(a), "--store", store]) == 0
    capsys.readouterr()
    [stored] = json_of(capsys, ["store", "list", "--json", "--store", store])
    assert (stored["id"], stored["name"], stored["machines"]) == (1, "c", "m")


# --- docs/cli.md and --help ------------------------------------------------------------------

def sections() -> dict[str, str]:
    """docs/cli.md's second-level sections: title -> text."""
    parts = re.split(r"^## ", CLI_DOC.read_text(), flags=re.M)
    return {part.split("\n", 1)[0]: part for part in parts[1:]}


def synopsis(command: str, text: str) -> str:
    """The synopsis of ``command`` in the ``text`` code blocks of a section: from each line
    ``pinbench COMMAND`` to the next line starting with ``pinbench``."""
    blocks = "\n".join(re.findall(r"```text\n(.*?)```", text, flags=re.S))
    chunks = re.split(r"^(?=pinbench )", blocks, flags=re.M)
    return "".join(chunk for chunk in chunks if chunk.split()[1:2] == [command])


def section_of(command: str, found: dict[str, str]) -> str:
    """The section documenting ``command`` (its title names it)."""
    [title] = [title for title in found if command in re.findall(r"[a-z]+", title)]
    return found[title]


def long_options(parser) -> set[str]:
    """A parser's long options and its subcommands' (no --help, no -q/-v: every command's)."""
    options = set()
    for action in parser._actions:
        options |= {o for o in action.option_strings if o.startswith("--")}
        if isinstance(action.choices, dict):  # subcommands: their parsers
            for sub in action.choices.values():
                options |= long_options(sub)
    return options - {"--help", "--quiet", "--verbose"}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_docs_cli_md_gives_every_option_of_every_command_and_no_other(command):
    parser, _ = command_parser(command)
    text = synopsis(command, section_of(command, sections()))
    documented = set(re.findall(r"(--[a-z][a-z-]*)", text))
    assert long_options(parser) - documented == set(), "options --help gives, not docs/cli.md"
    assert documented - long_options(parser) == set(), "options docs/cli.md gives, not --help"


def test_docs_cli_md_names_every_command_and_the_common_options():
    found = sections()
    head = CLI_DOC.read_text().split("\n## ", 1)[0]
    for command in COMMANDS:
        section_of(command, found)
    for option in ("-V", "--version", "-q", "--quiet", "-v", "--verbose", "--json"):
        assert f"`{option}" in head or f" {option}" in head, option
    commands = {word for title in found for word in re.findall(r"[a-z]+", title)}
    assert commands & set(COMMANDS) == set(COMMANDS)
