"""A measurement job's settings: what the workflow hands the measuring process.

The workflow makes them from the campaign (:func:`pinbench.workflow.jobsettings.measure_spec`)
and passes them as JSON (``python -m pinbench.measure --spec``); the measuring process reads
them back (:meth:`JobSettings.from_json`) and adds the placements, read from the placement
files, to make the job (:class:`pinbench.measure.job.Job`). The JSON is the measure rule's
parameter: the same settings make the same text, so Snakemake re-runs no measurement that
did not change. This module imports nothing but the standard library.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

#: The default quiet policy: runs during which others use more than 10% of the CPUs are
#: marked; only after 60 s of such runs in a row, wait at most 10 s for less.
QUIET = {"threshold": 0.10, "max_wait_s": 10.0, "busy_s": 60.0}
#: Whose binding is verified (a benchmark's ``verify``): the process the run command starts
#: (the default), or the processes below it that run OpenMP (the command is a wrapper).
LAUNCHED, OPENMP = "launched", "openmp"
#: Settings left out of the JSON at their default, so that a campaign that does not set them
#: makes the text it made before they existed (the measure rule's params: Snakemake would
#: re-run every measurement job): field -> default.
OMITTED_AT_DEFAULT = {"cwd": None, "verify": LAUNCHED, "time_share_expected": None,
                      "sequential": None}


def located(argv: list[str] | None, binary: str) -> list[str] | None:
    """A command with the binary (``binary``: its absolute path) written ``{binary}``: the same
    wherever the project lies.

    >>> located(["/p/bin/b", "-n", "/p/bin/b.in"], "/p/bin/b")
    ['{binary}', '-n', '/p/bin/b.in']
    """
    return None if argv is None else [
        "{binary}" if os.path.abspath(arg) == binary else arg for arg in argv]


#: A metric's setting, as a job holds it: its regex (a run without the number fails), or
#: ``{"regex": ..., "required": False}`` (a run without it records no value and stays ok).
Metric = str | dict


def metric(regex: str, required: bool = True) -> Metric:
    """The setting of a metric: a required one is its regex alone, as campaigns wrote every
    metric before optional ones existed (so its journals' fingerprints stay as they were).

    >>> metric("rate: ([0-9.]+)"), metric("rate: ([0-9.]+)", required=False)
    ('rate: ([0-9.]+)', {'regex': 'rate: ([0-9.]+)', 'required': False})
    """
    return regex if required else {"regex": regex, "required": False}


def metric_regex(setting: Metric) -> tuple[str, bool]:
    """(regex, required) of a metric's setting (:func:`metric`)."""
    if isinstance(setting, str):
        return setting, True
    return setting["regex"], setting.get("required", True)


#: How a run's time is read from the program's output (a benchmark's ``time``): the regex
#: alone (the shorthand ``time_regex``: seconds, the first match on stdout, as campaigns read
#: every time before ``time`` existed), or ``{"regex", "unit", "stream", "match"}``.
TimeSetting = str | dict
#: Seconds per unit of a printed time.
UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
#: Where the time is printed, and which of its matches is the run's time.
STREAMS, MATCHES = ("stdout", "stderr", "both"), ("first", "last", "sum")
#: What ``time_regex`` means besides its regex.
SHORTHAND = {"unit": "s", "stream": "stdout", "match": "first"}


def time_setting(regex: str, unit: str = "s", stream: str = "stdout",
                 match: str = "first") -> TimeSetting:
    """The setting of a printed time: the regex alone when it is read as ``time_regex``
    reads it (so its journals' fingerprints stay as they were), else all four.

    >>> time_setting("t: (.+)"), time_setting("t: (.+)", unit="ms")
    ('t: (.+)', {'regex': 't: (.+)', 'unit': 'ms', 'stream': 'stdout', 'match': 'first'})
    """
    read = {"unit": unit, "stream": stream, "match": match}
    return regex if read == SHORTHAND else {"regex": regex} | read


def time_reading(setting: TimeSetting) -> dict:
    """``{"regex", "unit", "stream", "match"}`` of a time's setting (:func:`time_setting`)."""
    return {"regex": setting} | SHORTHAND if isinstance(setting, str) else setting


def time_key(setting: TimeSetting | None) -> str:
    """The name a job's time setting goes by in its JSON and its fingerprint: ``time_regex``
    for the shorthand (or no printed time), the name every job gave it before ``time``
    existed (the same settings make the same text: nothing is measured again), else
    ``time``."""
    return "time" if isinstance(setting, dict) else "time_regex"


def portable(folder: str | None) -> str | None:
    """A folder as the same text wherever the project lies: relative to the working directory
    (the project's results' home) when below it, else as it is.

    >>> import os; portable(os.path.join(os.getcwd(), "data")), portable("/elsewhere/data")
    ('data', '/elsewhere/data')
    """
    if folder is None:
        return None
    relative = os.path.relpath(folder)
    return folder if relative == ".." or relative.startswith("../") else relative


@dataclass(frozen=True)
class Explain:
    """The explained runs of a job (:mod:`pinbench.measure.explain`): each measured strategy
    ``repetitions`` times under the OMPT tool, and the uninstrumented baselines."""

    repetitions: int
    #: the one-thread command (T_1), or None: the campaign measures one thread itself
    t1_argv: list[str] | None
    #: the benchmark's ``sequential`` command (T_s), or None
    sequential_argv: list[str] | None
    #: what :func:`pinbench.trace.build.ompt_tool` returned, added on the measured
    #: machine before the job starts (:meth:`JobSettings.with_ompt_tool`); None until then
    tool: dict[str, str] | None = None

    def to_json(self) -> dict:
        """The JSON object (``tool`` only once there is one)."""
        data = {"repetitions": self.repetitions, "t1_argv": self.t1_argv,
                "sequential_argv": self.sequential_argv}
        return data if self.tool is None else data | {"tool": self.tool}

    @classmethod
    def from_json(cls, data: dict) -> Explain:
        return cls(**data)


@dataclass(frozen=True, kw_only=True)
class JobSettings:
    """Everything a measurement job needs but its placements; built by the workflow."""

    machine: str
    benchmark: str
    threads: int
    argv: list[str]
    env: dict[str, str]
    validate: str
    #: how the run's time is read from its output (:data:`TimeSetting`); None: wall time
    time: TimeSetting | None
    timeout_s: float
    repetitions: int
    seed: int
    order: str
    #: the campaign's strategies, in its order: one placement file each
    strategies: list[str]
    #: strategy -> the strategy whose experiment it is (identical placements, measured once)
    same_as: dict[str, str] = field(default_factory=dict)
    #: when to wait before a run: {"threshold": share of the CPUs, "max_wait_s": seconds,
    #: "busy_s": seconds of busy runs in a row before a wait}
    quiet: dict[str, float] = field(default_factory=lambda: dict(QUIET))
    #: the early-stopping rule (:mod:`pinbench.measure.stopping`): {"policy": "precision",
    #: "min": rounds, "precision": share of the median, "confidence": level}; None: every run
    stopping: dict | None = None
    #: the sequential design (:mod:`pinbench.stats.sequential`): {"baseline": strategy,
    #: "alpha": the level each comparison is decided at, "power": at the effect the design is
    #: made for, "spending": the efficacy boundaries' function, default
    #: :data:`pinbench.stats.sequential.SPENDING`}; None: the fixed design, every run
    sequential: dict | None = None
    #: the benchmark's binary, whose bytes the fingerprint holds (default: ``argv[0]``)
    binary: str | None = None
    #: the exit statuses that mean success
    exit_status: list[int] = field(default_factory=lambda: [0])
    #: more numbers from each run's output: name -> its setting (:data:`Metric`), a regex
    #: whose first group is the number
    metrics: dict[str, Metric] = field(default_factory=dict)
    #: explained runs (None: none); not part of the timing fingerprint
    explain: Explain | None = None
    #: the folder the runs start in (absolute); None: a scratch folder of the job's own
    cwd: str | None = None
    #: whose binding is verified: :data:`LAUNCHED` or :data:`OPENMP`
    verify: str = LAUNCHED
    #: the least share of a run's wall time its printed time is expected to be (the
    #: benchmark's ``time_share_expected``); None: the default
    #: (:data:`pinbench.results.printed_share.SHARE_EXPECTED`). Judges no run: not part of
    #: the fingerprint
    time_share_expected: float | None = None

    def to_json(self) -> dict:
        """The JSON object the measuring process reads (:meth:`from_json`); the settings of
        :data:`OMITTED_AT_DEFAULT` only when set, the time under :func:`time_key`."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(JobSettings)
                if OMITTED_AT_DEFAULT.get(f.name, ...) != getattr(self, f.name)
                and f.name != "time"}
        return data | {time_key(self.time): self.time,
                       "explain": None if self.explain is None else self.explain.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> JobSettings:
        """The settings of a JSON object (TypeError: a missing or unknown field)."""
        data = dict(data)
        time = data.pop("time") if "time" in data else data.pop("time_regex", None)
        explain = data.get("explain")
        return cls(**data | {"time": time,
                             "explain": Explain.from_json(explain) if explain else None})

    def with_ompt_tool(self, tool: dict[str, str] | None) -> JobSettings:
        """These settings with the OMPT tool of their explained runs; None: without explained
        runs (the tool could not be built)."""
        if self.explain is None:
            return self
        return dataclasses.replace(
            self, explain=None if tool is None else dataclasses.replace(self.explain, tool=tool))
