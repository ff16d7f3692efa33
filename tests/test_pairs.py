"""PairSet validation and file round trips (real files: JSONL, CSV, Parquet)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ipcausal import PairSet


def base(n: int = 3, **extra) -> list[dict]:
    rows = []
    for k in range(n):
        row = {"pair_id": f"p{k}", "background_i": "US", "background_j": "UK", "x_i": f"color {k}",
               "x_j": f"colour {k}", "y_i": f"answer, \"quoted\"\nline {k}", "y_j": None, "model": "m"}
        row.update({c: (v[k] if isinstance(v, list) else v) for c, v in extra.items()})
        rows.append(row)
    return rows


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_round_trip(tmp_path, suffix: str) -> None:
    ps = PairSet.from_records(base(score_i=[1.0, 2.5, 3.0], score_j=[2.0, 2.0, 0.0], extra_meta=["a", "b", "NA"]))
    path = ps.write(tmp_path / f"pairs{suffix}")
    back = PairSet.read(path)
    assert back.records() == ps.records()
    np.testing.assert_array_equal(back.deltas, [1.0, -0.5, -3.0])


def test_pair_id_stored_as_text_and_unicode(tmp_path) -> None:
    rows = base(similarity=0.5)
    rows[0]["pair_id"] = 7
    rows[1]["x_j"] = "Ünïcödé — colour"
    ps = PairSet.from_records(rows)
    assert ps["pair_id"].tolist()[0] == "7"
    assert PairSet.read(ps.write(tmp_path / "u.jsonl")).records() == ps.records()


def test_outcome_property_and_repr() -> None:
    assert PairSet.from_records(base()).outcome is None
    assert PairSet.from_records(base(similarity=0.9)).outcome == "similarity"
    assert PairSet.from_records(base(score_i=1, score_j=2)).outcome == "interval"
    assert "outcome='interval'" in repr(PairSet.from_records(base(score_i=1, score_j=2)))


def test_derivations() -> None:
    ps = PairSet.from_records(base(n=4, score_i=1, score_j=[1, 2, 3, 4]))
    assert len(ps.filter(ps.deltas > 0)) == 3
    assert len(ps.head(2)) == 2
    assert "score_i" not in ps.drop_columns("score_i", "score_j")
    assert ps.with_columns(similarity=0.3).outcome == "both"
    other = PairSet.from_records([{**r, "pair_id": r["pair_id"] + "x"} for r in base(n=4, score_i=1, score_j=2)])
    assert len(PairSet.concat([ps, other])) == 8
    frame = ps.to_frame()
    frame.loc[0, "x_i"] = "changed"
    assert ps["x_i"][0] != "changed"  # to_frame is a copy


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d.drop(columns=["x_j"]), r"missing required column\(s\) `x_j`"),
        (lambda d: d.assign(pair_id=["a", "a", "b"]), r"column `pair_id` has duplicate values \['a'\] at row\(s\) 0, 1"),
        (lambda d: d.assign(pair_id=[None, "a", "b"]), "column `pair_id` has missing values"),
        (lambda d: d.assign(background_j="US"), "must differ within a pair"),
        (lambda d: d.assign(background_i=[" ", "US", "US"]), "column `background_i` has empty backgrounds"),
        (lambda d: d.assign(x_i=[1, "a", "b"]), "column `x_i` must hold text"),
        (lambda d: d.assign(y_i=[1, "a", "b"]), "column `y_i` must hold text or be missing"),
        (lambda d: d.assign(score_i=1.0), "`score_i` and `score_j` come together"),
        (lambda d: d.assign(score_i=[1, "x", 2], score_j=1), "column `score_i` must be numeric"),
        (lambda d: d.assign(score_i=[1, np.inf, 2], score_j=1), "column `score_i` must be finite"),
        (lambda d: d.assign(score_i=[1, np.nan, 2], score_j=1), r"must be finite .* bad at row\(s\) 1"),
        (lambda d: d.assign(similarity=[0.5, 1.2, -0.1]), r"`similarity` must lie in \[0, 1\]; outside at row\(s\) 1, 2"),
        (lambda d: d.assign(similarity=[True, False, True]), "column `similarity` must be numeric"),
    ],
)
def test_validation_messages(mutate, match: str) -> None:
    frame = pd.DataFrame(base())
    with pytest.raises(ValueError, match=match):
        PairSet.from_frame(mutate(frame))


def test_type_errors_and_files(tmp_path) -> None:
    with pytest.raises(TypeError, match="`frame` must be a pandas DataFrame"):
        PairSet([1, 2])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="`records` must be an iterable of mappings"):
        PairSet.from_records([1, 2])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="unknown file type '.txt'"):
        PairSet.from_records(base()).write(tmp_path / "x.txt")
    with pytest.raises(ValueError, match=r"`path`: .*missing.jsonl does not exist"):
        PairSet.read(tmp_path / "missing.jsonl")
    with pytest.raises(ValueError, match=r"`path`: .*nope.json does not exist"):  # not "unknown file type"
        PairSet.read(tmp_path / "nope.json")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pair_id": 1}\n{oops\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not valid JSON"):
        PairSet.read(bad)
    with pytest.raises(ValueError, match="`n` must be a non-negative integer"):
        PairSet.from_records(base()).head(-1)
    with pytest.raises(ValueError, match="`mask` must have shape"):
        PairSet.from_records(base()).filter([True])
    with pytest.raises(ValueError, match="cannot drop required"):
        PairSet.from_records(base()).drop_columns("x_i")


def test_write_is_atomic(tmp_path) -> None:
    ps = PairSet.from_records(base())
    path = ps.write(tmp_path / "a.jsonl")
    assert [p.name for p in tmp_path.iterdir()] == ["a.jsonl"]  # no temporary left behind
    assert path.read_text().count("\n") == 3


def test_written_file_has_umask_permissions(tmp_path) -> None:
    import os
    import stat

    mask = os.umask(0o022)
    try:
        path = PairSet.from_records(base()).write(tmp_path / "perm.csv")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_pair_groups_matches_a_loop_over_rows() -> None:
    rng = np.random.default_rng(3)
    bgs, models = ["US", "UK", "IN", "NG", "Ünï"], ["m1", "m0", None]
    rows = []
    for k in range(500):
        i, j = rng.choice(len(bgs), 2, replace=False)
        rows.append({"pair_id": k, "background_i": bgs[i], "background_j": bgs[j], "x_i": "a", "x_j": "b",
                     "model": models[rng.integers(0, 3)]})
    expected: dict[tuple, list[int]] = {}
    for pos, r in enumerate(rows):  # the brute-force oracle
        lo, hi = sorted((r["background_i"], r["background_j"]))
        expected.setdefault((r["model"], lo, hi), []).append(pos)
    got = PairSet.from_records(rows).pair_groups()
    assert [(m, lo, hi) for m, lo, hi, _, _ in got] == sorted(expected, key=lambda t: (t[0] is None, t[0] or "", t[1], t[2]))
    for m, lo, hi, idx, fwd in got:
        assert idx.tolist() == expected[(m, lo, hi)]
        assert fwd == sum(rows[p]["background_i"] == lo for p in idx)
    no_model = PairSet.from_records([{k: v for k, v in r.items() if k != "model"} for r in rows]).pair_groups()
    assert {m for m, *_ in no_model} == {None} and sum(len(idx) for _, _, _, idx, _ in no_model) == 500


@pytest.mark.parametrize("extra", [
    {},
    {"score_i": [1, 2, 3], "score_j": [0.5, 2, 1]},  # ints and floats in one outcome
    {"samples_i": [["a", "b"], ["c"], []], "meta_n": [1, None, 3]},  # lists; ints with a gap
    {"when": ["2024-01-02T03:04:05", "2024-01-03T00:00:00", "2024-01-04T00:00:00"]},  # pyarrow would make timestamps
    {"nested": [{"k": 1}, {"k": 2, "j": "x"}, None]},  # objects: the Python reader
    {"flag": [True, False, None], "note": ["", "Ünïcödé 中文", None]},
])
def test_jsonl_fast_reader_gives_what_the_python_reader_gives(tmp_path, extra: dict) -> None:  # type: ignore[no-untyped-def]
    import json

    rows = base(**extra)
    f = tmp_path / "p.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    got = PairSet.read(f)
    want = PairSet.from_records(rows)
    assert got.columns == want.columns
    assert got.records() == want.records()
