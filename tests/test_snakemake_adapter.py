"""Each assumption of pinbench.workflow.snakemake_adapter, pinned against the installed Snakemake.

A Snakemake upgrade that moves its lock files, stops waking its scheduler with a
``threading.Timer``, or renames a ``Workflow`` property the adapter reads fails here, saying
which; the real calls run a tiny Snakefile of their own.
"""
import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import snakemake.api  # noqa: F401 (snakemake.workflow imports only after it)
from snakemake.persistence.file import FilePersistence
from snakemake.settings.enums import PersistenceBackend
from snakemake.settings.types import WorkflowSettings
from snakemake.workflow import Workflow

from pinbench.workflow.snakemake_adapter import STATE_DIR, clear_stale_locks, use_logger
from pinbench.workflow.snakemake_logger import LogHandler

#: The ``Workflow`` properties the adapter reads.
WORKFLOW_PROPERTIES = ("scheduler", "dag", "dryrun", "is_main_process", "overwrite_configfiles",
                       "basedir")
#: The rate limit of the tiny calls: the scheduler's Timer outlives the call by 30 s.
RATE_LIMIT = "100/30s"

TINY_SNAKEFILE = '''
import atexit, json, threading
from pinbench.workflow import snakemake_adapter as adapter

if config.get("clear", 1):
    print("cleared:", adapter.clear_stale_locks(), flush=True)


def report_at_exit():
    print("at exit:", json.dumps({
        "nothing_to_do": adapter.had_nothing_to_do(workflow),
        "config_files": adapter.config_files(workflow),
        "main_directory": str(adapter.main_directory(workflow))}), flush=True)


atexit.register(report_at_exit)


rule all:
    output: "out.txt"
    shell: "sleep 0.3; touch {output}"


onsuccess:
    timers = [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
    adapter.exit_without_waiting()
    print("onsuccess:", json.dumps({"timers": len(timers),
                                    "cancelled": all(t.finished.is_set() for t in timers)}),
          flush=True)
'''


def test_the_workflow_properties_read_are_snakemakes():
    missing = [name for name in WORKFLOW_PROPERTIES
               if not isinstance(getattr(Workflow, name, None), property)]
    assert missing == [], (f"snakemake.workflow.Workflow has no property {missing}: update "
                           "pinbench/workflow/snakemake_adapter.py for this Snakemake")


def test_snakemake_keeps_its_locks_where_the_adapter_clears_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    defaults = {f.name: f.default for f in dataclasses.fields(WorkflowSettings)}
    assert defaults["persistence_backend"] is PersistenceBackend.FILE, \
        "Snakemake no longer keeps its locks in files by default: see clear_stale_locks"
    persistence = FilePersistence()  # where a Snakemake started here keeps its state
    assert persistence.path == tmp_path / STATE_DIR
    persistence._write_locks("input", ["in.txt"])
    persistence._write_locks("output", ["out.txt"])
    assert sorted(persistence._read_locks()) == [("input", "in.txt"), ("output", "out.txt")]
    assert clear_stale_locks() is True
    assert list(persistence._read_locks()) == [], "Snakemake's lock files have moved"


def test_the_locks_of_a_live_pinbench_snakemake_are_kept(tmp_path):
    state = tmp_path / STATE_DIR
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "from pinbench.workflow.snakemake_adapter import clear_stale_locks\n"
         "clear_stale_locks(sys.argv[1]); print('holding', flush=True); time.sleep(120)",
         str(state)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "holding\n"
        persistence = FilePersistence(path=state)
        persistence._write_locks("output", ["out.txt"])
        assert clear_stale_locks(state) is False
        assert list(persistence._read_locks()) == [("output", "out.txt")]
    finally:
        holder.kill()
        holder.wait()
    assert clear_stale_locks(state) is True  # its holder is gone: the lock is stale


def tiny_snakemake(flow: Path, work: Path, *args: str) -> tuple[subprocess.CompletedProcess,
                                                                 float]:
    """A real Snakemake call of the tiny Snakefile in ``work``, and its wall time."""
    command = [sys.executable, "-m", "snakemake", "-s", str(flow / "Snakefile"), "-d", str(work),
               "--configfile", str(work / "c.yaml"), "--cores", "1",
               "--max-jobs-per-timespan", RATE_LIMIT, *args]
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    return proc, time.monotonic() - started


def printed(proc, label: str) -> dict | None:
    """The JSON the tiny Snakefile printed after ``label``, or None."""
    lines = [line for line in proc.stdout.splitlines() if line.startswith(f"{label}: ")]
    return json.loads(lines[-1].split(": ", 1)[1]) if lines else None


@pytest.mark.slow
def test_real_calls_behave_as_the_adapter_assumes(tmp_path):
    flow, work = tmp_path / "flow", tmp_path / "work"
    flow.mkdir()
    work.mkdir()
    (flow / "Snakefile").write_text(TINY_SNAKEFILE)
    (work / "c.yaml").write_text("tiny: 1\n")
    FilePersistence(path=work / STATE_DIR)._write_locks("output", ["out.txt"])  # a killed call's

    refused, _ = tiny_snakemake(flow, work, "--config", "clear=0")
    assert refused.returncode != 0 and "cannot be locked" in refused.stdout + refused.stderr, \
        "Snakemake no longer refuses to start over a stale lock: " + refused.stderr[-2000:]

    first, wall = tiny_snakemake(flow, work)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "cleared: True" in first.stdout
    timers = printed(first, "onsuccess")
    assert timers["timers"] >= 1, \
        "Snakemake's scheduler no longer leaves a rate-limit threading.Timer: " + first.stdout
    assert timers["cancelled"] is True
    assert wall < 25, f"the call waited for its scheduler's {RATE_LIMIT} Timer ({wall:.1f} s)"
    assert printed(first, "at exit") == {"nothing_to_do": False,
                                         "config_files": [str(work / "c.yaml")],
                                         "main_directory": str(flow)}

    idle, _ = tiny_snakemake(flow, work)
    assert idle.returncode == 0, idle.stderr[-3000:]
    assert "cleared: False" in idle.stdout
    assert printed(idle, "onsuccess") is None, "Snakemake now runs onsuccess with nothing to do"
    assert printed(idle, "at exit")["nothing_to_do"] is True

    dry, _ = tiny_snakemake(flow, work, "-n", "--forcerun", "all")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert printed(dry, "at exit")["nothing_to_do"] is False


def test_a_slurm_job_step_clears_nothing(tmp_path, monkeypatch):
    """A Snakemake that the SLURM executor started in a job is a step of the call that holds
    the session: the locks are that call's."""
    monkeypatch.setenv("SLURM_JOB_ID", "1")
    persistence = FilePersistence(path=tmp_path / STATE_DIR)
    persistence._write_locks("output", ["out.txt"])
    assert clear_stale_locks(tmp_path / STATE_DIR) is False
    assert list(persistence._read_locks()) == [("output", "out.txt")]


def test_snakemake_offers_the_plugin_by_its_name():
    """Pins :func:`use_logger`'s assumption: a plugin registered with the
    interface's registry is one `--logger` of Snakemake's command line accepts."""
    from snakemake.cli import get_argument_parser
    from snakemake_interface_logger_plugins.registry import LoggerPluginRegistry

    assert use_logger() == ["--logger", "pinbench"]
    plugin = LoggerPluginRegistry().get_plugin("pinbench")
    assert plugin.log_handler is LogHandler
    args = get_argument_parser().parse_args(["--logger", "pinbench"])
    assert args.logger == ["pinbench"]
