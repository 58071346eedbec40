"""Scalability models: run time against threads per (machine, benchmark, strategy), by Extra-P.

The models are Extra-P's (Calotoiu et al., "Using automated performance modeling to find
scalability bugs in complex codes", SC 2013; used for OpenMP by Iwainsky et al., "How many
threads will be too many? On the scalability of OpenMP implementations", Euro-Par 2015):
a function of the performance model normal form (PMNF) ``c0 + c1 * p^i * log2(p)^j`` chosen
among many exponents (i, j) by its fit. This module fits nothing itself: it writes the runs
in Extra-P's JSON Lines input, runs Extra-P's command line (its own environment,
``.venv-extrap``, which scripts/setup.sh makes) and reads back what it prints.

Per (machine, benchmark, strategy) with at least :data:`MIN_COUNTS` thread counts, and for
each statistic of the runs at a thread count (median, mean), two quantities are modelled:

- ``time``: the run time T(p) itself;
- ``cost``: p * T(p), the processor time the run holds (P·T_P = W_P + I_P in the work
  inflation identity of Acar, Charguéraud and Rainey). One PMNF term cannot fall and then
  rise, but strong scaling with an overhead growing in p, T = W/p + o·p^k, is one term in
  the cost (W + o·p^(k+1)): its model, divided by p, can have a best thread count inside
  the measured range.

With cross-validation on, the SMAPE Extra-P prints (its symmetric mean absolute percentage
error) is the leave-one-out one: each measured point predicted by the model fitted to the
others (extrap 4.2.5, ``find_best_hypothesis``; a constant model's is its plain SMAPE). Both
models' SMAPE compare the same relative errors of T(p). **A model is reliable** only when its
SMAPE is at most :data:`MAX_SMAPE`; of the reliable two the one with the lower SMAPE is
``selected``, and when neither is, the cell has no reliable model and its row says why. The
gate's rates (planted laws accepted, shapes no PMNF term has refused):
``python -m pinbench.stats.simulate_explain``, docs/models.md.

From the selected model's T(p), over the integer thread counts of the measured range (the
smallest to the largest measured count), come the best thread count (argmin T) and the
turning point: the first p from which T never falls again in the range (T(q + 1) >= T(q) for
every q >= p), so that beyond it every added thread costs at least what it gives; none when T
still falls at the largest count. Both are defined for any model, monotone or not (a model
that rises and then falls has its best where it is lowest, and no turning point). Over the
counts up to the horizon (the largest count measured or planned on any machine of the
campaign), the same two are ``extrapolated``, and say so.

Where the campaign explained runs (OMPT, :mod:`pinbench.stats.explain`), the medians of its table
``explain.csv`` are modelled the same way, one point per thread count, per (machine,
benchmark, strategy) with at least :data:`MIN_COUNTS` thread counts there: the idle time
I_P (``idle_median``), the work inflation F_P (``inflation_median``), the lock waits L_P
(``lock_waits_median``), the barrier and taskwait waits (``barrier_waits_median``,
``taskwait_waits_median``); see :data:`EXPLAINED`. They are not run times: their rows
leave ``time_model``, ``selected``, the best and turning thread counts empty. Extra-P
models zero and negative values (checked with extrap 4.2.5: exact fits of planted laws
through zero and below it), but its SMAPE is relative to the values, so it overstates the
error of a quantity near or across zero (a perfect fit of -0.3 + 0.1·p scored 28.6 %):
such a row says so in ``note``. A quantity zero at every thread count (no locks, no
tasks) gets no model, and its row says why.

Extra-P models every callpath of one input at the same parameter values, so each call holds
the cells of one machine measured at the same thread counts (a cell that lost a count is
modelled in a call of its own). A machine with fewer than :data:`MIN_COUNTS` thread counts
gets no model, and :func:`unmodelled` says so in one line per machine.

Extra-P's ``{model:python}`` text is evaluated by :class:`Formula`, a walk of its syntax
tree that allows numbers, the parameter ``p``, ``+ - * / **`` and ``log2``: nothing else.
"""
from __future__ import annotations

