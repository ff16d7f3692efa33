"""The study's released outputs, models compared (issue 20 item 5, first table of IP-Bench).

For the education case (case 2: 7 models × 518 essay prompts × 3 style pairs) and the echo case
(case 3: 8 models × 1,852 questions × 2 statement variants, clustered by question), per model
the method as stated (``ipcausal.test``: exact sign-flip tests, Bonferroni over the model's
background pairs; the echo pairs clustered by ``question_id``) with its value-alignment verdict
(education: unethical; echo: mixed; no margin, so absence is never shown), then, per background
pair, the joint comparison of the models (``compare_runs``: model labels permuted within each
pair / question, Westfall–Young step-down over the C(m, 2) model pairs; L = 20,000) with the
pairs of models whose effects differ (adjusted p ≤ 0.05), and the Holm-adjusted pair tests beside.

Usage: ``python benchmarks/released_compare.py [--released ../shared/data/jiarui-liu-IP]``;
writes ``benchmarks/RELEASED_compare.txt``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ALPHA = 0.05
STANCE = {"education": "unethical", "echo": "mixed"}
CLUSTER = {"education": None, "echo": "question_id"}


def _case(case: str, root: Path, seed: int, lines: list[str]) -> None:
    from ipcausal.study.alignment import align_groups
    from ipcausal.study.compare import compare_runs
    from ipcausal.study.bench import released_runs
    from ipcausal.study.test import test

    t0 = time.perf_counter()
    runs = released_runs(root, case)
    t_read = time.perf_counter() - t0
    lines += [f"## {case} ({len(runs)} models; stance: {STANCE[case]})", "",
              "Per model, the method as stated (exact tests, Bonferroni within the model"
              + (", clusters = question" if CLUSTER[case] else "") + "):", ""]
    groups: list[str] = []
    cells: dict[str, dict[str, str]] = {}
    t1 = time.perf_counter()
    for label, ps in runs.items():
        report = test(ps, method="exact", correction="bonferroni", cluster=CLUSTER[case])
        al = align_groups(STANCE[case], report.groups)
        row = {}
        for g in report.groups:
            if g.group not in groups:
                groups.append(g.group)
            row[g.group] = f"{g.effect:+.3f} [{g.ci_low:+.3f}, {g.ci_high:+.3f}] p_adj {g.pvalue_adjusted:.2g}"
        row["alignment"] = al.verdict
        cells[label] = row
    t_test = time.perf_counter() - t1
    lines += ["| model | " + " | ".join(f"{g}: mean Δ [95% CI], Bonferroni p" for g in groups) + " | alignment |",
              "|---" * (len(groups) + 2) + "|"]
    for label, row in cells.items():
        lines.append(f"| {label} | " + " | ".join(row.get(g, "—") for g in groups) + f" | {row['alignment']} |")
    t2 = time.perf_counter()
    res = compare_runs(runs, cluster=CLUSTER[case], rng=seed, n_resamples=20_000)
    t_cmp = time.perf_counter() - t2
    lines += ["", "Models compared per background pair (D = Δ^a − Δ^b; Westfall–Young step-down over the "
              "model pairs; Holm over the pair tests beside):", ""]
    for group, r in res.items():
        diff = [row for row in r.rows() if row["pvalue_adjusted"] <= ALPHA]
        holm = sum(row["pair_pvalue_holm"] <= ALPHA for row in r.rows())
        lines.append(f"- **{group}** ({r.n} pairs{f', {r.n_clusters} clusters' if r.n_clusters else ''}, "
                     f"{len(r.pairs)} model pairs, {r.method}): omnibus p (no model differs) = {r.pvalue:.2g}; "
                     f"{len(diff)} model pairs differ (Westfall–Young), {holm} (Holm on the pair tests)")
        for row in sorted(diff, key=lambda x: x["pvalue_adjusted"]):
            lines.append(f"  - {row['model_a']} − {row['model_b']}: {row['difference']:+.3f} "
                         f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}], adjusted p {row['pvalue_adjusted']:.2g}, "
                         f"pair test p {row['pair_pvalue']:.2g} (Holm {row['pair_pvalue_holm']:.2g})")
    lines += ["", f"Time: reading {t_read:.1f} s, per-model tests {t_test:.1f} s, comparisons {t_cmp:.1f} s.", ""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--released", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data"
                                              / "jiarui-liu-IP"))
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--out", default=str(Path(__file__).with_name("RELEASED_compare.txt")))
    args = ap.parse_args()
    lines: list[str] = []
    for case in ("education", "echo"):
        _case(case, Path(args.released), args.seed, lines)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
