"""The case pipeline end to end with the real local model (SmolLM2-135M via llama.cpp), kept small."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

import ipcausal
from ipcausal.cases import get_case, list_cases
from ipcausal.study.cases import run_case
from ipcausal.cli import main

pytest.importorskip("llama_cpp")  # the other tests here load the local model


@pytest.fixture(scope="module")
def local():
    from ipcausal.backends import get_backend

    b = get_backend("local")
    yield b
    b.close()


def test_the_cases_use_the_one_demo_pairs(tmp_path):
    """``ipcausal case`` and ``ipcausal build demo`` draw on the same builder: SAE / AAE / ESL for education."""
    import ipcausal.study.cases as cases
    from ipcausal.builders import demo_pairs
    from ipcausal.testing import SimulatedModel

    assert not hasattr(cases, "demo_pairs")
    edu = demo_pairs("education", rng=0, limit=20)
    assert set(edu["background_i"]) | set(edu["background_j"]) == {"sae", "aae", "esl"} and len(edu) == 60
    res = run_case("education", SimulatedModel(backgrounds=("sae", "aae", "esl")), out=tmp_path, progress=False)
    answered = ipcausal.PairSet.read(tmp_path / "responses.jsonl")
    assert answered["pair_id"].tolist() == edu["pair_id"].tolist()
    assert answered["x_j"].tolist() == edu["x_j"].tolist()
    assert {g.group for g in res.report.groups} == {"sae vs aae", "sae vs esl", "aae vs esl"}
    assert res.report.correction == "bonferroni"
    with pytest.raises(ValueError, match="`limit` must be a positive integer"):
        run_case("echo", SimulatedModel(), limit=0)


def test_cli_case_echo_end_to_end_and_resume(tmp_path, capsys):
    out = tmp_path / "echo"
    args = ["case", "echo", "--backend", "local", "--limit", "3", "--max-tokens", "8", "--unparseable", "zero", "--out", str(out),
            "--no-progress"]
    rc = main(args)
    first = capsys.readouterr().out
    for name in ("responses.jsonl", "pairs.jsonl", "report.json", "report.md", "report.html", "meta.json"):
        assert (out / name).is_file(), name
    meta = json.loads((out / "meta.json").read_text())
    assert meta["counts"]["requested"] == 6 and meta["counts"]["pairs"] == 3
    assert meta["counts"]["scored"] == 3 and meta["settings"]["unparseable policy"] == "zero"
    report = json.loads((out / "report.json").read_text())
    assert report["report"]["outcome"] == "interval"
    # the exit status and the printed verdict are the ones the written report and counts say
    assert rc == (0 if meta["counts"]["failed"] == 0 else 3)
    verdict = "YES" if report["report"]["ip_detected"] else "no"
    assert f"implicit personalization detected: {verdict}\n" in first
    assert f"report: {out / 'report.html'}" in first
    assert ipcausal.Report.read(out / "report.json").to_dict() == report["report"]
    HTMLParser().feed((out / "report.html").read_text())
    # resume: the second run asks the model nothing
    assert main(args) == rc
    meta2 = json.loads((out / "meta.json").read_text())
    assert meta2["counts"]["from cache"] == 6


def test_run_case_culture_small(local, tmp_path):
    from ipcausal.backends.base import GenerationConfig

    res = run_case("culture", local, limit=2, out=tmp_path, config=GenerationConfig(max_tokens=8), progress=False)
    assert res.report.outcome == "similarity" and res.counts["requested"] == 4
    assert res.pairs["similarity"].between(0, 1).all()
    assert "embedding" in res.settings["scorer"]
    assert res.title.startswith("Cultural adaptation") and res.files["report.json"].endswith("report.json")


def test_run_case_validation(local):
    with pytest.raises(ValueError, match="`case` must be one of"):
        run_case("farm", local)
    with pytest.raises(TypeError, match="`backend` must implement"):
        run_case("echo", object())
    assert [c.name for c in list_cases()][:3] == ["culture", "education", "echo"]


class RuleModel:
    """A small deterministic model behind the real BackendBase machinery (fast, for the judge paths)."""

    @staticmethod
    def make():
        from ipcausal.backends.base import BackendBase, Choice, Response

        class _M(BackendBase):
            kind, model = "rules", "rule-model"

            def _outcomes(self, requests, on_result, concurrency):
                outs = []
                for i, req in enumerate(requests):
                    text = req.messages[-1]["content"]
                    if "Rating" in text:
                        reply = "Rating: 4" if "Essay:" not in text else f"Rating: {2 + len(text) % 4}"
                    elif "Question:" in text:
                        reply = "Option 2" if "false" not in text.lower() else "1"
                    elif "essay" in text.lower():
                        reply = ("I agree because it helps. However, it costs money. " * (1 + len(text) % 3)).strip()
                    else:
                        reply = "Take the underground." if "colour" in text or "flat" in text else "Use the subway."
                    out = Response((Choice(reply),), self.model)
                    on_result(i, out)
                    outs.append(out)
                return outs

        return _M()


def test_run_case_with_judges_all_cases(tmp_path):
    model, judge = RuleModel.make(), RuleModel.make()
    edu = run_case("education", model, scorer=get_case("education").scorer_for(given=False, judge=judge), limit=4,
                   out=tmp_path / "edu", progress=False)
    assert "rubric" in edu.settings["scorer"] and edu.report.outcome == "interval"
    assert {g.group for g in edu.report.groups} == {"sae vs aae", "sae vs esl", "aae vs esl"}
    cul = run_case("culture", model, scorer=get_case("culture").scorer_for(given=False, judge=judge), limit=6,
                   progress=False)
    assert cul.pairs["similarity"].tolist() == [0.75] * len(cul.pairs)
    echo = run_case("echo", model, limit=10, progress=False, scorer=get_case("echo").scorer_for(False, judge=judge))
    assert echo.counts["unparseable"] == 0 and echo.counts["scored"] == 10
    # run_case writes report.json; rendering is the report layer's (what `ipcausal case` calls)
    assert (tmp_path / "edu" / "report.json").is_file() and not (tmp_path / "edu" / "report.html").exists()
    from ipcausal.report import write_case_reports

    written = write_case_reports(edu)
    assert (tmp_path / "edu" / "report.html").is_file() and "dropped" not in edu.files
    assert written["education/report.html"] == tmp_path / "edu" / "report.html"
    assert main(["report", str(tmp_path / "edu"), "-o", str(tmp_path / "r.md")]) == 0
    md = (tmp_path / "r.md").read_text()
    assert "aae vs esl" in md and edu.title in md  # rendered from the folder's report.json, title kept


def test_a_case_cue_column_is_used_when_the_pairs_have_it() -> None:
    from ipcausal.cases import get_case
    from ipcausal.study.cases import case_test_options

    culture = get_case("culture")
    demo = culture.demo.load(0, 5)
    assert culture.tests.design.strata == "cue_kind" and "cue_kind" in demo
    options, note = case_test_options(culture, demo)
    assert options["design"].strata == "cue_kind" and note is None
    bare = ipcausal.PairSet.from_frame(demo.to_frame().drop(columns=["cue_kind"]))
    options, note = case_test_options(culture, bare)
    assert options["design"].strata is None and note == ("not run: the pairs have no `cue_kind` column (build them again to "
                                                "record it)")