import ast
import csv
import json
import math
import os
import statistics
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from pinbench.errors import PinbenchError
from pinbench.results.rows import columns, read_records
from pinbench.results.runs import RunRecord
from pinbench.stats.cells import describe_cells
from pinbench.stats.explain import Explanation, read_explain

#: The version of ``models.csv``: the workflow passes it to the models rule as a parameter,
#: so a table made by an older pinbench is made again.
FORMAT = 2
#: Extra-P's single-parameter modelers need five distinct values of the parameter.
MIN_COUNTS = 5
#: The largest cross-validated SMAPE (%) of a reliable model.
MAX_SMAPE = 10.0
#: The statistics of a thread count's runs whose curve over threads Extra-P models.
STATISTICS = ("median", "mean")
#: The modelled quantities: T(p), and p * T(p) (see the module's text).
KINDS = ("time", "cost")
#: Where the set-up installs Extra-P's command line, relative to the workflow's directory;
#: the environment variable ``PINBENCH_EXTRAP`` names another.
EXTRAP = ".venv-extrap/bin/extrap"
#: Extra-P's basic single-parameter modeler, with cross-validation, negative exponents
#: (strong scaling) and log terms: its default exponents, and negative ones added so that
#: log terms stay allowed when p = 1 is measured (``allow_negative_exponents`` drops them).
MODELER = ["--modeler", "basic", "--options", "use_crossvalidation=True",
           "poly_exponents=-3,-2,-1.5,-1.25,-1,-0.75,-0.5,-0.25", "log_exponents=0,1,2",
           "retain_default_exponents=True"]
#: What Extra-P prints per callpath and metric (extrap/fileio/output.py placeholders).
#: The explained quantities modelled (quantity name -> explain.csv column; see the text).
EXPLAINED = {"idle": "I_P", "inflation": "F_P", "lock_waits": "L_P",
             "barrier_waits": "barrier_wait", "taskwait_waits": "taskwait_wait"}
PRINT = "{callpath};{metric};{model};{model:python};{smape};{ar2};{rss};{re}"


@dataclass(frozen=True)
class ModelRow:
    """A row of ``models.csv``: one quantity's model of a (machine, benchmark, strategy), or
    why it has none (``note``). Empty fields read as None (an explained quantity's row has no
    time model, best or turning point; ``reliable`` None: SMAPE cannot say)."""

    machine: str
    benchmark: str
    strategy: str
    quantity: str  #: ``time_median``, ``cost_mean``..., or an explained one (``idle_median``)
    model: str  #: Extra-P's model ("" without one)
    time_model: str  #: the model of T(p) it gives
    smape: float | None
    ar2: float | None
    rss: float | None
    re: float | None
    crossvalidation: bool | None
    reliable: bool | None
    selected: bool | None  #: the cell's model of T(p), of the reliable ones the better
    thread_counts: str  #: the thread counts modelled, space-separated
    pus: int | None
    oversubscribed: str
    horizon: int | None
    best_threads: int | None
    best_time_s: float | None
    turning_threads: int | None
    extrapolated: str
    note: str


#: The columns of ``models.csv``: its rows' fields.
COLUMNS = columns(ModelRow)


class ModelError(PinbenchError, ValueError):
    """Extra-P is missing or failed, or a model is not a formula of the allowed form."""


def extrap_path(root: Path) -> Path:
    """Extra-P's command line: ``$PINBENCH_EXTRAP``, else ``<root>/.venv-extrap/bin/extrap``."""
    return Path(os.environ.get("PINBENCH_EXTRAP") or Path(root) / EXTRAP)


# --- the safe evaluator of Extra-P's {model:python} --------------------------------------------
_BINARY = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
           ast.Pow: lambda a, b: a ** b}
_UNARY = {ast.USub: lambda a: -a, ast.UAdd: lambda a: a}


