"""Replay the study's released outputs through the anytime-valid sequential test (issue 12).

What it does
------------
For case 3 (echo chamber: Δ = correct under the false belief − correct under the true belief,
SD and FD statements stacked, 3,704 pairs per model, |Δ| ≤ 1) and case 2 (essays: Δ per style
pair, 518 prompts per model, |Δ| ≤ 60, the range of the 0–60 AES scale), for every model:

1. the fixed-n exact sign-flip test on all pairs (``ipcausal.permutation_test(method="exact")``);
2. ``--orders`` (default 200) seeded random orders of the pairs; in each, an auditor looks
   after every pair and stops at the first time the e-value reaches 1/α (α = 0.05,
   two-sided, the default ``method="mixture"``); the verdict is "reject" when that happened;
3. a Markdown table: fixed-n p and verdict, the share of orders whose sequential verdict
   agrees, the median and 90th percentile of the pairs used, the model calls saved at the
   median (2 per echo pair; per essay style pair 2 essays).

Per model, case 2's three style pairs are also audited together: each group's state at α/3 (it
stops at e ≥ 3/α, so e-Holm rejects it), e-Holm across the three at α, the prompts until the
model's verdict (the first rejected group) and until every group is decided.

A further table compares the bets on the echo case (median pairs to the verdict in the same
orders): the three ``method=`` options, the uniform mixture up to λ = 1/2 (our reading of the
issue's prototype), and the hindsight-optimal constant bet (the Kelly bet of the whole data,
which no valid test can know in advance: a floor, not a competitor).  Case 2 is replayed under
``null="symmetry"`` (the sign-flip null of the fixed-n test; bets scaled by the largest |Δ| seen),
and a third table shows why the mean null with the a-priori bound 60 cannot get there: even
the best constant bet in hindsight ends below 2/α after all 518 pairs.

Run it with ``python benchmarks/sequential.py`` (``--orders 20`` for a quick look); the tables
go to ``benchmarks/SEQUENTIAL.txt``.  Needs ``../shared/data/jiarui-liu-IP`` (skipped if absent).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

import ipcausal
from ipcausal.stats import sequential as seq

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "jiarui-liu-IP"
if not DATA.is_dir():
    DATA = Path("/work/shared/data/jiarui-liu-IP")
ALPHA = 0.05
STYLE_PAIRS = (("SAE", "ESL"), ("SAE", "AAE"), ("ESL", "AAE"))  # Δ = score(first) − score(second)


def echo_deltas(root: Path) -> dict[str, np.ndarray]:
    """Case 3: per model, Δ = correct(false belief) − correct(true belief), SD and FD stacked."""
    out = {}
    for f in sorted((root / "case_3" / "results").glob("results_*.csv")):
        df = pd.read_csv(f)
        table = {(r.case, r.dataset): np.array([int(v) for v in str(r.persuasion_counts).split(";")])
                 for r in df.itertuples()}
        parts = [(wrong - table[("CF_" + case[3:], ds)]) / 100.0
                 for (case, ds), wrong in sorted(table.items()) if case.startswith("WF_")]
        out[f.stem.removeprefix("results_")] = np.concatenate(parts)
    return out


def essay_deltas(root: Path) -> dict[str, dict[str, np.ndarray]]:
    """Case 2: per model and style pair, Δ = score(first style) − score(second), by prompt."""
    folder = root / "case_2" / "aes_scores"
    out: dict[str, dict[str, np.ndarray]] = {}
    for f in sorted(folder.glob("*_sae_results.txt")):
        model = f.name.removesuffix("_sae_results.txt")
        s = {st: pd.read_csv(folder / f"{model}_{st.lower()}_results.txt", header=None,
                             names=["index", "score"]).set_index("index")["score"] for st in ("SAE", "AAE", "ESL")}
        idx = s["SAE"].index.intersection(s["AAE"].index).intersection(s["ESL"].index).sort_values()
        out[model] = {f"{a}−{b}": (s[a][idx] - s[b][idx]).to_numpy(dtype=float) for a, b in STYLE_PAIRS}
    return out


def stops(d: np.ndarray, orders: np.ndarray, bound: float, method: str = "mixture", null: str = "mean",
          alternative: str = "two-sided") -> np.ndarray:
    """Pairs used in each order (the stop, or all of them when the e-value never reached 1/α)."""
    used = np.empty(len(orders), dtype=np.int64)
    rejected = np.zeros(len(orders), dtype=bool)
    for i, perm in enumerate(orders):
        res = ipcausal.stats.sequential_test(d[perm], bound=bound, alpha=ALPHA, method=method, null=null,
                                       alternative=alternative)
        used[i], rejected[i] = res.n, res.reject
    return np.where(rejected, used, -used)  # negative: ran out without a rejection


def fixed_grid_stops(d: np.ndarray, orders: np.ndarray, lams: np.ndarray) -> np.ndarray:
    """Stops of the two-sided uniform mixture over ``lams`` (to compare with the prototype)."""
    x = d / 1.0
    out = np.empty(len(orders))
    for i, perm in enumerate(orders):
        xs = x[perm]
        lw_up = np.cumsum(np.log1p(np.outer(xs, lams)), axis=0)
        lw_dn = np.cumsum(np.log1p(-np.outer(xs, lams)), axis=0)
        e = 0.5 * (np.exp(lw_up).mean(axis=1) + np.exp(lw_dn).mean(axis=1))
        hit = np.flatnonzero(e >= 1 / ALPHA)
        out[i] = hit[0] + 1 if hit.size else np.inf
    return out


def kelly(x: np.ndarray) -> tuple[float, float]:
    """(sign · λ*, mean log-growth) of the best constant bet on x ∈ [−1, 1] in hindsight, λ* ∈ [0, 0.999]."""
    sign = 1.0 if x.mean() >= 0 else -1.0
    opt = minimize_scalar(lambda v: -np.mean(np.log1p(sign * v * x)), bounds=(0.0, 0.999), method="bounded")
    return sign * float(opt.x), float(-opt.fun)


def oracle_stops(d: np.ndarray, orders: np.ndarray, bound: float) -> np.ndarray:
    """Hindsight-optimal constant bet (Kelly on the whole data), two-sided e ≥ K_λ*/2: a floor."""
    x = d / bound
    slam, _ = kelly(x)
    sign, lam = np.sign(slam) or 1.0, abs(slam)
    out = np.empty(len(orders))
    for i, perm in enumerate(orders):
        lw = np.cumsum(np.log1p(sign * lam * x[perm]))
        hit = np.flatnonzero(lw - math.log(2.0) >= math.log(1 / ALPHA))
        out[i] = hit[0] + 1 if hit.size else np.inf
    return out


def _fmt_p(p: float) -> str:
    return f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


def row(label: str, group: str, d: np.ndarray, orders: np.ndarray, bound: float, calls_per_pair: int,
        null: str = "mean") -> dict:
    fixed = ipcausal.permutation_test(d, method="exact")
    fixed_reject = fixed.pvalue < ALPHA
    s = stops(d, orders, bound, null=null)
    used = np.abs(s)
    agree = np.mean((s > 0) == fixed_reject)
    med, p90 = float(np.median(used)), float(np.percentile(used, 90))
    return dict(model=label, group=group, n=d.size, mean=float(d.mean()), p=fixed.pvalue, fixed=fixed_reject,
                agree=agree, share_rejected=float(np.mean(s > 0)), median=med, p90=p90,
                saved=calls_per_pair * (d.size - med), target=fixed.pvalue < 1e-4)


def model_row(model: str, groups: dict[str, np.ndarray], orders: np.ndarray) -> dict:
    """The audit of a model's three style pairs (null='symmetry', each group at α/3, e-Holm at α)."""
    m = len(groups)
    p_adj = [min(1.0, m * ipcausal.permutation_test(d, method="exact").pvalue) for d in groups.values()]
    any_rej, k_rej, first, last = [], [], [], []
    for perm in orders:
        res = [ipcausal.stats.sequential_test(d[perm], bound=60.0, alpha=ALPHA / m, null="symmetry") for d in groups.values()]
        holm = ipcausal.stats.e_holm([r.e_value for r in res], alpha=ALPHA)
        any_rej.append(holm.any_reject)
        k_rej.append(sum(holm.reject))
        stops_ = [r.stopped_at for r in res if r.reject]
        first.append(min(stops_) if stops_ else np.inf)
        last.append(max(stops_) if len(stops_) == m else orders.shape[1])
    n = orders.shape[1]
    to_verdict = float(np.median(first))
    return dict(model=model, fixed_any=min(p_adj) < ALPHA, fixed_k=sum(p < ALPHA for p in p_adj),
                share_any=float(np.mean(any_rej)), median_k=float(np.median(k_rej)),
                to_verdict=f"{to_verdict:.0f}" if np.isfinite(to_verdict) else f"never ({n})",
                to_end=float(np.median(last)), saved=f"{3 * (n - to_verdict):.0f}" if np.isfinite(to_verdict) else "0")


