"""The example pairs a Report carries (``ipcausal.study.examples``): the rule, the orientation, the round trip."""

from __future__ import annotations

import numpy as np

import ipcausal
from ipcausal.report import Section, format_html, format_markdown
from ipcausal.study.examples import EXAMPLE_RULE, MAX_CHARS


def _pairs() -> ipcausal.PairSet:
    recs = []
    for k in range(20):
        forward = k % 3 != 0  # a third stored the other way round (UK first)
        a, b = ("US", "UK") if forward else ("UK", "US")
        score_us, score_uk = 3.0, 3.0 + (k % 5 == 0) * (1 + k / 10)  # the UK side scores higher on five pairs
        recs.append({"pair_id": f"p{k:02d}", "background_i": a, "background_j": b,
                     "x_i": f"{a} prompt {k}", "x_j": f"{b} prompt {k}" + ("!" * 700 if k == 15 else ""),
                     "y_i": f"{a} answer {k}", "y_j": f"{b} answer {k}",
                     "score_i": score_us if forward else score_uk, "score_j": score_uk if forward else score_us})
    return ipcausal.PairSet.from_records(recs)


def test_largest_then_seeded_random_oriented_as_the_group() -> None:
    rep = ipcausal.test(_pairs())
    (g,) = rep.groups
    ex = rep.examples
    assert len(ex) == EXAMPLE_RULE["largest"] + EXAMPLE_RULE["random"]
    top = [e for e in ex if e.rule == "largest |Δ|"]
    # the largest |Δ|: p15 (Δ 2.5) and p10 (Δ 2.0), whichever way they were stored
    assert [e.pair_id for e in top] == ["p15", "p10"]
    for e in ex:
        assert (e.background_a, e.background_b) == (g.background_a, g.background_b)
        assert e.prompt_a.startswith(e.background_a) and e.response_b.startswith(e.background_b)
        assert e.delta == e.score_b - e.score_a
    p15 = top[0]
    long = p15.prompt_a if p15.background_a == "US" else p15.prompt_b  # p15 is stored UK first: x_j is US
    assert len(long) == MAX_CHARS and long.endswith("…")
    again = ipcausal.test(_pairs(), rng=7).examples  # the rule's own seed, not the test's rng
    assert again == ex
    rand = [e for e in ex if e.rule.startswith("random")]
    assert len(rand) == 2 and not {e.pair_id for e in rand} & {e.pair_id for e in top}


def test_similarity_shows_the_least_similar_and_missing_texts_are_none() -> None:
    sims = np.linspace(0.2, 1.0, 12)
    ps = ipcausal.PairSet.from_records({"pair_id": k, "background_i": "a", "background_j": "b", "x_i": "q",
                                        "x_j": "q'", "similarity": float(s)} for k, s in enumerate(sims))
    ex = ipcausal.test(ps).examples
    assert [e.pair_id for e in ex[:2]] == ["0", "1"] and ex[0].rule == "lowest similarity"
    assert ex[0].similarity == sims[0] and ex[0].delta is None and ex[0].response_a is None


def test_round_trip_and_pages_show_them(tmp_path) -> None:
    rep = ipcausal.test(_pairs())
    back = ipcausal.Report.read(rep.write(tmp_path / "r.json"))
    assert back.examples == rep.examples
    page = format_html(Section("s", back))
    assert "Example pairs" in page and "p15" in page and "largest |Δ|" in page
    md = format_markdown(Section("s", back))
    assert "**Example pairs**" in md and "| background | prompt | response | score |" in md