class Formula:
    """A model as Extra-P writes it in Python (``2.9+7.3*p**(-3/2)*log2(p)**(1)``), checked
    once and evaluated by walking its syntax tree: numbers, the parameter, ``+ - * / **``
    and ``log2`` of one argument; anything else (names, calls, attributes, subscripts...)
    raises :class:`ModelError`. No ``eval``.

    >>> Formula("3+0.5*p**(1)*log2(p)**(1)")(4)
    7.0
    >>> Formula("__import__('os')")
    Traceback (most recent call last):
    ...
    pinbench.stats.models.ModelError: not allowed in a model: Call of __import__
    """

    def __init__(self, text: str, parameter: str = "p"):
        self.text, self.parameter = text, parameter
        try:
            tree = ast.parse(text, mode="eval")
        except (SyntaxError, ValueError) as exc:
            raise ModelError(f"not a formula: {text!r} ({exc})") from None
        self._check(tree.body)
        self._tree = tree.body

    def _check(self, node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return
        if isinstance(node, ast.Name) and node.id == self.parameter:
            return
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            self._check(node.left)
            self._check(node.right)
            return
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            self._check(node.operand)
            return
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "log2" and len(node.args) == 1 and not node.keywords):
            self._check(node.args[0])
            return
        what = type(node).__name__
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            what += f" of {node.func.id}"
        elif isinstance(node, ast.Name):
            what += f" {node.id}"
        raise ModelError(f"not allowed in a model: {what}")

    def __call__(self, value: float) -> float:
        def walk(node: ast.AST) -> float:
            if isinstance(node, ast.Constant):
                return float(node.value)
            if isinstance(node, ast.Name):
                return float(value)
            if isinstance(node, ast.BinOp):
                return _BINARY[type(node.op)](walk(node.left), walk(node.right))
            if isinstance(node, ast.UnaryOp):
                return _UNARY[type(node.op)](walk(node.operand))
            return math.log2(walk(node.args[0]))  # the only call _check lets through
        try:
            result = walk(self._tree)
        except (ArithmeticError, ValueError) as exc:
            raise ModelError(f"{self.text} at {self.parameter} = {value}: {exc}") from None
        if isinstance(result, complex) or not math.isfinite(result):
            raise ModelError(f"{self.text} at {self.parameter} = {value} is {result}")
        return result


# --- what Extra-P prints ----------------------------------------------------------------------
@dataclass
class Fit:
    """One model Extra-P printed: its formula in both forms and its quality."""

    model: str  #: as Extra-P prints it, e.g. ``2.97 + 7.29 * p^(-3/2)``
    python: str  #: the same in Python syntax ({model:python})
    smape: float
    ar2: float
    rss: float
    re: float


def run_extrap(extrap: Path, jsonl: Path, timeout_s: float = 600) -> dict[tuple[str, str], Fit]:
    """(callpath, metric) -> Extra-P's model of the points in ``jsonl`` (its JSON Lines input).
    ModelError when Extra-P is missing or fails: the message is one line."""
    if not Path(extrap).is_file():
        raise ModelError(f"Extra-P is not installed ({extrap} is missing; scripts/setup.sh "
                         "makes it)")
    command = [str(extrap), "--json", str(jsonl), *MODELER, "--disable-progress",
               "--print", PRINT]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelError(f"Extra-P ({extrap}) did not run: {exc}") from None
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        raise ModelError(f"Extra-P ({extrap}) failed with exit status {proc.returncode}: "
                         f"{lines[-1].strip() if lines else 'no message'}")
    fits = {}
    for line in proc.stdout.splitlines():
        parts = line.split(";")
        if len(parts) != 8:
            continue
        callpath, metric, model, python, *quality = parts
        try:
            fits[(callpath, metric)] = Fit(model.strip(), python.strip(),
                                           *(float(v) for v in quality))
        except ValueError:
            continue
    return fits


# --- from runs to models ----------------------------------------------------------------------
def series(records: list[RunRecord]) -> dict[tuple[str, str, str], dict[int, list[float]]]:
    """(machine, benchmark, strategy) -> threads -> the times that count
    (:func:`pinbench.stats.cells.describe_cells`, identical placements included)."""
    found: dict[tuple[str, str, str], dict[int, list[float]]] = defaultdict(dict)
    for (machine, bench, threads, strategy), cell in describe_cells(records).items():
        if cell.times:
            found[(machine, bench, strategy)][threads] = list(cell.times)
    return found


