"""AmbrQA builder on the real files, the original GlobalOpinionQA format, and the LLM path."""

from __future__ import annotations

import json

import pytest

from _helpers_backends import ScriptedBackend
from ipcausal.builders import build_ambrqa, read_global_opinions
from ipcausal.builders.manifest import Manifest, sha256_of
from ipcausal.interventions import find_markers, swap_markers
from ipcausal.pairs import PairSet

SUBSET = "jiarui-liu-IP/case_1/subjective/source.csv"


@pytest.fixture(scope="module")
def ambrqa(shared_data):
    return build_ambrqa(shared_data / SUBSET, rng=0)


def test_real_subset_yields_825(ambrqa, shared_data):
    ps, man = ambrqa.pairs, ambrqa.manifest
    assert len(ps) == 825
    assert man["counts"]["opinion_questions_read"] == 825 and man["n_skipped"] == 0
    assert man["sources"][0]["sha256"] == sha256_of(shared_data / SUBSET)
    df = ps.to_frame()
    assert set(df.background_i) == {"us"} and set(df.background_j) == {"uk"}
    assert (df.x_i != df.x_j).all()
    assert set(df.source) == {"GAS", "WVS"}
    assert (df.source == "GAS").sum() == 637
    assert set(df.loc[df.source == "GAS", "uk_key"]) == {"Britain"}
    assert set(df.loc[df.source == "WVS", "uk_key"]) == {"Great Britain"}
    assert set(df.generator) <= {"swap_markers", "frame_with_markers"}


def test_metadata_for_scorers(ambrqa):
    df = ambrqa.pairs.to_frame()
    row = df.iloc[3]
    opts = json.loads(row.options)
    us, uk = json.loads(row.dist_us), json.loads(row.dist_uk)
    assert len(opts) == len(us) == len(uk) == row.n_options
    assert row.majority_us == max(range(len(us)), key=us.__getitem__) + 1
    assert row.majority_answer_us == opts[row.majority_us - 1]
    assert row.answer_type == "choice"
    for k, o in enumerate(opts, 1):
        assert f"{k}. " in row.x_i


def test_pairs_differ_only_in_markers(ambrqa):
    exact = 0
    for rec in ambrqa.pairs.records()[:200]:
        there = swap_markers(rec["x_i"], to="uk")  # the British side is the American one, swapped
        assert there is not None and there.text == rec["x_j"]
        back = swap_markers(rec["x_j"], to="us")  # None when every marker came from a one-way pair
        back_text = rec["x_j"] if back is None else back.text
        again = swap_markers(back_text, to="uk")
        assert (back_text if again is None else again.text) == rec["x_j"]  # the British side is reached again
        exact += back_text == rec["x_i"]  # not when a one-way pair was used (soccer -> football)
        assert find_markers(rec["x_i"], "us")  # the American side has markers that read as American
    assert exact >= 100


def test_deterministic_for_a_seed(shared_data):
    a = build_ambrqa(shared_data / SUBSET, limit=30, rng=4).pairs
    b = build_ambrqa(shared_data / SUBSET, limit=30, rng=4).pairs
    c = build_ambrqa(shared_data / SUBSET, limit=30, rng=5).pairs
    assert a == b
    assert a != c
    assert len(a) == 30


ORIGINAL = (
    'question,selections,options,source\n'
    '"Do you approve of the new policy?","defaultdict(<class \'list\'>, {\'Belgium\': [0.5, 0.5], '
    '\'United States\': [0.6, 0.4], \'Britain\': [0.3, 0.7]})","[\'Approve\', \'Disapprove\']",GAS\n'
    '"How important is religion in your life?","defaultdict(<class \'list\'>, {\'United States\': [0.4, 0.3, 0.3], '
    '\'Great Britain\': [0.1, 0.2, 0.7]})","[\'Very\', \'Somewhat\', \'Not at all\']",WVS\n'
    '"Is the economy doing well?","defaultdict(<class \'list\'>, {\'United States\': [0.5, 0.5], '
    '\'Germany\': [0.3, 0.7]})","[\'Yes\', \'No\']",GAS\n'
    '"Broken row","not a dict","[\'Yes\', \'No\']",GAS\n'
    '"Length mismatch?","defaultdict(<class \'list\'>, {\'United States\': [0.5, 0.5], \'Britain\': [1.0]})",'
    '"[\'Yes\', \'No\']",GAS\n'
)


