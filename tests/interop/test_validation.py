"""The human-validation round trip: a blinded sheet out, raters' sheets back, agreement checked against sklearn."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from ipcausal.cli import main
from ipcausal.interop import cohen_kappa, export_validation, import_validation
from ipcausal.pairs import PairSet

SRC = [
    ("She is always working late.", "She be working late."),
    ("He is not going anywhere.", "He ain't going nowhere."),
    ("They have finished the work.", "They done finished the work."),
    ("There is a bus at 7 on Main Street.", "It's a bus at 7 on Main Street."),
    ("My brother works at the bank.", "My brother work at the bank."),
    ("We were at home on Sunday.", "We was at home on Sunday."),
    ("Is the shop open on Monday?", "The shop be open on Monday?"),
    ("Nobody told me anything.", "Nobody ain't told me nothing."),
]


def _pairs(n: int = len(SRC)) -> PairSet:
    return PairSet.from_records([{"pair_id": f"p{k}", "background_i": "sae", "background_j": "aae", "x_i": a,
                                  "x_j": b, "prompt_id": f"q{k}"} for k, (a, b) in enumerate(SRC[:n])])


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _fill(sheet: Path, out: Path, answers: dict[str, tuple[str, str, str]], ps: PairSet) -> Path:
    """A rater's copy: `answers` maps pair_id -> (same_meaning, 'target'|'other'|'both'|'neither'|'', comment)."""
    by_text = {r["x_j"]: r["pair_id"] for r in ps.records()}
    rows = _read(sheet)
    for row in rows:
        pid = by_text.get(row["text_a"]) or by_text[row["text_b"]]
        meaning, pick, comment = answers.get(pid, ("", "", ""))
        target_letter = "A" if row["text_a"] in by_text else "B"
        other_letter = "B" if target_letter == "A" else "A"
        row["same_meaning"] = meaning
        row["sounds_like_target"] = {"target": target_letter, "other": other_letter}.get(pick, pick)
        row["comment"] = comment
    rows.reverse()  # raters may sort their sheet: rows are matched by item number
    with open(out, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return out


def test_sheet_is_blinded_seeded_and_keyed(tmp_path: Path) -> None:
    ps = _pairs()
    sheet, key = export_validation(ps, tmp_path / "sheet.csv", rng=7)
    rows = _read(sheet)
    assert list(rows[0]) == ["item", "target_variety", "text_a", "text_b", "same_meaning", "sounds_like_target",
                             "comment"]
    assert len(rows) == len(ps) and [r["item"] for r in rows] == [str(k) for k in range(1, len(ps) + 1)]
    assert {r["target_variety"] for r in rows} == {"African-American English"}
    # nothing on the sheet says which text is the source: no pair ids, no backgrounds, both orders occur
    text = sheet.read_text(encoding="utf-8")
    assert "p0" not in text and "sae" not in text and "aae" not in text
    firsts = [r["text_a"] in {b for _, b in SRC} for r in rows]
    assert any(firsts) and not all(firsts)
    k = json.loads(key.read_text())
    assert key.name == "sheet.key.json" and k["sheet"] == "sheet.csv" and len(k["items"]) == len(ps)
    assert [it["a"] == "j" for it in k["items"]] == firsts
    # the same seed gives the same sheet; the recorded seed reproduces it too
    again, _ = export_validation(ps, tmp_path / "again.csv", rng=7)
    assert again.read_text() == text
    # the recorded seed is the one that drew the side order
    drawn = np.random.default_rng(k["seed"]).integers(0, 2, size=len(ps)).astype(bool)
    assert drawn.tolist() == firsts


def test_one_rater_flags_rejections_and_drop_removes_them(tmp_path: Path) -> None:
    ps = _pairs()
    sheet, key = export_validation(ps, tmp_path / "sheet.csv", rng=1)
    answers = {"p0": ("yes", "target", ""), "p1": ("no", "target", "negation changed"), "p2": ("yes", "other", ""),
               "p3": ("Y", "both", ""), "p4": ("yes", "", "")}
    rated = _fill(sheet, tmp_path / "rater1.csv", answers, ps)
    res = import_validation(rated, ps, key=key)
    df = res.pairs.to_frame().set_index("pair_id")
    assert df.loc["p0", "validation"] == "ok" and df.loc["p0", "rating_variety_1"] is True
    assert df.loc["p0", "rating_choice_1"] == "j"
    assert df.loc["p1", "validation"] == "rejected" and "meaning changed (rater 1)" in df.loc["p1", "validation_problems"]
    assert df.loc["p1", "rating_comment_1"] == "negation changed"
    assert df.loc["p2", "validation"] == "rejected" and df.loc["p2", "rating_choice_1"] == "i"
    assert df.loc["p3", "validation"] == "rejected" and "both" in df.loc["p3", "validation_problems"]
    assert df.loc["p4", "validation"] == "unrated" and df.loc["p5", "validation"] == "unrated"
    assert (res.n_ok, res.n_rejected, res.n_unrated, res.n_dropped) == (1, 3, 4, 0)
    assert res.agreement == ()  # one rater: nothing to agree on
    kept = import_validation(rated, ps, key=key, drop=True)
    assert sorted(kept.pairs["pair_id"]) == ["p0", "p4", "p5", "p6", "p7"] and kept.n_dropped == 3
    # the default key is found beside the sheet it was written for
    same = import_validation([sheet], ps)
    assert same.n_unrated == len(ps)


def test_two_raters_agreement_matches_sklearn_and_statsmodels(tmp_path: Path) -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    from statsmodels.stats.inter_rater import cohens_kappa, to_table

    ps = _pairs()
    sheet, key = export_validation(ps, tmp_path / "sheet.csv", rng=3)
    m1 = ["yes", "yes", "no", "yes", "yes", "no", "yes", "yes"]
    m2 = ["yes", "no", "no", "yes", "yes", "yes", "yes", "no"]
    v1 = ["target", "target", "other", "target", "neither", "target", "target", "target"]
    v2 = ["target", "other", "other", "target", "target", "target", "target", "target"]
    r1 = _fill(sheet, tmp_path / "a.csv", {f"p{k}": (m1[k], v1[k], "") for k in range(8)}, ps)
    r2 = _fill(sheet, tmp_path / "b.csv", {f"p{k}": (m2[k], v2[k], "") for k in range(8)}, ps)
    res = import_validation([r1, r2], ps, key=key)
    got = {a.question: a for a in res.agreement}
    assert set(got) == {"meaning", "variety"}
    yes1, yes2 = [m == "yes" for m in m1], [m == "yes" for m in m2]
    ok1, ok2 = [v == "target" for v in v1], [v == "target" for v in v2]
    for q, a, b in (("meaning", yes1, yes2), ("variety", ok1, ok2)):
        g = got[q]
        assert (g.rater_a, g.rater_b, g.n) == (1, 2, 8)
        assert g.agreement == pytest.approx(np.mean(np.equal(a, b)))
        assert g.kappa == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b), abs=1e-12)
        table = to_table(np.column_stack([np.array(a, int), np.array(b, int)]), bins=2)[0]
        assert g.kappa == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)
    # hand check on the meaning question: p_o = 5/8; p_e = (6/8)(5/8) + (2/8)(3/8) = 36/64
    assert got["meaning"].kappa == pytest.approx((5 / 8 - 36 / 64) / (1 - 36 / 64))
    # a pair is rejected when either rater rejects it
    df = res.pairs.to_frame().set_index("pair_id")
    assert df.loc["p1", "validation"] == "rejected" and "rater 2" in df.loc["p1", "validation_problems"]
    assert df.loc["p0", "validation"] == "ok"
    assert "Cohen's kappa" in res.summary() and res.to_dict()["n_rejected"] == res.n_rejected


