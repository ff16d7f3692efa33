"""The results of a mitigation comparison: :class:`MitigationGroup` per background pair, :class:`MitigationResult`.

Made by :func:`ipcausal.study.mitigation.evaluate_mitigation` and
:func:`ipcausal.study.mitigation.case.run_case_mitigation` (which say how each field is tested).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ipcausal.study.defaults import DEFAULTS

__all__ = ["MitigationGroup", "MitigationResult"]


@dataclass(frozen=True)
class MitigationGroup:
    """One background pair: the effect without and with the mitigation, and the test of the change.

    ``effect_*``/``pvalue_*`` come from :func:`ipcausal.test` on the pairs both runs scored;
    ``change`` is mean D = Δ_with − Δ_without with its interval and paired sign-flip p
    (``change_pvalue``, corrected over the background pairs); ``equivalence`` is the TOST verdict
    of Δ_with within ``margin`` (``None`` without a margin); ``removed`` is True only when it is
    ``"equivalent"``.
    """

    group: str
    background_a: str
    background_b: str
    n: int
    effect_without: float
    pvalue_without: float
    reject_without: bool
    effect_with: float
    pvalue_with: float
    reject_with: bool
    change: float
    change_ci_low: float
    change_ci_high: float
    change_pvalue: float
    change_reject: bool
    margin: float | None
    equivalence: str | None
    equivalence_pvalue: float | None
    removed: bool

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


@dataclass(frozen=True)
class MitigationResult:
    """What :func:`evaluate_mitigation` returns (see there).

    ``groups``: one :class:`MitigationGroup` per background pair; ``checks``: the rewrite check of
    every input pair (:func:`apply_mitigation`); ``without``/``with_``: the :class:`~ipcausal.Report`
    of each run, ``comparison``: that of :func:`~ipcausal.study.compare.compare` (with, without);
    ``pairs_without``/``pairs_with``: the scored pairs both runs kept.
    """

    mitigation: str
    groups: tuple[MitigationGroup, ...]
    n_pairs: int
    n_failed_check: int
    n_not_undone: int
    n_compared: int
    checks: pd.DataFrame = field(repr=False)
    without: Any = field(repr=False)
    with_: Any = field(repr=False)
    comparison: Any = field(repr=False)
    pairs_without: Any = field(default=None, repr=False)
    pairs_with: Any = field(default=None, repr=False)
    margin: float | None = None
    alpha: float = DEFAULTS["alpha"]
    null_hypothesis: str = ("per background pair, the effects with and without the mitigation are exchangeable "
                            "per pair (each D = Δ_with − Δ_without is symmetric about 0)")
    method: str = "paired sign-flip test of D = Δ_with − Δ_without (ipcausal.study.compare.compare)"

    @property
    def removed(self) -> bool:
        """True when every background pair's effect with the mitigation is shown equivalent to zero."""
        return bool(self.groups) and all(g.removed for g in self.groups)

    def to_dict(self) -> dict[str, Any]:
        return {"mitigation": self.mitigation, "n_pairs": self.n_pairs, "n_failed_check": self.n_failed_check,
                "n_not_undone": self.n_not_undone, "n_compared": self.n_compared, "margin": self.margin,
                "alpha": self.alpha, "removed": self.removed, "null_hypothesis": self.null_hypothesis,
                "method": self.method, "groups": [g.to_dict() for g in self.groups],
                "failed_pairs": self.checks.loc[~self.checks["trusted"], "pair_id"].astype(str).tolist()}

    def __str__(self) -> str:
        lines = [f"Mitigation {self.mitigation!r}: {self.n_compared} of {self.n_pairs} pairs compared "
                 f"({self.n_failed_check} failed the rewrite check and were not trusted; "
                 f"{self.n_not_undone} had a side that could not be rewritten)."]
        for g in self.groups:
            lines.append(f"{g.group}: effect without {g.effect_without:+.3f} (p={g.pvalue_without:.3g}), "
                         f"with {g.effect_with:+.3f} (p={g.pvalue_with:.3g}); change {g.change:+.3f} "
                         f"[{g.change_ci_low:+.3f}, {g.change_ci_high:+.3f}], p={g.change_pvalue:.3g}"
                         f"{' (changed)' if g.change_reject else ' (no change shown)'}.")
            if g.margin is None:
                lines.append("  Removal not assessed: no equivalence margin was given.")
            elif g.removed:
                lines.append(f"  The mitigation removed IP here: the effect with it is shown within ±{g.margin:g}.")
            else:
                lines.append(f"  Not shown removed: the effect with it is {g.equivalence} against ±{g.margin:g} "
                             "(a non-rejection is not removal).")
        return "\n".join(lines)