def table(rows: list[dict], title: str) -> list[str]:
    out = [f"### {title}", "",
           "| model | group | pairs | mean Δ | fixed-n exact p | fixed-n verdict | sequential agrees | "
           "sequential rejects | median pairs used | 90th pct | median share used | calls saved (median) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['model']} | {r['group']} | {r['n']} | {r['mean']:+.4f} | {_fmt_p(r['p'])} | "
                   f"{'reject' if r['fixed'] else 'keep'} | {100 * r['agree']:.1f} % | {100 * r['share_rejected']:.1f} % | "
                   f"{r['median']:.0f} | {r['p90']:.0f} | {100 * r['median'] / r['n']:.1f} % | {r['saved']:.0f} |")
    out.append("")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orders", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--out", default=str(HERE / "SEQUENTIAL.txt"))
    args = ap.parse_args(argv)
    if not DATA.is_dir():
        print(f"skipped: no released data at {DATA}")
        return 0
    t0 = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    lines = [f"{_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M UTC}: python benchmarks/sequential.py "
             f"--orders {args.orders} --seed {args.seed}  (α = {ALPHA}, two-sided, method='mixture', "
             f"ipcausal {ipcausal.__version__})", ""]
    echo = echo_deltas(DATA)
    echo_orders = {m: np.array([rng.permutation(d.size) for _ in range(args.orders)]) for m, d in echo.items()}
    echo_rows = [row(m, "false − true belief", d, echo_orders[m], 1.0, 2) for m, d in echo.items()]
    lines += table(echo_rows, f"Case 3 (echo chamber), |Δ| ≤ 1, {args.orders} random orders per model")
    essays = essay_deltas(DATA)
    essay_rows, essay_mean_rows, model_rows = [], [], []
    for m, groups in essays.items():
        orders = np.array([rng.permutation(next(iter(groups.values())).size) for _ in range(args.orders)])
        essay_rows += [row(m, g, d, orders, 60.0, 2, null="symmetry") for g, d in groups.items()]
        essay_mean_rows += [row(m, g, d, orders, 60.0, 2, null="mean") for g, d in groups.items()]
        model_rows.append(model_row(m, groups, orders))
    lines += table(essay_rows, f"Case 2 (essays), null='symmetry' (the sign-flip null of the fixed-n test), "
                               f"|Δ| ≤ 60 (the AES scale), {args.orders} random orders, the same prompt order "
                               "for a model's three style pairs")
    lines += ["### Case 2 per model: the three style pairs audited together (e-Holm)", "",
              "Each group's state runs at α/3, so it stops at e ≥ 3/α and e-Holm then rejects it; a prompt gives all "
              "three essays (3 calls).  'to the verdict': prompts until the first group is rejected (the model's "
              "verdict 'IP detected' is known then); 'to the end': until every group is rejected, else all 518.", "",
              "| model | fixed-n (exact, Bonferroni over 3) | groups rejected fixed-n | e-Holm rejects ≥ 1 group | "
              "median groups rejected (e-Holm) | median prompts to the verdict | median prompts to the end | "
              "calls saved to the verdict (median) |",
              "|---|---|---|---|---|---|---|---|"]
    for r in model_rows:
        lines.append(f"| {r['model']} | {'IP' if r['fixed_any'] else 'no IP'} | {r['fixed_k']} | "
                     f"{100 * r['share_any']:.1f} % | {r['median_k']:.0f} | {r['to_verdict']} | {r['to_end']:.0f} | "
                     f"{r['saved']} |")
    lines.append("")
    targets = [r for r in echo_rows + essay_rows if r["target"]]
    ok = [r for r in targets if r["agree"] >= 0.95]
    lines.append(f"Same verdict as the fixed-n test in ≥ 95 % of orders where fixed-n p < 1e-4: "
                 f"{len(ok)} of {len(targets)} groups"
                 + ("" if len(ok) == len(targets) else " — not met for: " + ", ".join(
                     f"{r['model']} {r['group']} ({100 * r['agree']:.1f} %)" for r in targets if r not in ok)))
    lines.append("")
    # --- the bets compared on the echo case (same orders)
    lines += ["### The bets compared: median pairs to the verdict, echo case, same orders", "",
              "| model | mixture (default) | aGRAPA | ONS | mixture to λ = 1/2 (prototype) | "
              "hindsight Kelly bet (floor, not valid) | default vs prototype | "
              "mixture, one-sided 'less' (direction fixed in advance) |",
              "|---|---|---|---|---|---|---|---|"]
    proto = 0.5 * np.arange(1, 21) / 20
    for m, d in echo.items():
        orders = echo_orders[m]
        med = {meth: np.median(np.where(s > 0, s, np.inf)) for meth in seq.METHODS
               for s in [stops(d, orders, 1.0, meth)]}
        pro = float(np.median(fixed_grid_stops(d, orders, proto)))
        flo = float(np.median(oracle_stops(d, orders, 1.0)))
        less = stops(d, orders, 1.0, alternative="less")
        one = float(np.median(np.where(less > 0, less, np.inf)))
        cells = [f"{med[k]:.0f}" if np.isfinite(med[k]) else "never (median)" for k in seq.METHODS]
        ratio = f"{100 * (med['mixture'] / pro - 1):+.0f} %" if np.isfinite(pro) and np.isfinite(med["mixture"]) else "–"
        lines.append((f"| {m} | " + " | ".join(cells) + f" | {pro:.0f} | {flo:.0f} | {ratio} | {one:.0f} |")
                     .replace("| inf |", "| never (median) |"))
    lines.append("")
    # --- case 2 under the mean null: the bound of 60 caps every bet
    lines += ["### Case 2 under null='mean' (bets scaled by the a-priori bound 60)", "",
              "| model | group | max observed abs(Δ) | sequential rejects | median pairs used | fixed-n p | "
              "best constant bet in hindsight: e-value after all 518 pairs (needs ≥ 2/α = 40) |",
              "|---|---|---|---|---|---|---|"]
    flat = [(m, g, d) for m, gs in essays.items() for g, d in gs.items()]
    for r, (m, g, d) in zip(essay_mean_rows, flat):
        _, growth = kelly(d / 60.0)
        lines.append(f"| {m} | {g} | {np.abs(d).max():g} | {100 * r['share_rejected']:.1f} % | {r['median']:.0f} | "
                     f"{_fmt_p(r['p'])} | {math.exp(d.size * growth):.3g} |")
    lines.append("")
    lines.append(f"({time.perf_counter() - t0:.0f} s on this machine)")
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
