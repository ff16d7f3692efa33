"""The ordered education demo (sae < esl_light < esl_heavy) and the culture demo's cue kinds (issue 21)."""

from __future__ import annotations

import json

import pytest

import ipcausal
from ipcausal.builders import demo_pairs
from ipcausal.builders.cues import cue_columns, marker_kind
from ipcausal.builders.demo import ESL_HEAVY, ESL_LIGHT, ORDERED_LEVELS
from ipcausal.interventions import marker_lexicon


def test_ordered_education_has_every_level_per_prompt_and_nested_errors() -> None:
    ps = demo_pairs("education", limit=6, ordered=True)
    f = ps.to_frame()
    assert len(f) == 18 and f.groupby("prompt_id").size().eq(3).all()
    assert set(f["background_i"]) | set(f["background_j"]) == set(ORDERED_LEVELS)
    for _, r in f[f["background_i"] == "esl_light"].iterrows():
        light, heavy = json.loads(r["edits_i"]), json.loads(r["edits_j"])
        assert len(light) == ESL_LIGHT and len(heavy) >= ESL_HEAVY - 1
        assert all(e in heavy for e in light)  # the light errors are among the heavy ones
    assert f["check_problems"].isna().all()
    assert demo_pairs("education", limit=6, ordered=True).to_frame().equals(f)  # seeded


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_trend_runs_on_the_ordered_demo() -> None:
    ps = demo_pairs("education", limit=5, ordered=True)
    f = ps.to_frame()
    f["score_i"] = f["n_errors_i"].astype(float)  # a score that falls with the errors: a trend by construction
    f["score_j"] = f["n_errors_j"].astype(float)
    r = ipcausal.test(ipcausal.PairSet(f), design=ipcausal.Design(trend=ORDERED_LEVELS), rng=0, n_resamples=999, cluster="prompt_id")
    assert r.trend[0].slope > 0 and r.trend[0].n_prompts == 5


def test_ordered_is_for_education_only() -> None:
    with pytest.raises(ValueError, match="`ordered`=True is the education demo's ordered variant"):
        demo_pairs("echo", ordered=True)
    with pytest.raises(TypeError, match="`ordered` must be True or False"):
        demo_pairs("education", ordered="yes")


def test_culture_records_the_cue_kind() -> None:
    f = demo_pairs("culture").to_frame()
    lex = dict(zip(marker_lexicon()["uk"].str.lower(), marker_lexicon()["category"]))
    for _, r in f.iterrows():
        kinds = json.loads(r["marker_kinds"])
        assert len(kinds) == len(json.loads(r["markers"]))
        for m, k in zip(json.loads(r["markers"]), kinds):
            if m.lower() in lex:
                assert lex[m.lower()] == k
        assert r["cue_kind"] == (kinds[0] if len(set(kinds)) == 1 else "both")
    assert {"spelling", "vocabulary"} <= set(f["cue_kind"])


def test_marker_kind_rule_for_words_outside_the_lexicon() -> None:
    assert marker_kind("colors", "colours") == "spelling"  # inflected, found in the lexicon
    assert marker_kind("flavorz", "flavourz") == "spelling"  # not listed: a few letters apart
    assert marker_kind("sneakerz", "trainerz") == "vocabulary"


def test_cue_columns_of_a_pairs_markers() -> None:
    assert cue_columns(["colours", "organised"])["cue_kind"] == "spelling"  # inflected forms found
    assert cue_columns(["lorries"])["cue_kind"] == "vocabulary"
    assert cue_columns(["colour", "lorry"])["cue_kind"] == "both"
    assert cue_columns(["zzyzx"]) == {"marker_kinds": '["unknown"]', "cue_kind": "unknown"}
    assert cue_columns([])["cue_kind"] is None