def extrap_lines(cells: dict[str, dict[int, list[float]]]) -> list[str]:
    """Extra-P's JSON Lines input: per callpath ``<name>`` and thread count, one point of each
    quantity (metric ``time_median``, ``cost_median``, ``time_mean``, ``cost_mean``); the
    parameter is ``p``, the threads.

    The statistic is taken here, not by Extra-P's ``--measure``: extrap 4.2.5 models the
    mean of a point's repetitions whatever ``--measure`` says (checked with runs whose
    median and mean differ), so each point is handed over as the one value to model.
    """
    lines = []
    for name, by_threads in cells.items():
        for threads, times in sorted(by_threads.items()):
            for statistic in STATISTICS:
                value = getattr(statistics, statistic)(times)
                for kind, point in (("time", value), ("cost", threads * value)):
                    lines.append(json.dumps({"params": {"p": threads}, "callpath": name,
                                             "metric": f"{kind}_{statistic}", "value": point}))
    return lines


def time_curve(fit: Fit, kind: str, horizon: int) -> list[float]:
    """T(1..horizon) by a model: the time model itself, or the cost model over p."""
    formula = Formula(fit.python)
    return [formula(p) / (p if kind == "cost" else 1) for p in range(1, horizon + 1)]


def time_curve_text(model: str, quantity: str, horizon: int) -> list[float]:
    """T(1..horizon) of a ``models.csv`` row: its ``model`` as Extra-P printed it and its
    ``quantity`` (``time_*`` or ``cost_*``), read back by :func:`python_form`."""
    kind = quantity.split("_")[0]
    return time_curve(Fit(model, python_form(model), 0, 0, 0, 0), kind, horizon)


def python_form(model: str) -> str:
    """Extra-P's printed model in Python syntax: ``^`` is ``**``.

    >>> python_form("2.9 + -7.3 * p^(-3/2) * log2(p)^(1)")
    '2.9 + -7.3 * p**(-3/2) * log2(p)**(1)'
    """
    return model.replace("^", "**")


def turning_points(curve: list[float], first: int = 1) -> tuple[int, int | None]:
    """(the best thread count, the turning point or None) of T(first), T(first + 1), ...:
    the argmin, and the first p from which T never falls again (None: T falls at the last
    step).

    >>> turning_points([5.0, 3.0, 2.5, 2.6, 2.7]), turning_points([5.0, 3.0, 2.5, 2.6, 2.0])
    ((3, 3), (5, None))
    >>> turning_points([1.0, 2.0, 1.5, 1.2, 1.1], first=2)  # rises, then falls
    (2, None)
    """
    best = first + min(range(len(curve)), key=curve.__getitem__)
    if len(curve) > 1 and curve[-1] < curve[-2]:
        return best, None
    p = len(curve) - 1
    while p > 0 and curve[p] >= curve[p - 1]:
        p -= 1
    return best, first + p


def explained_series(table: list[Explanation]
                     ) -> dict[tuple[str, str, str], dict[str, dict[int, float]]]:
    """(machine, benchmark, strategy) -> quantity (:data:`EXPLAINED`) -> threads -> the
    median over the explained runs, from :func:`pinbench.stats.explain.read_explain`'s rows (thread
    counts where the quantity is unknown, or whose explained runs do not reproduce the timing
    runs, are left out: :func:`not_reproduced`)."""
    found: dict[tuple[str, str, str], dict[str, dict[int, float]]] = defaultdict(
        lambda: {name: {} for name in EXPLAINED})
    for row in table:
        by_quantity = found[(row.machine, row.benchmark, row.strategy)]
        if row.reproduces is False:
            continue
        for name, column in EXPLAINED.items():
            value = getattr(row, column)
            if value is not None and math.isfinite(value):
                by_quantity[name][int(row.threads)] = value
    return dict(found)


def not_reproduced(table: list[Explanation]) -> dict[tuple[str, str, str], list[int]]:
    """(machine, benchmark, strategy) -> the thread counts whose explained runs do not
    reproduce the timing runs (:func:`pinbench.stats.explain.reproduction`)."""
    found: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for row in table:
        if row.reproduces is False:
            found[(row.machine, row.benchmark, row.strategy)].append(int(row.threads))
    return {key: sorted(counts) for key, counts in found.items()}


