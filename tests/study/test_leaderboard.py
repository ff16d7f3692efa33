"""The released model labels and runs: one label per model across the cases, the two GPT-4 versions
apart, pair ids shared across models, and each run's education effects equal to the released
score means (read here straight from the files)."""

from __future__ import annotations

import pandas as pd
import pytest

from ipcausal.study.bench import MODEL_LABELS, label_of, released_runs


def test_labels_reconcile_the_cases_and_keep_gpt4_versions_apart():
    assert label_of("llama2_13b") == label_of("llama2-13b-chat") == "llama-2-13b-chat"
    assert label_of("vicuna_7b") == label_of("vicuna-7b-v1.5")
    assert label_of("gpt-4-1106-preview") != label_of("gpt-4-0613")
    assert label_of("some-new-model") == "some-new-model"
    assert len(set(MODEL_LABELS.values())) == 9
    with pytest.raises(TypeError, match="`released_name` must be a model file name"):
        label_of(3)


def test_education_runs_share_pair_ids_and_equal_the_released_means(shared_data):
    root = shared_data / "jiarui-liu-IP"
    runs = released_runs(root, "education")
    assert len(runs) == 7 and "llama-2-13b-chat" in runs and "gpt-4-0613" not in runs
    ids = [set(ps["pair_id"]) for ps in runs.values()]
    assert all(i == ids[0] for i in ids)
    folder = root / "case_2" / "aes_scores"
    for label, ps in runs.items():
        name = ps["released_model"].iloc[0]
        assert label_of(name) == label and set(ps["model"]) == {label}
        df = ps.to_frame()
        for first, second in (("SAE", "ESL"), ("SAE", "AAE"), ("ESL", "AAE")):
            got = ps.deltas[((df.background_j == first) & (df.background_i == second)).to_numpy()].mean()
            s1 = pd.read_csv(folder / f"{name}_{first.lower()}_results.txt", header=None, names=["i", "s"])
            s2 = pd.read_csv(folder / f"{name}_{second.lower()}_results.txt", header=None, names=["i", "s"])
            common = set(s1.i) & set(s2.i)
            want = s1[s1.i.isin(common)].s.mean() - s2[s2.i.isin(common)].s.mean()
            assert got == pytest.approx(want, abs=1e-12)


def test_echo_runs_keep_both_gpt_models(shared_data):
    runs = released_runs(shared_data / "jiarui-liu-IP", "echo")
    assert {"gpt-4-0613", "gpt-3.5-turbo-instruct", "llama-2-13b-chat"} <= set(runs)
    assert "gpt-4-1106-preview" not in runs
    assert "question_id" in runs["alpaca"].columns


def test_case_validation(shared_data):
    with pytest.raises(ValueError, match="`case` must be one of 'education', 'echo'"):
        released_runs(shared_data / "jiarui-liu-IP", "culture")
