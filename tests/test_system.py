"""The system checks: other processes' load is seen, the campaign's own is not."""
import os
import subprocess
import sys
import time

from pinbench.measure.system import Snapshot, busy_processes, format_checks, system_checks

BURN = ("import ctypes, sys; ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)\n"
        "while True: pass")


def test_a_foreign_busy_process_is_seen_and_named(tmp_path):
    """A burner that is not our descendant (double fork) counts; our own child does not."""
    pidfile = tmp_path / "pid"
    launcher = ("import os, subprocess, sys\n"
                "if os.fork() == 0:\n"
                f"    p = subprocess.Popen([sys.executable, '-c', {BURN!r}, 'pbforeign'],"
                " start_new_session=True)\n"
                f"    open({str(pidfile)!r}, 'w').write(str(p.pid)); os._exit(0)\n")
    subprocess.run([sys.executable, "-c", launcher], check=True)
    own = subprocess.Popen([sys.executable, "-c", BURN, "pbownchild"])
    try:
        deadline = time.monotonic() + 10
        while not pidfile.exists() or not pidfile.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.3)
        share, busiest = busy_processes(1.0)
        names = [name for name, _ in busiest]
        assert "pbforeign" in names and "pbownchild" not in names
        assert share >= 0.25 / (os.cpu_count() or 1)  # the burner's CPU, whatever else runs
    finally:
        own.kill()
        if pidfile.exists() and pidfile.read_text():
            os.kill(int(pidfile.read_text()), 9)


def test_a_window_begun_earlier_is_not_waited_for_again():
    """From a snapshot taken before other work (the Snakefile's imports), the window is
    over: no pause; from one just taken, the rest of the window is waited for."""
    since = Snapshot.now()
    time.sleep(0.4)
    started = time.monotonic()
    share, _ = busy_processes(0.3, since)
    assert time.monotonic() - started < 0.2 and 0.0 <= share <= 1.0
    started = time.monotonic()
    busy_processes(0.3, Snapshot.now())
    assert time.monotonic() - started >= 0.29


def test_every_check_has_a_value_and_problems_have_advice():
    checks = system_checks(0.1)
    assert {c.name for c in checks} >= {"CPU frequency governor", "turbo boost",
                                        "CPU used by other processes", "load average (1, 5 min)"}
    assert all(c.value for c in checks) and all(c.advice for c in checks if not c.ok)
    text = format_checks(checks)
    assert text.count("\n") >= len(checks) and all(c.name in text for c in checks)
