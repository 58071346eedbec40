"""perf/fault_injection.py at a tiny size, for real: one trial each of a stop signal, a
misbehaving program and one misbehaving as tests/misbehaviours.py draws it passes, and a
journal emptied behind pinbench's back before the resume (its runs measured again) is caught,
in the table and the exit status."""
from __future__ import annotations

import importlib.util
import os
import re
import signal
import sys

import pytest
from conftest import ROOT

from pinbench.results.journals import read_lines

SCRIPT = ROOT / "perf" / "fault_injection.py"


@pytest.fixture(scope="module")
def fi():
    spec = importlib.util.spec_from_file_location("fault_injection", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


@pytest.mark.slow
def test_the_script_passes_real_faults_and_catches_runs_measured_again(fi, monkeypatch, capsys):
    def kill_after_two_runs(trial) -> bool:
        """kill -9 of the group once the journals hold two runs."""
        if trial.campaign.finished() < 2:
            return False
        os.killpg(trial.proc.pid, signal.SIGKILL)
        return True

    monkeypatch.setitem(fi.BY_NAME, "journal emptied",
                        fi.Fault("journal emptied", kill_after_two_runs))
    call = fi.Campaign.call

    def emptying_call(campaign, name, work, *targets):
        if name == "journal-emptied-1-resume":  # the journals keep their header alone
            for threads in campaign.threads:
                path = campaign.journal(threads)
                if read_lines(path):
                    path.write_text(read_lines(path)[0] + "\n")
        return call(campaign, name, work, *targets)

    monkeypatch.setattr(fi.Campaign, "call", emptying_call)
    status = fi.main(["--trials", "1", "--faults", "SIGTERM group", "launcher killed",
                      "program drawn", "journal emptied"])
    out = capsys.readouterr().out
    assert status == 1, out
    rows = {line[:19].strip(): line[19:].split() for line in out.splitlines()
            if re.match(r"(SIGTERM group|launcher killed|program drawn|journal emptied) +1 ",
                        line)}
    assert rows["SIGTERM group"][:5] == ["1", "0", "0", "0", "0"], out
    assert all(rows[name][-1] == "pass" for name in ("SIGTERM group", "launcher killed",
                                                     "program drawn")), out
    lost, duplicated, remeasured, torn = map(int, rows["journal emptied"][1:5])
    assert (lost, duplicated, torn) == (0, 0, 0) and remeasured >= 2, out
    assert rows["journal emptied"][-3:] == ["FAIL", "(1", "trials)"], out
    assert re.search(r"journal emptied 1/1: .*resumed t\d: said nothing, the journal held \d+ "
                     "runs", out), out
    assert out.splitlines()[-1].startswith("FAIL: 4 trials of 4 faults, 1 with a violation"), out
