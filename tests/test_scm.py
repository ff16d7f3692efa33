"""The SCM diamond and intervention specs."""

from __future__ import annotations

import networkx as nx
import pytest

from ipcausal import scm


def test_diamond() -> None:
    g = scm.diamond()
    assert set(g.edges()) == {("X", "S"), ("X", "B"), ("S", "Y"), ("B", "Y")}
    assert nx.is_directed_acyclic_graph(g)
    assert all("meaning" in g.nodes[n] for n in g)
    assert "B has a causal effect on Y" in scm.IP_DEFINITION


def test_adjustment_set_is_semantics() -> None:
    assert scm.adjustment_set() == frozenset({"S"})
    with pytest.raises(ValueError, match="`treatment` must be one of"):
        scm.adjustment_set("Z")


def test_check_intervention() -> None:
    ok = scm.InterventionSpec(name="belief prefix", changes="a stated belief", preserves_semantics_by="same question")
    assert scm.check_intervention(ok) is ok
    bad_cases = [
        (dict(target="S"), "`target` must be 'B'"),
        (dict(holds=("X",)), "`holds` must include 'S'"),
        (dict(holds=("S", "Q")), "`holds` names unknown variable"),
        (dict(holds=("S", "Y")), "cannot hold the outcome"),
        (dict(changes=" "), "`changes` must be a non-empty description"),
    ]
    for changes, match in bad_cases:
        spec = scm.InterventionSpec(**{**dict(name="g", changes="c", preserves_semantics_by="p"), **changes})
        with pytest.raises(ValueError, match=match):
            scm.check_intervention(spec)
    with pytest.raises(TypeError, match="`spec` must be an InterventionSpec"):
        scm.check_intervention("spec")  # type: ignore[arg-type]