def test_original_globalopinionqa_format(tmp_path):
    f = tmp_path / "global_opinions.csv"
    f.write_text(ORIGINAL, encoding="utf-8")
    man = Manifest("t")
    items = read_global_opinions(f, man)
    assert [it["uk_key"] for it in items] == ["Britain", "Great Britain"]
    assert items[0]["dist_us"] == [0.6, 0.4] and items[0]["dist_uk"] == [0.3, 0.7]
    assert items[0]["majority_us"] == 1 and items[0]["majority_uk"] == 2
    assert items[1]["options"] == ["Very", "Somewhat", "Not at all"]
    assert man.skipped == {"no UK distribution ('Britain' or 'Great Britain')": 1,
                           "unparsable selections or options": 1,
                           "distribution length differs from the number of options": 1}
    res = build_ambrqa(f, rng=0)
    assert len(res.pairs) == 2 and res.manifest["n_skipped"] == 3
    assert res.manifest["checks"]["clean"] == 2 and res.pairs.to_frame().target_features_j.all()
    assert build_ambrqa(f, rng=0, on_problem="flag").pairs == res.pairs
    with pytest.raises(ValueError, match="`on_problem` must be one of"):
        build_ambrqa(f, on_problem="ignore")


def test_malformed_sources(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        read_global_opinions(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="expected a GlobalOpinionQA CSV with columns question, selections, options"):
        read_global_opinions(bad)
    none = tmp_path / "none.csv"
    none.write_text(ORIGINAL.splitlines()[0] + "\n" + ORIGINAL.splitlines()[3] + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no question with both"):
        read_global_opinions(none)


def test_validation(shared_data):
    with pytest.raises(ValueError, match="`limit`"):
        build_ambrqa(shared_data / SUBSET, limit=0)
    with pytest.raises(ValueError, match="`global_opinions`, `stylish` or `backend`"):
        build_ambrqa(None)
    with pytest.raises(ValueError, match="`backend` is required"):
        build_ambrqa(shared_data / SUBSET, factual=True)


def _factual_reply(prompt, req):
    if prompt.startswith("List"):
        return "1. Commuting habits\n2. Sweet treats"
    if prompt.startswith("Write"):
        return "What is the usual way to pay for parking?\nHow much does a snack cost?"
    if "Question:\nWhat is the usual way" in prompt:
        return "Leaving the car park after a long day, what is the usual way to pay for parking?"
    if "Question:\nHow much" in prompt:
        return "How much?"  # no marker: fails validation, is recorded
    if "Question:" in prompt:  # opinion question without markers
        return "Over biscuits with my neighbour: " + prompt.split("Question:\n")[1].split("\n\nRewritten")[0]
    return ""


def test_llm_path_records_failures(tmp_path):
    f = tmp_path / "go.csv"
    f.write_text(ORIGINAL, encoding="utf-8")
    b = ScriptedBackend(_factual_reply)
    res = build_ambrqa(f, backend=b, topics_per_domain=1, questions_per_topic=2, rng=0)
    df = res.pairs.to_frame()
    m = res.manifest
    assert m["counts"]["factual_questions_generated"] == 10
    assert m["skipped"]["compose_with_markers failed validation"] == 5
    assert m["counts"]["factual_pairs"] == 5
    fact = df[df.half == "factual"]
    assert (fact.generator == "compose_with_markers").all()
    assert fact.x_j.str.contains("car park").all() and fact.x_i.str.contains("parking lot").all()
    assert set(fact.domain) == {"economy", "lifestyle", "media & technology", "politics", "social dynamics"}
    op = df[df.half == "opinion"]
    assert len(op) == 2 and set(op.generator) == {"compose_with_markers"}
    assert any(f["stage"] == "compose_with_markers failed validation" for f in m["failures"])
    assert isinstance(res.pairs, PairSet)


def test_stylish_factual_half_offline(shared_data):
    folder = shared_data / "jiarui-liu-IP/case_1/stylish_question_by_domain"
    res = build_ambrqa(stylish=folder)
    m = res.manifest
    assert m["counts"]["stylish_questions_read"] == 825
    assert m["counts"]["stylish_pairs"] + m["n_skipped"] == 825
    assert m["skipped"] == {"UK-styled rewrite has no unambiguous marker to swap": m["n_skipped"]}
    df = res.pairs.to_frame()
    assert (df.half == "factual").all() and (df.generator == "swap_markers").all()
    assert set(df.domain) == {"Lifestyle", "Economy", "Media & Technology", "Social Dynamics"}
    assert {s["name"] for s in m["sources"]} >= {"Lifestyle.csv", "Economy.csv"}
    more = build_ambrqa(stylish=folder, stylish_ambiguous=True).manifest
    assert more["counts"]["stylish_pairs"] > m["counts"]["stylish_pairs"]
    with pytest.raises(ValueError, match="no such directory"):
        build_ambrqa(stylish=folder / "nope")
