"""A one-host SLURM cluster for the tests, from Debian's packages (slurm-wlm, munge), started by
hand in a temporary folder: munged with its own key and socket, slurmctld and slurmd in the
foreground with a generated slurm.conf (this host, its CPUs, one partition ``debug``).

Jobs of Snakemake's SLURM executor run their step with a cleaned environment (every
``SLURM_*`` variable but the job's identity is dropped, ``SLURM_CONF`` with them), so the
commands inside a job find the configuration only at its default place:
``/etc/slurm/slurm.conf`` is linked to the generated one while the cluster runs, and only
when that place is free (a real cluster's configuration is never touched).
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

DEFAULT_CONF = Path("/etc/slurm/slurm.conf")
DAEMONS = ("munged", "slurmctld", "slurmd", "sinfo", "sbatch", "squeue", "scancel")


def why_not() -> str | None:
    """Why no cluster can be started here (None: it can)."""
    if os.geteuid() != 0:
        return "starting munged, slurmctld and slurmd needs root"
    missing = [name for name in DAEMONS if shutil.which(name) is None]
    if missing:
        return f"{', '.join(missing)} not installed (scripts/setup.sh installs slurm-wlm and munge)"
    if DEFAULT_CONF.exists() and not DEFAULT_CONF.is_symlink():
        return f"{DEFAULT_CONF} belongs to a real cluster; the test cluster will not replace it"
    return None


def clear_leftover() -> None:
    """Remove the link to a test cluster's configuration that a killed test session left in
    /etc/slurm (the cluster is gone): with it, every ``scontrol`` on this host waits 10 s for a
    controller that never answers, and so does every Snakemake start (its SLURM plugin asks)."""
    if not DEFAULT_CONF.is_symlink() or "pytest-of-" not in (conf := os.readlink(DEFAULT_CONF)):
        return
    for entry in os.listdir("/proc"):  # a cluster of another session, still running: kept
        try:
            if entry.isdigit() and conf.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                return
        except OSError:
            continue
    DEFAULT_CONF.unlink()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster:
    """The running cluster: its partition, node name and CPUs; :meth:`stop` ends it."""

    partition = "debug"

    def __init__(self, folder: Path):
        self.folder = folder
        self.node = socket.gethostname()
        self.cpus = os.cpu_count() or 1
        self.processes: list[subprocess.Popen] = []
        (folder / "state").mkdir(parents=True)
        (folder / "spool").mkdir()
        key = folder / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.socket = folder / "munge.sock"
        subprocess.run(["munged", "--force", f"--socket={self.socket}", f"--key-file={key}",
                        f"--log-file={folder / 'munged.log'}",
                        f"--pid-file={folder / 'munged.pid'}",
                        f"--seed-file={folder / 'munged.seed'}"], check=True)
        conf = folder / "slurm.conf"
        conf.write_text(self._conf())
        DEFAULT_CONF.parent.mkdir(parents=True, exist_ok=True)
        if DEFAULT_CONF.is_symlink():
            DEFAULT_CONF.unlink()
        DEFAULT_CONF.symlink_to(conf)
        for daemon in ("slurmctld", "slurmd"):
            log = (folder / f"{daemon}.out").open("w")
            self.processes.append(subprocess.Popen([daemon, "-D", "-f", str(conf)],
                                                   stdout=log, stderr=log))
        self._wait_idle()

    def _conf(self) -> str:
        f = self.folder
        return "\n".join([
            "ClusterName=pinbenchtest", f"SlurmctldHost={self.node}",
            "AuthType=auth/munge", f"AuthInfo=socket={self.socket}", "CredType=cred/munge",
            "SlurmUser=root", "SlurmdUser=root",
            f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
            f"StateSaveLocation={f / 'state'}", f"SlurmdSpoolDir={f / 'spool'}",
            f"SlurmctldPidFile={f / 'slurmctld.pid'}", f"SlurmdPidFile={f / 'slurmd.pid'}",
            f"SlurmctldLogFile={f / 'slurmctld.log'}", f"SlurmdLogFile={f / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/affinity",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/backfill", "ReturnToService=2", "MpiDefault=none",
            "SchedulerParameters=sched_interval=2,bf_interval=1",  # a test cluster: no idle minute
            "JobCompType=jobcomp/none", "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            f"NodeName={self.node} CPUs={self.cpus} State=UNKNOWN",
            f"PartitionName={self.partition} Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            ""])

    def _wait_idle(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            proc = subprocess.run(["sinfo", "--noheader", "--format", "%T"],
                                  capture_output=True, text=True, check=False)
            if proc.stdout.strip() == "idle":
                return
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the test cluster did not come up: see {self.folder}/*.log")

    def running_jobs(self, rule: str = "") -> list[str]:
        """The ids of the jobs running now; with ``rule``, only those of that workflow rule
        (the SLURM executor comments each job ``rule_<name>...``): a build whose job ends
        as the test looks may still be listed running on a busy machine."""
        proc = subprocess.run(["squeue", "--noheader", "--states=RUNNING", "--format=%i %k"],
                              capture_output=True, text=True, check=False)
        return [job for job, _, comment in (line.partition(" ") for line in
                                            proc.stdout.splitlines())
                if not rule or comment.startswith(f"rule_{rule}")]

    def stop(self) -> None:
        """End the daemons and give /etc/slurm/slurm.conf back."""
        subprocess.run(["scancel", "--full", "--partition", self.partition],
                       capture_output=True, check=False)
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        subprocess.run(["munged", f"--socket={self.socket}", "--stop"], capture_output=True,
                       check=False)
        if DEFAULT_CONF.is_symlink():
            DEFAULT_CONF.unlink()
