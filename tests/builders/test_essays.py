"""Essays builder, the demo sets, and the manifest."""

from __future__ import annotations

import json

import pytest

from _helpers_backends import ScriptedBackend
from ipcausal.builders import DEMO_SETS, build_demo, build_essays, demo_pairs, load_demo, read_prompts
from ipcausal.builders.manifest import manifest_path_for
from ipcausal.interventions import swap_markers
from ipcausal.pairs import PairSet

PROMPTS = [
    "Should cities spend more money on public libraries? Explain your position with examples.",
    "Many people believe that students learn more in small classes. Do you agree or disagree?",
    "Is it better to work for a large company or a small one? Support your answer with reasons.",
]


@pytest.fixture()
def prompt_file(tmp_path):
    f = tmp_path / "prompts.jsonl"
    f.write_text("".join(json.dumps({"id": f"p{i}", "prompt": p}) + "\n" for i, p in enumerate(PROMPTS)),
                 encoding="utf-8")
    return f


def test_read_prompts_formats(tmp_path, prompt_file):
    assert [p["prompt_id"] for p in read_prompts(prompt_file)] == ["p0", "p1", "p2"]
    txt = tmp_path / "p.txt"
    txt.write_text("\n".join(PROMPTS) + "\n\n", encoding="utf-8")
    assert [p["prompt_id"] for p in read_prompts(txt)] == ["0", "1", "2"]
    csvf = tmp_path / "p.csv"
    csvf.write_text("index,prompt\n7,\"" + PROMPTS[0] + "\"\n", encoding="utf-8")
    assert read_prompts(csvf) == [{"prompt_id": "7", "prompt": PROMPTS[0]}]
    with pytest.raises(ValueError, match="no such file"):
        read_prompts(tmp_path / "missing.jsonl")
    (tmp_path / "x.pdf").write_text("x")
    with pytest.raises(ValueError, match="unknown prompt file type"):
        read_prompts(tmp_path / "x.pdf")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "x"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="no prompt field"):
        read_prompts(bad)


def test_esl_rules_offline_and_seeded(prompt_file):
    a = build_essays(prompt_file, styles="esl", esl_rules=True, rng=3)
    b = build_essays(prompt_file, styles="esl", esl_rules=True, rng=3)
    c = build_essays(prompt_file, styles="esl", esl_rules=True, rng=4)
    assert a.pairs == b.pairs and a.pairs != c.pairs
    df = a.pairs.to_frame()
    assert len(df) == 3 and set(df.background_i) == {"sae"} and set(df.background_j) == {"esl"}
    assert (df.style_i == "sae").all() and (df.style_j == "esl").all()
    assert all(len(json.loads(e)) == 3 for e in df.edits_j)
    assert df.x_i.str.startswith("Write an essay of 300 to 350 words").all()
    assert a.manifest["settings"]["esl_rules"] is True


def test_all_style_pairs_with_a_backend(prompt_file):
    def reply(prompt, req):
        text = prompt.split("Prompt:\n")[1].split("\n\nRewritten")[0]
        if "African-American" in prompt:
            if "small classes" in text:
                return text  # unchanged -> fails every attempt, recorded
            return text.replace("Should", "Do y'all think").replace("Is it", "Is it really")
        return (text.replace("Should", "Should the").replace("Many people", "Many peoples")
                .replace("Is it better", "Is it more better"))

    res = build_essays(prompt_file, backend=ScriptedBackend(reply), rng=0)
    df = res.pairs.to_frame()
    assert set(zip(df.style_i, df.style_j)) == {("sae", "aae"), ("sae", "esl"), ("aae", "esl")}
    assert len(df) == 3 + 3 + 3 - 2  # p1 has no AAE: its sae-aae and aae-esl pairs are missing
    m = res.manifest
    assert m["skipped"]["style_transfer:aae failed validation"] == 1
    assert m["skipped"]["pair sae-aae incomplete (a rewrite failed)"] == 1
    assert any(f["item"] == "p1:aae" for f in m["failures"])


def test_backend_required(prompt_file):
    with pytest.raises(ValueError, match="need a `backend`"):
        build_essays(prompt_file, styles="aae")
    with pytest.raises(ValueError, match="`styles`"):
        build_essays(prompt_file, styles="pirate", esl_rules=True)
    with pytest.raises(ValueError, match="`limit`"):
        build_essays(prompt_file, styles="esl", esl_rules=True, limit=0)


# --------------------------------------------------------------------------- demo sets
def test_demo_set_sizes_and_fields():
    culture, essays, farm = load_demo("culture"), load_demo("education"), load_demo("echo")
    assert len(culture) >= 60 and len(essays) >= 30 and len(farm) >= 40
    assert all(swap_markers(q["question"], to="uk") is not None for q in culture)
    for it in farm:
        assert 1 <= it["correct_option"] <= len(it["options"])
        assert it["true_statement"] != it["false_statement"]
    assert len({e["prompt"] for e in essays}) == len(essays)


@pytest.mark.parametrize("name", DEMO_SETS)
def test_demo_pairs(name):
    ps = demo_pairs(name, rng=0)
    assert isinstance(ps, PairSet) and len(ps) >= 30
    assert ps == demo_pairs(name, rng=0)
    df = ps.to_frame()
    assert (df.x_i != df.x_j).all()


def test_demo_pairs_columns_for_scorers():
    echo = demo_pairs("echo").to_frame()
    assert {"options", "correct_option", "subset", "domain", "answer_type"} <= set(echo.columns)
    culture = demo_pairs("culture").to_frame()
    assert len(culture) == len(load_demo("culture"))
    assert {"options", "answer_type", "markers"} <= set(culture.columns)
    edu = demo_pairs("education", rng=1).to_frame()
    assert len(edu) == 3 * len(load_demo("education"))  # sae-aae, sae-esl, aae-esl per prompt
    assert {"prompt_id", "style_i", "style_j", "check_problems", "features_j", "target_features_j"} <= set(edu.columns)
    assert demo_pairs("essays", rng=1) == demo_pairs("education", rng=1)


def test_demo_validation():
    with pytest.raises(ValueError, match="`name`"):
        demo_pairs("nope")
    with pytest.raises(TypeError, match="`name`"):
        demo_pairs(3)


def test_manifest_written_next_to_output(tmp_path):
    res = build_demo("echo")
    out, man = res.write(tmp_path / "echo.jsonl")
    assert man == manifest_path_for(out) == tmp_path / "echo.manifest.json"
    data = json.loads(man.read_text())
    assert data["output"]["n_pairs"] == len(res.pairs) and len(data["output"]["sha256"]) == 64
    assert data["builder"] == "demo:echo" and data["counts"]["pairs"] == len(res.pairs)
    assert PairSet.read(out) == res.pairs