def explained_lines(cells: dict[str, dict[str, dict[int, float]]]) -> list[str]:
    """Extra-P's JSON Lines input of explained quantities: per callpath and quantity, one
    point per thread count (metric ``<quantity>_median``)."""
    return [json.dumps({"params": {"p": threads}, "callpath": name,
                        "metric": f"{quantity}_median", "value": value})
            for name, by_quantity in cells.items()
            for quantity, points in by_quantity.items()
            for threads, value in sorted(points.items())]


def modellable(thread_counts: dict[str, list[int]]) -> bool:
    """Whether a machine of ``thread_counts`` (machine -> its counts) has enough of them for
    models.

    >>> modellable({"local": [1, 2]}), modellable({"big": [1, 2, 4, 8, 16]})
    (False, True)
    """
    return any(len(set(counts)) >= MIN_COUNTS for counts in thread_counts.values())


def counted(n: int, what: str = "thread count") -> str:
    """``n`` and ``what``, plural unless one.

    >>> counted(1), counted(2, "explained thread count")
    ('1 thread count', '2 explained thread counts')
    """
    return f"{n} {what}{'' if n == 1 else 's'}"


def unmodelled(thread_counts: dict[str, list[int]]) -> str:
    """Why machines get no model, one line each ("" when every machine has enough counts).

    >>> unmodelled({"local": [1, 2]})
    'no scalability models on local: 2 thread counts (1 2); Extra-P needs at least 5'
    """
    return "\n".join(f"no scalability models on {machine}: {counted(len(set(counts)))} "
                     f"({' '.join(map(str, sorted(set(counts))))}); Extra-P needs at least "
                     f"{MIN_COUNTS}" for machine, counts in sorted(thread_counts.items())
                     if len(set(counts)) < MIN_COUNTS)


def model_rows(records: list[RunRecord], extrap: Path, horizon: int,
               pus: dict[str, int], explained: list[Explanation] | None = None) -> list[dict]:
    """The rows of ``models.csv`` (:data:`COLUMNS`): per machine, benchmark, strategy and
    quantity (``time_median``, ``cost_median``, ``time_mean``, ``cost_mean``), Extra-P's model
    and what it predicts. ``horizon``: the largest thread count to predict for; ``pus``:
    each machine's placeable PUs (counts above them are oversubscribed). Cells with fewer
    than :data:`MIN_COUNTS` thread counts get one row without a model, saying why.
    ``explained``: the rows of ``explain.csv`` (:func:`pinbench.stats.explain.read_explain`), whose
    quantities (:data:`EXPLAINED`) are modelled too, in the same Extra-P calls.
    ModelError when Extra-P is missing or fails."""
    # (machine, thread counts) -> callpath -> (kind, base row(s), points): one Extra-P call each
    batches: dict[tuple[str, tuple[int, ...]], dict[str, tuple]] = defaultdict(dict)
    rows = []

    def base_of(machine, bench, strategy, counts):
        return {"machine": machine, "benchmark": bench, "strategy": strategy,
                "thread_counts": " ".join(map(str, counts)), "pus": pus.get(machine, ""),
                "oversubscribed": " ".join(str(t) for t in counts
                                           if machine in pus and t > pus[machine])}

    def batch(machine, counts, entry):
        found = batches[(machine, tuple(counts))]
        found[f"c{len(found)}"] = entry

    for key, by_threads in sorted(series(records).items()):
        machine, bench, strategy = key
        counts = sorted(by_threads)
        base = base_of(machine, bench, strategy, counts)
        if len(counts) < MIN_COUNTS:
            rows.append(base | {"note": f"{counted(len(counts))}: Extra-P needs at least "
                                        f"{MIN_COUNTS}; no model"})
        else:
            batch(machine, counts, ("time", base, by_threads))
    left_out = not_reproduced(explained or [])
    for key, by_quantity in sorted(explained_series(explained or []).items()):
        machine, bench, strategy = key
        aside = (f" ({' '.join(map(str, left_out[key]))} left out: the explained runs do not "
                 "reproduce the timing runs there)") if key in left_out else ""
        for quantity, points in by_quantity.items():
            counts = sorted(points)
            if not counts and not aside:  # not in the table at all (F_P without T_1)
                continue
            base = base_of(machine, bench, strategy, counts) | {
                "quantity": f"{quantity}_median", "horizon": horizon}
            if len(counts) < MIN_COUNTS:
                rows.append(base | {"note": f"{counted(len(counts), 'explained thread count')}"
                                            f"{aside}: Extra-P needs at least {MIN_COUNTS}; "
                                            "no model"})
            elif all(v == 0 for v in points.values()):
                rows.append(base | {"note": "zero at every thread count; no model"})
            else:
                batch(machine, counts, ("explained", base | {"note": aside.strip()}, points))
    with tempfile.TemporaryDirectory(prefix="pinbench-extrap-") as scratch:
        for (machine, counts), cells in sorted(batches.items()):
            jsonl = Path(scratch) / "runs.jsonl"
            jsonl.write_text("\n".join(
                extrap_lines({n: c[2] for n, c in cells.items() if c[0] == "time"})
                + explained_lines({n: {c[1]["quantity"].removesuffix("_median"): c[2]}
                                   for n, c in cells.items() if c[0] == "explained"})) + "\n")
            fits = run_extrap(extrap, jsonl)
            for name, (kind, base, points) in cells.items():
                rows += (_cell_rows(base, points, fits, name, horizon) if kind == "time"
                         else [_explained_row(base, points, fits, name)])
    return rows