def test_cohen_kappa_against_sklearn_on_random_labels() -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(2, 40))
        a = list(rng.choice(["x", "y", "z"], size=n, p=[0.5, 0.3, 0.2]))
        b = [v if rng.random() < 0.6 else str(rng.choice(["x", "y", "z"])) for v in a]
        want = cohen_kappa_score(a, b)
        got = cohen_kappa(a, b)
        assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, abs=1e-12)
    assert math.isnan(cohen_kappa(["yes"] * 4, ["yes"] * 4))  # undefined: one label throughout
    assert cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)


def test_cohen_kappa_validates() -> None:
    with pytest.raises(ValueError, match=r"`a` and `b` must have the same length"):
        cohen_kappa([1, 2], [1])
    with pytest.raises(ValueError, match=r"`a` and `b` need at least one item"):
        cohen_kappa([], [])
    with pytest.raises(TypeError, match=r"`a` and `b` must be sequences of labels"):
        cohen_kappa("ab", "ab")


def test_bad_sheets_and_keys_are_named(tmp_path: Path) -> None:
    ps = _pairs(3)
    sheet, key = export_validation(ps, tmp_path / "sheet.csv", rng=0)
    rows = _read(sheet)

    def write(name: str, rows: list[dict[str, str]]) -> Path:
        p = tmp_path / name
        with open(p, "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        return p

    edited = [dict(r) for r in rows]
    edited[1]["text_a"] = "something else"
    with pytest.raises(ValueError, match=r"edited.csv:3: the texts of item 2 differ"):
        import_validation(write("edited.csv", edited), ps, key=key)
    bad = [dict(r) for r in rows]
    bad[0]["same_meaning"] = "maybe"
    with pytest.raises(ValueError, match=r"bad.csv:2: `same_meaning` must be yes or no"):
        import_validation(write("bad.csv", bad), ps, key=key)
    bad = [dict(r) for r in rows]
    bad[0]["sounds_like_target"] = "C"
    with pytest.raises(ValueError, match=r"`sounds_like_target` must be A, B, both or neither"):
        import_validation(write("bad2.csv", bad), ps, key=key)
    extra = [dict(r) for r in rows] + [dict(rows[0], item="9")]
    with pytest.raises(ValueError, match=r"item 9 is not in the key"):
        import_validation(write("extra.csv", extra), ps, key=key)
    twice = [dict(r) for r in rows] + [dict(rows[0])]
    with pytest.raises(ValueError, match=r"item 1 appears twice"):
        import_validation(write("twice.csv", twice), ps, key=key)
    with pytest.raises(ValueError, match=r"`key`: no such file"):
        import_validation(write("rater.csv", rows), ps)
    (tmp_path / "notkey.json").write_text("{}")
    with pytest.raises(ValueError, match=r"`key`: .* is not a validation key"):
        import_validation(sheet, ps, key=tmp_path / "notkey.json")
    with pytest.raises(ValueError, match=r"`pairs`: the key names pair\(s\) \['p2'\]"):
        import_validation(sheet, ps.head(2), key=key)
    (tmp_path / "cols.csv").write_text("item,text_a\n1,x\n")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['target_variety', 'text_b'"):
        import_validation(tmp_path / "cols.csv", ps, key=key)
    with pytest.raises(ValueError, match=r"`out`: the rating sheet is written as .csv"):
        export_validation(ps, tmp_path / "sheet.xlsx")
    with pytest.raises(TypeError, match=r"`varieties` must map"):
        export_validation(ps, tmp_path / "v.csv", varieties={"aae": 3})
    with pytest.raises(TypeError, match=r"`rng` must be None"):
        export_validation(ps, tmp_path / "v.csv", rng="x")
    with pytest.raises(TypeError, match=r"`drop` must be True or False"):
        import_validation(sheet, ps, key=key, drop="yes")
    with pytest.raises(TypeError, match=r"`sheets` must be a path"):
        import_validation([], ps, key=key)
    with pytest.raises(TypeError, match=r"`pairs` must be a PairSet or a path"):
        export_validation(42, tmp_path / "v.csv")
    with pytest.raises(TypeError, match=r"`out` must be a path"):
        export_validation(ps, None)
    with pytest.raises(TypeError, match=r"`key` must be a path"):
        import_validation(sheet, ps, key=3)


def test_cli_round_trip_with_two_raters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ps = _pairs()
    src = ps.write(tmp_path / "pairs.jsonl")
    assert main(["export", "validation", str(src), "-o", str(tmp_path / "sheet.csv"), "--seed", "5"]) == 0
    sheet = tmp_path / "sheet.csv"
    ans = {f"p{k}": ("yes", "target", "") for k in range(8)}
    r1 = _fill(sheet, tmp_path / "r1.csv", ans, ps)
    r2 = _fill(sheet, tmp_path / "r2.csv", {**ans, "p3": ("no", "target", "")}, ps)
    out = tmp_path / "validated.jsonl"
    capsys.readouterr()
    assert main(["import", "validation", str(r1), str(r2), "--pairs", str(src), "--key",
                 str(tmp_path / "sheet.key.json"), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "7 ok, 1 rejected, 0 unrated" in printed and "meaning: raters 1 and 2, n = 8, agreement 0.875" in printed
    back = PairSet.read(out)
    assert len(back) == 8 and list(back["validation"]).count("rejected") == 1
    assert main(["import", "validation", str(r1), str(r2), "--pairs", str(src), "--key",
                 str(tmp_path / "sheet.key.json"), "-o", str(out), "--drop", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["n_dropped"] == 1 and len(PairSet.read(out)) == 7
    assert main(["import", "validation", str(r1), "--pairs", str(src), "-o", str(out)]) == 2
    assert "`key`: no such file" in capsys.readouterr().err
