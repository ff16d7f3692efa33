"""Farm builder on the real statement files; the statement generation path with a scripted backend."""

from __future__ import annotations

import json

import pytest

from _helpers_backends import ScriptedBackend
from ipcausal.builders import build_farm, read_farm

STATEMENTS = "sirnyls-AutoPersonalizationBench/case3_farm_with_statements"
FARM = "farm-llms-believe-the-earth-is-flat"


@pytest.fixture(scope="module")
def farm(shared_data):
    return build_farm(shared_data / STATEMENTS)


def test_real_files_yield_3704_pairs(farm):
    ps, m = farm.pairs, farm.manifest
    assert len(ps) == 3704
    assert m["counts"]["items"] == 1852
    assert {m["counts"][f"items:{s}"] for s in ("Boolq", "NQ1", "NQ2", "TruthfulQA")} == {466, 463, 464, 459}
    assert m["counts"]["pairs:same"] == m["counts"]["pairs:foreign"] == 1852
    assert len(m["sources"]) == 4 and all(len(s["sha256"]) == 64 for s in m["sources"])
    assert m["counts"]["warning:identical_statements"] == 5


def test_correct_option_kept(farm):
    df = farm.pairs.to_frame()
    assert set(df.background_i) == {"true_belief"} and set(df.background_j) == {"false_belief"}
    boolq = df[df.subset == "Boolq"]
    assert (boolq.answer_type == "yes_no").all()
    assert all(json.loads(o) == ["yes", "no"] for o in boolq.options)
    first = boolq.iloc[0]  # "is the aorta part of the circulatory system?" -> True
    assert first.correct_option == 1
    mcq = df[df.subset != "Boolq"]
    assert (mcq.answer_type == "mcq").all()
    row = df[(df.subset == "NQ2")].iloc[0]  # Brazil has won the most World Cups
    assert json.loads(row.options)[row.correct_option - 1] == "Brazil"
    for r in df.itertuples():
        opts = json.loads(r.options)
        assert 1 <= r.correct_option <= len(opts) == r.n_options
        assert r.correct_option in json.loads(r.correct_options)


def test_prompt_shape(farm):
    r = farm.pairs.records()[0]
    assert r["x_i"].startswith("I believe the following: ")
    assert r["x_i"].split(" Question: ", 1)[1] == r["x_j"].split(" Question: ", 1)[1]
    assert r["pair_id"] == "Boolq:0:same"


def test_truthfulqa_all_correct_options_recorded(shared_data):
    res = build_farm(shared_data / STATEMENTS / "TruthfulQA.jsonl", limit=5)
    for r in res.pairs.records():
        assert len(json.loads(r["correct_options"])) >= 1
        assert r["subset"] == "TruthfulQA"


def test_drop_identical_and_domains(shared_data):
    res = build_farm(shared_data / STATEMENTS, domains=("same",), drop_identical=True)
    assert len(res.pairs) == 1851 and res.manifest["n_skipped"] == 1


def test_original_farm_without_statements_needs_a_backend(shared_data):
    items = read_farm(shared_data / FARM)
    assert len(items) == 1952
    assert all(not it["statements"] for it in items)
    with pytest.raises(ValueError, match="need --backend"):
        build_farm(shared_data / FARM, limit=2)


def test_statement_generation_with_a_backend(shared_data):
    calls = []

    def reply(prompt, req):
        calls.append(prompt)
        if "Which" in prompt and len(calls) % 2 == 0:
            return "no idea"
        return "FALSE: The sky is green at noon.\nTRUE: The sky is blue at noon."

    res = build_farm(shared_data / FARM, backend=ScriptedBackend(reply), limit=2)
    df = res.pairs.to_frame()
    assert (df.statement_source == "llm").all()
    assert len(df) + res.manifest["n_skipped"] == 2 * 4 * 2
    assert df.x_i.str.contains("The sky is blue at noon. Question:").all()


def test_malformed_sources(tmp_path):
    with pytest.raises(ValueError, match="no such file or directory"):
        read_farm(tmp_path / "nope")
    with pytest.raises(ValueError, match="no .jsonl file"):
        read_farm(tmp_path)
    bad = tmp_path / "NQ1.jsonl"
    bad.write_text('{"question": "q"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"NQ1.jsonl:2: not valid JSON"):
        read_farm(tmp_path)
    bad.write_text('{"no_question": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="expected a JSON object with a `question` field"):
        read_farm(tmp_path)


def test_validation(shared_data):
    with pytest.raises(ValueError, match="`domains`"):
        build_farm(shared_data / STATEMENTS, domains=("other",))
    with pytest.raises(ValueError, match="`limit`"):
        build_farm(shared_data / STATEMENTS, limit=-1)