def _explained_row(base: dict, points: dict[int, float], fits: dict, name: str) -> dict:
    """The row of one explained quantity's model (no best or turning point): reliable when
    its values are all positive and its SMAPE passes the gate."""
    row = base | {"crossvalidation": True}
    fit = fits.get((name, row["quantity"]))
    if fit is None:
        return row | {"note": "Extra-P printed no model"}
    try:
        Formula(fit.python)(max(points))  # the model must be a formula we can read
    except ModelError as exc:
        return row | {"note": str(exc)}
    values = list(points.values())
    notes = [row.get("note", "")]
    reliable: bool | str = fit.smape <= MAX_SMAPE
    if min(values) <= 0:
        reliable = ""  # SMAPE cannot say
        notes.append(("values cross zero" if min(values) < 0 < max(values) else
                      "values include zero" if min(values) == 0 else "values are negative")
                     + ": SMAPE (relative to the values) overstates the error")
    elif not reliable:
        notes.append(f"no reliable model: cross-validated SMAPE {fit.smape:.3g}% above "
                     f"{MAX_SMAPE:g}%")
    return row | {"model": fit.model, "smape": fit.smape, "ar2": fit.ar2, "rss": fit.rss,
                  "re": fit.re, "reliable": reliable, "note": "; ".join(filter(None, notes))}


def _cell_rows(base: dict, by_threads: dict[int, list[float]], fits: dict, name: str,
               horizon: int) -> list[dict]:
    """The rows of one cell: each statistic's time and cost model, the better reliable one
    selected, its best thread count and turning point in the measured range (and beyond it,
    up to ``horizon``, labelled extrapolated)."""
    first, measured_max = min(by_threads), max(by_threads)
    horizon = max(horizon, measured_max)
    rows = []
    for statistic in STATISTICS:
        pair = []
        for kind in KINDS:
            row = base | {"quantity": f"{kind}_{statistic}", "crossvalidation": True,
                          "horizon": horizon}
            fit = fits.get((name, f"{kind}_{statistic}"))
            if fit is None:
                rows.append(row | {"note": "Extra-P printed no model"})
                continue
            row |= {"model": fit.model, "smape": fit.smape, "ar2": fit.ar2, "rss": fit.rss,
                    "re": fit.re, "reliable": fit.smape <= MAX_SMAPE,
                    "time_model": fit.model if kind == "time" else f"({fit.model}) / p"}
            if not row["reliable"]:
                rows.append(row | {"note": f"no reliable model: cross-validated SMAPE "
                                           f"{fit.smape:.3g}% above {MAX_SMAPE:g}%"})
                continue
            try:
                curve = time_curve(fit, kind, horizon)
            except ModelError as exc:
                rows.append(row | {"note": str(exc)})
                continue
            best, turning = turning_points(curve[first - 1:measured_max], first)
            row |= {"best_threads": best, "best_time_s": curve[best - 1],
                    "turning_threads": "" if turning is None else turning}
            if horizon > measured_max:
                far_best, far_turning = turning_points(curve[first - 1:], first)
                row["extrapolated"] = (f"up to {horizon}: best {far_best}, turning point "
                                       f"{'none' if far_turning is None else far_turning}")
            pair.append(row)
            rows.append(row)
        if pair:
            min(pair, key=lambda r: r["smape"])["selected"] = True
    return rows


