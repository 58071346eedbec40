"""The rates of the explanation's and the scalability models' decision rules, simulated.

``python -m pinbench.stats.simulate_explain [--trials N] [--extrap PATH]``; docs/explain.md and
docs/models.md record the figures.

**The reading's terms** (:func:`pinbench.stats.explain.differences`). A strategy and the
baseline each make n explained runs; a run's P·T_P is the sum of its idle time, its work
(inflation included) and its lock waits, each drawn lognormal around its median with the
same relative spread (2 s of processor time split 0.4 / 1.5 / 0.1). Conditions: no
difference at all; the strategy's work lower by a planted share of P·T_P (the others equal);
its idle time lower by 0.5% of P·T_P, a real difference below
:data:`pinbench.stats.explain.MIN_SHARE`. Printed: how often a term that does not differ (or
differs by less than MIN_SHARE) is named (false findings), and how often the planted one is
(power).

**The models' gate** (:data:`pinbench.stats.models.MAX_SMAPE`). Per thread count, the median
of 7 runs drawn lognormal around a law, through :func:`pinbench.stats.models.model_rows` and
the real Extra-P: laws of the performance model normal form (which the gate should pass)
and shapes no single PMNF term has (which it should refuse): a step once two cores are
oversubscribed, a fall to two cores then flat, an odd-even zigzag. Printed per shape, run
spread and number of thread counts: the share of cells given a reliable model, and the
largest error of the accepted models against the law over the measured range (median and
worst).
"""
from __future__ import annotations

import argparse
import math
import random
import statistics
from pathlib import Path

from pinbench.results.runs import RunRecord
from pinbench.stats.explain import MIN_SHARE, TERMS, differences
from pinbench.stats.models import extrap_path, model_rows, time_curve_text

#: Each term's median in a simulated run (thread-s): idle, work with its inflation, lock waits.
PARTS = {"I_P": 0.4, "W_P_less_L_P": 1.5, "L_P": 0.1}
#: term key of :data:`pinbench.stats.explain.TERMS` -> the per-run quantity
QUANTITY = {term: quantity for term, (_, quantity) in TERMS.items()}


def explained_runs(rng: random.Random, n: int, spread: float, lower: dict[str, float]
                   ) -> dict[str, list[float]]:
    """n runs' per-run quantities; ``lower``: quantity -> how much lower its median is (thread-s)."""
    runs = {q: [(median - lower.get(q, 0.0)) * math.exp(rng.gauss(0, spread)) for _ in range(n)]
            for q, median in PARTS.items()}
    runs["P_T_P"] = [sum(values) for values in zip(*(runs[q] for q in PARTS))]
    return runs


def term_rates(n: int, spread: float, planted: dict[str, float], trials: int, seed: int,
               confidence: float = 0.95) -> dict[str, float]:
    """term -> the share of trials in which the reading names it (lower or higher), the
    strategy's quantities lower than the baseline's by ``planted`` (term -> share of P·T_P)."""
    rng = random.Random(seed)
    total = sum(PARTS.values())
    lower = {QUANTITY[term]: share * total for term, share in planted.items()}
    named = dict.fromkeys(TERMS, 0)
    for _ in range(trials):
        found = differences(explained_runs(rng, n, spread, lower),
                            explained_runs(rng, n, spread, {}), confidence)
        for term in f"{found['lower']} {found['higher']}".split():
            named[term] += 1
    return {term: count / trials for term, count in named.items()}


#: laws T(p) the gate should pass, and shapes it should refuse
LAWS = {"3 + 0.5·p·log2 p": lambda p: 3 + 0.5 * p * math.log2(p),
        "10/p + 0.3·p": lambda p: 10 / p + 0.3 * p,
        "2 + 12/p": lambda p: 2 + 12 / p}
SHAPES = {"step up past 2 cores": lambda p: 1.0 if p <= 2 else 2.5,
          "falls to 2 cores, then flat": lambda p: 4.0 / min(p, 2),
          "odd-even zigzag": lambda p: 2.0 + (0.6 if p % 2 else 0.0)}
