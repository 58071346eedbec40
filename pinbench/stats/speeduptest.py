"""The Speedup-Test of Touati, Worms and Briais (INRIA report inria-00443839, 2010; CCPE 2013).

X holds the baseline's run times, Y the variant's. The protocol (design note
"The Speedup-Test, as this project implements it") asks two questions at risk
alpha = 1 - confidence, a test being significant iff its p-value <= alpha:

* is the mean faster? Shapiro-Wilk on each sample, Fisher's F-test, then a
  one-sided Student or Welch t-test (H1: mean(X) > mean(Y));
* is the median faster? Kolmogorov-Smirnov on the centred samples, then a
  one-sided Wilcoxon-Mann-Whitney test (H1: X tends to be larger than Y).

Every step follows R 4.2.2 (``shapiro.test``, ``var.test``, ``t.test``,
``ks.test``, ``wilcox.test``), the tool of the original authors, so that the
verdicts agree with theirs. Beyond the original tool: P[X > Y] and bootstrap
confidence intervals of the speedups and of P[X > Y].

Run times must be finite and positive: a time of 0 makes the speedup ratios
meaningless, so it is rejected like a negative one.

Command line: ``pinbench speeduptest BASELINE VARIANT [--json]``.
"""
from __future__ import annotations

import csv
import math
import warnings
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from pinbench.errors import PinbenchError
from pinbench.stats.sample_size import MIN_N

SMALL_N = 30               # protocol: a failed shape check is binding up to this size
SHAPIRO_MAX_N = 5000       # R's shapiro.test refuses larger samples
IDENTICAL_RANGE = 1e-10    # R's shapiro.test: "all 'x' values are identical" below this range
KS_EXACT_PRODUCT = 10000   # R's ks.test: exact p-value iff n_x * n_y < 10000
WILCOXON_EXACT_N = 50      # R's wilcox.test: exact p-value iff both n < 50 and no ties
CI_STATISTICS = ("speedup_mean", "speedup_median", "p_x_greater_y")


class SampleError(PinbenchError, ValueError):
    """A sample of run times that the Speedup-Test cannot use."""


def check_sample(values: ArrayLike, name: str = "sample") -> np.ndarray:
    """The run times as a float array; SampleError unless >= MIN_N finite times, all > 0."""
    try:
        sample = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise SampleError(f"{name}: not a list of numbers ({exc})") from None
    if sample.ndim != 1:
        raise SampleError(f"{name}: expected a flat list of run times")
    if len(sample) < MIN_N:
        raise SampleError(f"{name}: {len(sample)} run time(s), at least {MIN_N} are needed")
    if not np.all(np.isfinite(sample)):
        raise SampleError(f"{name}: NaN or infinite run time")
    if np.any(sample <= 0):
        raise SampleError(f"{name}: run times must be positive (found {sample.min():g})")
    return sample


# --- the tests, each as R computes it ------------------------------------------------------

def shapiro_p(sample: np.ndarray) -> float | None:
    """Shapiro-Wilk p-value as R's shapiro.test; None where R refuses it.

    R refuses identical values (range < 1e-10) and n > 5000.
    """
    ordered = np.sort(sample)
    spread = ordered[-1] - ordered[0]
    if spread < IDENTICAL_RANGE or len(ordered) > SHAPIRO_MAX_N:
        return None
    if spread < 1:
        ordered = ordered / spread  # R rescales to avoid its ifault = 6
    return float(stats.shapiro(ordered).pvalue)


def f_test_p(x: np.ndarray, y: np.ndarray) -> float | None:
    """Two-sided F-test of equal variances (R's var.test); None if a variance is zero."""
    var_x, var_y = np.var(x, ddof=1), np.var(y, ddof=1)
    if var_x == 0 or var_y == 0:
        return None
    ratio, dfs = var_x / var_y, (len(x) - 1, len(y) - 1)
    return float(2 * min(stats.f.cdf(ratio, *dfs), stats.f.sf(ratio, *dfs)))


def t_test_p(x: np.ndarray, y: np.ndarray, equal_var: bool) -> float:
    """One-sided t-test, H1: mean(x) > mean(y); pooled (Student) or Welch variance."""
    return float(stats.ttest_ind(x, y, equal_var=equal_var, alternative="greater").pvalue)


