"""The structural causal model of implicit personalization (SPEC §2).

Four variables: ``X`` (input text), ``S`` (its semantics), ``B`` (the user background the
model may infer) and ``Y`` (the response), with edges X→S, X→B, S→Y, B→Y (a diamond).
Implicit personalization (IP) is a causal effect of B on Y.  B cannot be set inside a
model, so an *indirect intervention* edits X so that B changes and S is held fixed; a
generator declares this with an :class:`InterventionSpec` and :func:`check_intervention`
verifies the declaration against the graph.

Examples
--------
>>> from ipcausal import scm
>>> sorted(scm.diamond().edges())
[('B', 'Y'), ('S', 'Y'), ('X', 'B'), ('X', 'S')]
>>> spec = scm.InterventionSpec(name="markers", changes="culture-marker words",
...                             preserves_semantics_by="one-to-one word substitution")
>>> scm.check_intervention(spec).target
'B'
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

__all__ = ["NODES", "ESTIMAND", "IP_DEFINITION", "diamond", "InterventionSpec", "check_intervention", "adjustment_set"]

NODES: dict[str, str] = {
    "X": "the input text (prompt)",
    "S": "the semantics of the input",
    "B": "the user background the model may infer from the input",
    "Y": "the model's response",
}

IP_DEFINITION = (
    "Implicit personalization takes place iff B has a causal effect on Y: there are backgrounds "
    "b0 != b1 with P(Y | do(B=b0)) != P(Y | do(B=b1))."
)

ESTIMAND = (
    "The contrast between P(Y | do(B=b_j)) and P(Y | do(B=b_i)), estimated from paired inputs "
    "(x_i, x_j) with equal semantics (S held fixed) and backgrounds b_i, b_j."
)


def diamond() -> nx.DiGraph:
    """The SCM as a networkx DiGraph: X→S, X→B, S→Y, B→Y (node attribute ``meaning``)."""
    g = nx.DiGraph()
    for node, meaning in NODES.items():
        g.add_node(node, meaning=meaning)
    g.add_edges_from([("X", "S"), ("X", "B"), ("S", "Y"), ("B", "Y")])
    return g


def adjustment_set(treatment: str = "B", outcome: str = "Y") -> frozenset[str]:
    """The variables to hold fixed so that the effect of ``treatment`` on ``outcome`` is identified.

    In the diamond, X→S→Y is a back-door path from B to Y through X; holding S blocks it
    (and S is not a descendant of B), which is why a generator must keep the semantics.
    """
    g = diamond()
    for name, value in (("treatment", treatment), ("outcome", outcome)):
        if value not in g:
            raise ValueError(f"`{name}` must be one of {sorted(g)}, got {value!r}")
    candidate = frozenset({"S"} - {treatment, outcome})
    # verify with d-separation in the graph with the treatment's outgoing edges removed
    cut = g.copy()
    cut.remove_edges_from(list(g.out_edges(treatment)))
    if not nx.is_d_separator(cut, {treatment}, {outcome}, set(candidate)):
        raise ValueError(f"no valid adjustment set for {treatment}->{outcome} in the diamond")
    return candidate


@dataclass(frozen=True)
class InterventionSpec:
    """What a paired-sample generator claims about itself.

    Parameters
    ----------
    name : str
        The generator's name.
    changes : str
        What the generator edits in X (e.g. "culture-marker words").
    preserves_semantics_by : str
        How S is kept fixed, and the evidence recorded (e.g. "embedding similarity >= 0.8").
    target : str
        The variable intervened on; must be ``"B"``.
    holds : tuple of str
        Variables held fixed; must include ``"S"``.
    """

    name: str
    changes: str
    preserves_semantics_by: str
    target: str = "B"
    holds: tuple[str, ...] = ("S",)


def check_intervention(spec: InterventionSpec) -> InterventionSpec:
    """Validate that ``spec`` describes an indirect intervention on B that holds S.

    Returns the spec unchanged, or raises ``ValueError`` naming what is wrong.
    """
    if not isinstance(spec, InterventionSpec):
        raise TypeError(f"`spec` must be an InterventionSpec, got {type(spec).__name__}")
    g = diamond()
    for field_name in ("name", "changes", "preserves_semantics_by"):
        value = getattr(spec, field_name)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"`{field_name}` must be a non-empty description")
    if spec.target != "B":
        raise ValueError(f"`target` must be 'B' (the background); got {spec.target!r}")
    unknown = [h for h in spec.holds if h not in g]
    if unknown:
        raise ValueError(f"`holds` names unknown variable(s) {unknown}; the SCM has {sorted(g)}")
    if "S" not in spec.holds:
        raise ValueError("`holds` must include 'S': an intervention that changes the semantics breaks the design")
    if "Y" in spec.holds or "B" in spec.holds:
        raise ValueError("`holds` cannot hold the outcome 'Y' or the target 'B'")
    return spec