COUNTS = {5: [1, 2, 3, 4, 5], 7: [1, 2, 3, 4, 5, 6, 8]}


def gate_rates(extrap: Path, trials: int, seed: int, spreads=(0.02, 0.10)) -> list[dict]:
    """Per law or shape, run spread and number of thread counts: the share of ``trials``
    cells with a reliable model, and the largest relative error of each accepted model
    against the law over the measured range (median and worst, None: none accepted)."""
    rng = random.Random(seed)
    results = []
    for count, counts in COUNTS.items():
        records, truth = [], {}
        for name, law in {**LAWS, **SHAPES}.items():
            for spread in spreads:
                for trial in range(trials):
                    bench = f"{len(truth)}"
                    truth[bench] = (name, spread, law)
                    records += [RunRecord(
                        machine="m", benchmark=bench, threads=p, strategy="os", repetition=k,
                        order_index=k, ok=True, failure="",
                        time_s=law(p) * math.exp(rng.gauss(0, spread)), time_source="wall",
                        wall_s=1.0, user_s=0.0, sys_s=0.0, exit_status=0, timed_out=False,
                        validated=True, verification="n/a", pus="", observed="", load_1m=0.0,
                        governor="", started_at="") for p in counts for k in range(7)]
        rows = model_rows(records, extrap, max(counts), {})
        chosen = {r["benchmark"]: r for r in rows
                  if r.get("selected") and r["quantity"].endswith("_median")}
        for (name, spread) in dict.fromkeys((n, s) for n, s, _ in truth.values()):
            benches = [b for b, (n, s, _) in truth.items() if (n, s) == (name, spread)]
            errors = []
            for bench in benches:
                if bench in chosen:
                    row = chosen[bench]
                    curve = time_curve_text(row["model"], row["quantity"], max(counts))
                    law = truth[bench][2]
                    errors.append(max(abs(curve[p - 1] - law(p)) / law(p) for p in counts))
            results.append({"shape": name, "pmnf": name in LAWS, "spread": spread,
                            "counts": count, "accepted": len(errors) / len(benches),
                            "error_median": statistics.median(errors) if errors else None,
                            "error_worst": max(errors) if errors else None})
    return results


def main(argv: list[str] | None = None) -> int:
    """Print the rates of the reading's term rule and of the models' gate."""
    parser = argparse.ArgumentParser(prog="python -m pinbench.stats.simulate_explain",
                                     description=main.__doc__)
    parser.add_argument("--trials", type=int, default=2000,
                        help="simulated cell pairs per condition (the gate: a tenth)")
    parser.add_argument("--extrap", type=Path, default=extrap_path(Path.cwd()))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"the reading's terms (MIN_SHARE {MIN_SHARE:.0%}), {args.trials} pairs per condition: "
          "share naming idle / inflation / locks")
    conditions = {"no difference": {}, "idle lower by 0.5%": {"idle": 0.005},
                  **{f"inflation lower by {d:.0%}": {"inflation": d} for d in (0.02, 0.05, 0.1)}}
    for n in (6, 10, 20):
        for spread in (0.02, 0.10):
            for label, planted in conditions.items():
                rates = term_rates(n, spread, planted, args.trials, args.seed)
                print(f"  n = {n:>2}, spread {spread:.0%}, {label:<24}: "
                      + " / ".join(f"{rates[t]:.2%}" for t in TERMS), flush=True)
    print(f"\nthe models' gate, {max(args.trials // 10, 1)} cells per condition: share with a "
          "reliable model; largest error against the law (median, worst)")
    for r in gate_rates(args.extrap, max(args.trials // 10, 1), args.seed):
        error = (f"{r['error_median']:.1%}, {r['error_worst']:.1%}"
                 if r["error_median"] is not None else "-")
        kind = "PMNF law" if r["pmnf"] else "no PMNF "
        print(f"  {kind} {r['shape']:<28} spread {r['spread']:.0%}, {r['counts']} counts: "
              f"{r['accepted']:.0%} ({error})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