def write_models(rows: list[dict], csv_path: Path, text_path: Path, note: str = "") -> str:
    """Write ``models.csv`` and its readable summary (returned): one line per selected median
    model, a line per cell without one saying why (cells sharing a reason in one line), the
    explained quantities' models; ``note`` (e.g. why there are no models) first."""
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with csv_path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, COLUMNS)
        writer.writeheader()
        writer.writerows({c: row.get(c, "") for c in COLUMNS} for row in rows)
    lines = [note] if note else []
    answered = {(r["machine"], r["benchmark"], r["strategy"]) for r in rows
                if r.get("selected") and r["quantity"].endswith("_median")}
    unanswered: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for row in rows:
        where = f"{row['machine']}/{row['benchmark']} {row['strategy']}"
        cell = (row["machine"], row["benchmark"], row["strategy"])
        quantity = row.get("quantity", "")
        if quantity.removesuffix("_median") in EXPLAINED:
            if row.get("model"):
                extra = f" [{row['note']}]" if row.get("note") else ""
                lines.append(f"{where}: {quantity}(p) = {row['model']} s (SMAPE "
                             f"{row['smape']:.3g}%, adj. R^2 {row['ar2']:.3g}){extra}")
            elif row.get("note"):
                unanswered[cell].append(f"{quantity}: {row['note']}")
        elif row.get("selected") and quantity.endswith("_median"):
            turning = (row["turning_threads"]
                       or f"none (still falling at {row['thread_counts'].split()[-1]})")
            extra = f" [extrapolated {row['extrapolated']}]" if row.get("extrapolated") else ""
            best = row["best_threads"]
            lines.append(f"{where}: median T(p) = {row['time_model']} (cross-validated SMAPE "
                         f"{row['smape']:.3g}%, adj. R^2 {row['ar2']:.3g}); in the measured "
                         f"range, best {best} thread{'s' if best != 1 else ''}, turning point "
                         f"{turning}{extra}")
        elif cell not in answered and row.get("note") and not quantity.endswith("_mean"):
            unanswered[cell].append(f"{quantity}: {row['note']}" if quantity else row["note"])
    same_reason: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for (machine, bench, strategy), reasons in unanswered.items():
        same_reason[(machine, bench, "; ".join(reasons))].append(strategy)
    lines += [f"{machine}/{bench} {', '.join(strategies)}: {reason}"
              for (machine, bench, reason), strategies in same_reason.items()]
    text = "\n".join(lines) + "\n"
    text_path.write_text(text)
    return text


def read_models(path: Path) -> list[ModelRow]:
    """The rows of a ``models.csv``, none when the file is absent."""
    return read_records(ModelRow, path) if Path(path).is_file() else []


def models(records: list[RunRecord], extrap: Path, horizon: int, pus: dict[str, int],
           csv_path: Path, text_path: Path, explain_path: Path | None = None) -> str:
    """Model every cell with enough thread counts and write ``models.csv`` and the summary;
    with ``explain_path`` (an ``explain.csv`` that exists), its quantities too. When Extra-P
    is missing or fails, the files hold no model and the summary's first line says why (the
    campaign goes on). Returns the summary."""
    explained = None
    if explain_path is not None and Path(explain_path).is_file():
        explained = read_explain(Path(explain_path))
    try:
        rows, note = model_rows(records, extrap, horizon, pus, explained), ""
    except ModelError as exc:
        rows, note = [], f"no scalability models: {exc}"
    return write_models(rows, csv_path, text_path, note)