def _ecdf_distance(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided Smirnov statistic D = max |F_x - F_y|, evaluated at every distinct value."""
    points = np.unique(np.concatenate([x, y]))
    f_x = np.searchsorted(np.sort(x), points, side="right") / len(x)
    f_y = np.searchsorted(np.sort(y), points, side="right") / len(y)
    return float(np.max(np.abs(f_x - f_y)))


def _smirnov_exact_sf(d: float, x: np.ndarray, y: np.ndarray) -> float:
    """P(D >= d), exact and conditional on the ties of x and y (R 4.2's psmirnov).

    Counts the lattice paths from (0, 0) to (n_x, n_y) whose distance stays below d at
    the end of every block of tied values (Schroer and Trenkler 1995).
    """
    if len(x) > len(y):
        x, y = y, x  # D is symmetric; the shorter sample keeps the arrays short
    n_x, n_y = len(x), len(y)
    pooled = np.sort(np.concatenate([x, y]))
    block_end = np.append(np.diff(pooled) != 0, True)
    bound = (0.5 + math.floor(d * n_x * n_y - 1e-7)) / (n_x * n_y)
    u = np.arange(n_x + 1)
    paths = np.zeros(n_x + 1)
    paths[0] = 1.0
    for k in range(1, n_x + n_y + 1):
        paths[1:] = paths[1:] + paths[:-1]
        v = k - u
        paths[v > n_y] = 0.0
        if block_end[k - 1]:
            paths[np.abs(u / n_x - v / n_y) >= bound] = 0.0
    log_total = math.lgamma(n_x + n_y + 1) - math.lgamma(n_x + 1) - math.lgamma(n_y + 1)
    return 1.0 - paths[n_x] / math.exp(log_total)


def _kolmogorov_sf(z: float, tol: float = 1e-6) -> float:
    """1 - K(z), Kolmogorov's limit distribution with R's truncated series (C_pKS2)."""
    if z <= 0:
        return 1.0
    k_max = int(math.sqrt(2 - math.log(tol)))
    if z < 1:
        w = -(math.pi / 2 * math.pi / 4) / (z * z)
        cdf = sum(math.exp(k * k * w - math.log(z)) for k in range(1, k_max, 2))
        return 1.0 - cdf * math.sqrt(2 * math.pi)
    sign, k, old, new = -1.0, 1, 0.0, 1.0
    while abs(old - new) > tol:
        old, new = new, new + 2 * sign * math.exp(-2 * z * z * k * k)
        sign, k = -sign, k + 1
    return 1.0 - new


def ks_test(x: np.ndarray, y: np.ndarray) -> tuple[float, str]:
    """Two-sided two-sample Kolmogorov-Smirnov p-value and method, as R 4.2's ks.test.

    Exact iff n_x * n_y < 10000, ties included (conditional exact distribution);
    otherwise Kolmogorov's asymptotic distribution.
    """
    d = _ecdf_distance(x, y)
    if len(x) * len(y) < KS_EXACT_PRODUCT:
        p, method = _smirnov_exact_sf(d, x, y), "exact"
    else:
        scale = math.sqrt(len(x) * len(y) / (len(x) + len(y)))
        p, method = _kolmogorov_sf(scale * d), "asymptotic"
    return float(min(1.0, max(0.0, p))), method


def has_ties(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether two run times of the pooled sample are equal."""
    pooled = np.concatenate([x, y])
    return len(np.unique(pooled)) < len(pooled)


def wilcoxon_test(x: np.ndarray, y: np.ndarray) -> tuple[float, str]:
    """One-sided Wilcoxon-Mann-Whitney p-value (H1: x larger) and its method, as R's wilcox.test.

    Exact iff both n < 50 and no ties; otherwise the normal approximation with tie and
    continuity correction.
    """
    exact = len(x) < WILCOXON_EXACT_N and len(y) < WILCOXON_EXACT_N and not has_ties(x, y)
    method = "exact" if exact else "asymptotic"
    result = stats.mannwhitneyu(x, y, alternative="greater", method=method, use_continuity=True)
    return float(result.pvalue), f"wilcoxon-{method}"


def p_x_greater_y(x: np.ndarray, y: np.ndarray) -> float:
    """P[X > Y] estimated by U / (n_x n_y), ties counting one half."""
    ranks = stats.rankdata(np.concatenate([x, y]))
    u = ranks[: len(x)].sum() - len(x) * (len(x) + 1) / 2
    return float(u / (len(x) * len(y)))


# --- the two questions of the protocol ------------------------------------------------------

def _fmt_p(p: float) -> str:
    return f"{p:.3g}"


def _normality_check(name: str, sample: np.ndarray, p: float | None,
                     alpha: float) -> tuple[bool, str | None]:
    """(t-test still applicable?, warning) from one sample's Shapiro-Wilk p-value."""
    n = len(sample)
    if np.ptp(sample) < IDENTICAL_RANGE:
        return False, f"{name}: all run times identical, Shapiro-Wilk not computable: " \
                      f"t-test not applied"
    if p is None:
        return True, f"{name}: n = {n} > {SHAPIRO_MAX_N}, Shapiro-Wilk not computed, " \
                     f"relying on the central limit theorem"
    if p > alpha:
        return True, None
    if n <= SMALL_N:
        return False, f"{name}: not normal (Shapiro-Wilk p = {_fmt_p(p)}) and n = {n} <= " \
                      f"{SMALL_N}: t-test not applied"
    return True, f"{name}: not normal (Shapiro-Wilk p = {_fmt_p(p)}), n = {n} > {SMALL_N}: " \
                 f"relying on the central limit theorem"


def mean_test(x: np.ndarray, y: np.ndarray, alpha: float) -> dict:
    """Is mean(X) > mean(Y)? Shapiro-Wilk, F-test, then Student or Welch (one-sided)."""
    shapiro = {"x": shapiro_p(x), "y": shapiro_p(y)}
    f_p = f_test_p(x, y)
    applicable, notes = True, []
    for name, sample, key in (("X (baseline)", x, "x"), ("Y (variant)", y, "y")):
        usable, note = _normality_check(name, sample, shapiro[key], alpha)
        applicable &= usable
        notes += [note] if note else []
    result = {"significant": False, "p_value": None, "test": "not applied", "warnings": notes,
              "shapiro_p_x": shapiro["x"], "shapiro_p_y": shapiro["y"], "f_test_p": f_p,
              "equal_var": None}
    if applicable:
        equal_var = f_p > alpha
        p = t_test_p(x, y, equal_var)
        result.update(significant=p <= alpha, p_value=p, equal_var=equal_var,
                      test="student" if equal_var else "welch")
    return result


def median_test(x: np.ndarray, y: np.ndarray, alpha: float) -> dict:
    """Is X larger than Y? KS on the centred samples, then Wilcoxon-Mann-Whitney (one-sided).

    As the protocol has it, and as R's ks.test computes it on those samples. Centred on
    their medians, both samples' distribution functions pass 1/2 at 0, so their distance is
    at most about 1/2: at 10 runs each the exact test cannot reject (D = 1/2: p = 0.052), and
    beyond it rarely does (docs/statistics-error-rates.md).
    """
    ks_p, ks_method = ks_test(x - np.median(x), y - np.median(y))
    result = {"significant": False, "p_value": None, "test": "not applied", "warnings": [],
              "ks_p": ks_p, "ks_method": ks_method}
    if ks_p <= alpha:
        shapes = f"distribution shapes differ (Kolmogorov-Smirnov p = {_fmt_p(ks_p)})"
        if min(len(x), len(y)) <= SMALL_N:
            result["warnings"].append(f"{shapes} and n <= {SMALL_N}: Wilcoxon test not applied")
            return result
        result["warnings"].append(f"{shapes}: the verdict means P[X > Y] > 1/2, "
                                  f"not a faster median")
    if np.ptp(np.concatenate([x, y])) == 0:
        result["warnings"].append("all run times identical")
    elif has_ties(x, y):
        result["warnings"].append("tied run times (coarse clock?): normal approximation "
                                  "with tie and continuity correction")
    p, test = wilcoxon_test(x, y)
    result.update(significant=p <= alpha, p_value=p, test=test)
    return result


# --- bootstrap confidence intervals ---------------------------------------------------------

def _as_rows(codes: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """Codes broadcast to the batch shape, one resample per row."""
    return np.broadcast_to(codes, batch + codes.shape[-1:]).reshape(-1, codes.shape[-1])


def _fraction_greater(codes_x: np.ndarray, codes_y: np.ndarray, levels: int) -> np.ndarray:
    """U / (n_x n_y) per resample, from integer codes that preserve the order of the values.

    Counts Y's values at each level (one bincount for the whole batch), so the cost is
    O(batch x (n + levels)) instead of a sort per resample.
    """
    batch = np.broadcast_shapes(codes_x.shape[:-1], codes_y.shape[:-1])
    rows_x, rows_y = _as_rows(codes_x, batch), _as_rows(codes_y, batch)
    offsets = np.arange(len(rows_y))[:, None] * levels
    counts = np.bincount((rows_y + offsets).ravel(), minlength=len(rows_y) * levels)
    counts = counts.reshape(len(rows_y), levels)
    score = np.cumsum(counts, axis=1) - counts / 2  # #{Y < v} + #{Y == v} / 2
    u = np.take_along_axis(score, rows_x, axis=1).sum(axis=1)
    return (u / (rows_x.shape[1] * rows_y.shape[1])).reshape(batch)


def _resample_statistics(values: np.ndarray):
    """Vectorised statistic for scipy's bootstrap: resamples are codes into ``values``."""
    def statistic(codes_x: np.ndarray, codes_y: np.ndarray, axis: int = -1) -> np.ndarray:
        codes_x, codes_y = np.moveaxis(codes_x, axis, -1), np.moveaxis(codes_y, axis, -1)
        x, y = values[codes_x], values[codes_y]
        return np.stack([x.mean(axis=-1) / y.mean(axis=-1),
                         np.median(x, axis=-1) / np.median(y, axis=-1),
                         _fraction_greater(codes_x, codes_y, len(values))])
    return statistic


def bootstrap_intervals(x: np.ndarray, y: np.ndarray, confidence: float, resamples: int,
                        seed: int) -> dict:
    """BCa bootstrap intervals of the speedups and P[X > Y], X and Y resampled independently.

    Where BCa cannot be computed the percentile interval of the same resamples is used; an
    interval is None when every resample gives the same value (nothing to estimate).
    """
    if resamples == 0:
        return {"method": "none: resamples = 0", "warnings": []} | dict.fromkeys(CI_STATISTICS)
    values, codes = np.unique(np.concatenate([x, y]), return_inverse=True)
    kwargs = {"paired": False, "vectorized": True, "confidence_level": confidence}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", category=RuntimeWarning)
        bca = stats.bootstrap((codes[: len(x)], codes[len(x):]), _resample_statistics(values),
                              n_resamples=resamples, rng=np.random.default_rng(seed), **kwargs)
    percentile = stats.bootstrap((codes[: len(x)], codes[len(x):]),
                                 _resample_statistics(values), n_resamples=0,
                                 bootstrap_result=bca, method="percentile", **kwargs)
    result = {"method": f"BCa bootstrap, {resamples} resamples, seed {seed}, "
                        f"X and Y resampled independently", "warnings": []}
    for i, name in enumerate(CI_STATISTICS):
        low, high = bca.confidence_interval.low[i], bca.confidence_interval.high[i]
        if np.ptp(bca.bootstrap_distribution[i]) == 0:
            result[name] = None
            result["warnings"].append(f"{name}: every resample gives the same value, no interval")
            continue
        if not (np.isfinite(low) and np.isfinite(high)):
            low = percentile.confidence_interval.low[i]
            high = percentile.confidence_interval.high[i]
            result["warnings"].append(f"{name}: BCa not computable, percentile interval instead")
        result[name] = [float(low), float(high)]
    return result


# --- the Speedup-Test ------------------------------------------------------------------------

def speedup_test(x: ArrayLike, y: ArrayLike, confidence: float = 0.95,
                 resamples: int = 2000, seed: int = 0) -> dict:
    """The Speedup-Test of baseline times x against variant times y, as a JSON-ready dict.

    Speedups are ratios of statistics of x over y (> 1: the variant is faster). Raises
    SampleError for unusable samples, ValueError for a bad confidence or resample count.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, not {confidence}")
    if resamples < 0:
        raise ValueError(f"resamples must be >= 0, not {resamples}")
    x, y = check_sample(x, "X (baseline)"), check_sample(y, "Y (variant)")
    alpha = 1 - confidence
    mean, median = mean_test(x, y, alpha), median_test(x, y, alpha)
    return {
        "n_x": len(x), "n_y": len(y), "confidence": confidence, "alpha": alpha,
        "mean_x": float(np.mean(x)), "mean_y": float(np.mean(y)),
        "median_x": float(np.median(x)), "median_y": float(np.median(y)),
        "min_x": float(np.min(x)), "min_y": float(np.min(y)),
        "variance_x": float(np.var(x, ddof=1)), "variance_y": float(np.var(y, ddof=1)),
        "speedup_mean": float(np.mean(x) / np.mean(y)),
        "speedup_median": float(np.median(x) / np.median(y)),
        "speedup_min": float(np.min(x) / np.min(y)),
        "mean": {k: mean[k] for k in ("significant", "p_value", "test", "warnings")},
        "median": {k: median[k] for k in ("significant", "p_value", "test", "warnings")},
        "p_x_greater_y": p_x_greater_y(x, y),
        "shapiro_p_x": mean["shapiro_p_x"], "shapiro_p_y": mean["shapiro_p_y"],
        "f_test_p": mean["f_test_p"], "equal_var": mean["equal_var"],
        "ks_p": median["ks_p"], "ks_method": median["ks_method"],
        "ci": bootstrap_intervals(x, y, confidence, resamples, seed),
    }


# --- command line ----------------------------------------------------------------------------

def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _csv_column(rows: list[list[str]], column: str | None, path: Path) -> list[str]:
    """The cells of the chosen column (blank cells dropped); the first all-numeric by default."""
    header, body = rows[0], rows[1:]
    if not body:
        raise SampleError(f"{path}: a header and no run times")
    ragged = next((row for row in body if len(row) != len(header)), None)
    if ragged is not None:
        raise SampleError(f"{path}: not a table: a row has {len(ragged)} fields, "
                          f"the header {len(header)}")
    cells = {name: [row[i].strip() for row in body if row[i].strip()]
             for i, name in enumerate(header)}
    if column is not None:
        if column not in cells:
            raise SampleError(f"{path}: no column {column!r} (columns: {', '.join(header)})")
        return cells[column]
    for name in header:
        if cells[name] and all(_number(cell) is not None for cell in cells[name]):
            return cells[name]
    raise SampleError(f"{path}: no column holds only numbers; choose one with --column")


def read_times(path: Path, column: str | None = None) -> np.ndarray:
    """Run times from a file: one number per line, or a CSV table with a header.

    ``column`` chooses the column of a table (a file of bare numbers has none). Blank lines
    and blank cells (e.g. the times of failed runs) are ignored. Raises OSError for an
    unreadable file and SampleError for one that holds no usable sample.
    """
    try:
        text = Path(path).read_text()
    except UnicodeDecodeError:
        raise SampleError(f"{path}: not a text file") from None
    rows = [row for row in csv.reader(text.splitlines()) if any(cell.strip() for cell in row)]
    if not rows:
        raise SampleError(f"{path}: empty file")
    plain = len(rows[0]) == 1 and _number(rows[0][0]) is not None
    cells = [",".join(row).strip() for row in rows] if plain else _csv_column(rows, column, path)
    times = [_number(cell) for cell in cells]
    if None in times:
        raise SampleError(f"{path}: not a number: {cells[times.index(None)]!r}")
    return check_sample(times, str(path))


def _fmt_interval(interval: list[float] | None) -> str:
    return "-" if interval is None else f"[{interval[0]:.4g}, {interval[1]:.4g}]"


def _verdict_line(label: str, part: dict) -> str:
    verdict = "yes" if part["significant"] else "no"
    p = "" if part["p_value"] is None else f", p = {part['p_value']:.3g}"
    return f"{label:<15} {verdict:<4} ({part['test']}{p})"


def report(result: dict, baseline: str = "X", variant: str = "Y") -> str:
    """A short human-readable account of a speedup_test result."""
    r, ci = result, result["ci"]
    lines = [
        f"Speedup-Test at confidence {r['confidence']:g} (alpha = {r['alpha']:.3g})",
        f"baseline X: {baseline}  n = {r['n_x']}, mean {r['mean_x']:.6g}, "
        f"median {r['median_x']:.6g}, min {r['min_x']:.6g}",
        f"variant  Y: {variant}  n = {r['n_y']}, mean {r['mean_y']:.6g}, "
        f"median {r['median_y']:.6g}, min {r['min_y']:.6g}",
        f"speedup X/Y: mean {r['speedup_mean']:.4f}, median {r['speedup_median']:.4f}, "
        f"min {r['speedup_min']:.4f}",
        _verdict_line("mean faster?", r["mean"]),
        _verdict_line("median faster?", r["median"]),
        f"P[X > Y] = {r['p_x_greater_y']:.4f}",
        f"intervals ({ci['method']}):",
        f"  mean speedup    {_fmt_interval(ci['speedup_mean'])}",
        f"  median speedup  {_fmt_interval(ci['speedup_median'])}",
        f"  P[X > Y]        {_fmt_interval(ci['p_x_greater_y'])}",
    ]
    notes = [f"mean: {w}" for w in r["mean"]["warnings"]] \
        + [f"median: {w}" for w in r["median"]["warnings"]] \
        + [f"intervals: {w}" for w in ci["warnings"]]
    if notes:
        lines += ["warnings:"] + [f"  {note}" for note in notes]
    return "\n".join(lines) + "\n"
