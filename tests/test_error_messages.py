"""Each error names the problem the user has (issue 13 item 5): files, options and numbers."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from ipcausal import PairSet, adjust_pvalues, permutation_test, personalization_bias, sign_test
from ipcausal.stats import mean_ci

HEADER = "pair_id,background_i,background_j,x_i,x_j\n"
ROW = '{{"pair_id": {k}, "background_i": "US", "background_j": "UK", "x_i": "{x}", "x_j": "b"}}\n'


# -- files ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["pairs.jsonl", "folder"])
def test_a_directory_is_named_as_one(tmp_path, name: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / name).mkdir()
    with pytest.raises(ValueError, match=r"`path`: .*(pairs\.jsonl|folder) is a directory; give a PairSet file"):
        PairSet.read(tmp_path / name)


@pytest.mark.parametrize(("body", "line", "fields"), [
    ("1,US,UK,a,b,extra\n2,US,UK,c,d\n", 2, 6),  # pandas took column 1 as the index: "duplicate values"
    ("1,US,UK,a,b\n2,US,UK,c,d,extra\n", 3, 6),
    ("1,US,UK,a,b\n2,US,UK,c\n", 3, 4),  # pandas filled the missing field silently
])
def test_a_ragged_csv_names_the_line_and_the_counts(tmp_path, body: str, line: int, fields: int) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "r.csv"
    f.write_text(HEADER + body)
    with pytest.raises(ValueError, match=rf"r\.csv:{line}: {fields} fields, but the header has 5 \(pair_id, "):
        PairSet.read(f)


def test_an_empty_csv_names_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "nothing.csv"
    f.write_text("\n")
    with pytest.raises(ValueError, match=r"`path`: .*nothing\.csv is empty; a CSV PairSet starts with a header"):
        PairSet.read(f)


def test_a_latin1_jsonl_names_the_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "l.jsonl"
    f.write_bytes(ROW.format(k=1, x="a").encode() + ROW.format(k=2, x="caf\xe9").encode("latin-1"))
    with pytest.raises(ValueError, match=r"l\.jsonl:2: not UTF-8 text \(byte 0xe9 at column \d+\); save the file as UTF-8"):
        PairSet.read(f)


def test_a_latin1_csv_names_the_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "l.csv"
    f.write_bytes((HEADER + "1,US,UK,a,b\n2,US,UK,a,b\n3,US,UK,caf\xe9,b\n").encode("latin-1"))
    with pytest.raises(ValueError, match=r"l\.csv:4: not UTF-8 text \(byte 0xe9 at column 12\)"):
        PairSet.read(f)


def test_an_unterminated_csv_quote_names_where_it_opened(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "q.csv"
    f.write_text(HEADER + '1,US,UK,a,b\n2,US,UK,"never closed,b\n3,US,UK,c,d\n')
    with pytest.raises(ValueError, match=r"q\.csv:3: a quoted field opened on this line is never closed") as info:
        PairSet.read(f)
    assert "tokenizing" not in str(info.value) and "C error" not in str(info.value)


def test_a_bad_jsonl_line_is_still_named_after_the_fast_reader(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "j.jsonl"
    f.write_text(ROW.format(k=1, x="a") + "[1, 2]\n")
    with pytest.raises(ValueError, match=r"j\.jsonl:2: expected one JSON object per pair"):
        PairSet.read(f)


# -- the statistics ---------------------------------------------------------------------------
def test_exact_on_a_lattice_too_large_for_the_dp_says_so() -> None:
    d = np.random.default_rng(0).integers(-10**6, 10**6, 5000)
    with pytest.raises(ValueError, match=r"lie on a lattice, but it is too large for the exact DP \(5,000 differences") as info:
        permutation_test(d, method="exact")
    assert "do not lie on a common lattice" not in str(info.value)
    with pytest.raises(ValueError, match=r"do not lie on a common lattice"):  # the other reason keeps its words
        permutation_test(np.random.default_rng(0).normal(size=40), method="exact")


@pytest.mark.parametrize("n", [2**63, 10**30])
def test_huge_n_resamples_names_the_parameter(n: int) -> None:
    with pytest.raises(ValueError, match=r"`n_resamples` must be at most 9,007,199,254,740,991"):
        permutation_test([1.0, 2.0, -1.0, 3.0], method="monte-carlo", n_resamples=n)
    with pytest.raises(ValueError, match=r"`n_resamples` must be at most"):
        personalization_bias([1, 2, 3, 4], ["a", "a", "b", "b"], n_resamples=n)


def test_a_bootstrap_that_cannot_fit_in_memory_names_n_resamples() -> None:
    with pytest.raises(ValueError, match=r"`n_resamples` must be at most 134,217,728 here \(the bootstrap keeps"):
        personalization_bias([1, 2, 3, 4], ["a", "a", "b", "b"], n_resamples=10**9)


def test_integers_beyond_float_range_name_the_parameter() -> None:
    with pytest.raises(ValueError, match=r"`d` holds an integer too large for a float"):
        permutation_test([10**400, 1, 2])
    with pytest.raises(ValueError, match=r"`s` holds an integer too large for a float"):
        sign_test([10**400, 1, 2])
    with pytest.raises(ValueError, match=r"`d` holds an integer too large for a float"):
        mean_ci([1, 2, -(10**309)])


def test_ragged_input_is_called_ragged() -> None:
    for bad in ([[0.1, 0.2], [0.3]], [0.1, [0.2, 0.3]]):
        with pytest.raises(ValueError, match=r"`p` is ragged") as info:
            adjust_pvalues(bad, "holm")
        assert "inhomogeneous" not in str(info.value)
    with pytest.raises(ValueError, match=r"`values` is ragged"):
        personalization_bias([[1.0, 2.0], [3.0]], ["a", "b"])
    with pytest.raises(ValueError, match=r"`backgrounds` must be a flat sequence of labels"):
        personalization_bias([1.0, 2.0], [["a"], "b"])  # was taken as the label "['a']"
    with pytest.raises(ValueError, match=r"`d` is ragged"):
        permutation_test([1.0, [2.0, 3.0]])


def test_the_mean_does_not_overflow_near_the_float_maximum() -> None:
    x = [1.7e308, 1.6e308, 1.65e308, 1.75e308]  # the sum overflows; the mean and its interval do not
    truth = float(sum(Fraction(v) for v in x) / len(x))  # exact rational arithmetic
    res = permutation_test(x)
    assert math.isfinite(res.statistic) and res.statistic == pytest.approx(truth, rel=1e-15)
    # (its interval is the intervals module's; with n = 4 the exact test cannot reject at 5 %)
    m = mean_ci(x)
    assert m.statistic == pytest.approx(truth, rel=1e-15) and math.isfinite(m.ci_low)
    tiny = [3e-170, 1e-170, 2e-170, -1e-170]  # their squares underflow without the scaling
    assert permutation_test(tiny).effect_size == pytest.approx(permutation_test([3, 1, 2, -1]).effect_size, rel=1e-12)


@pytest.mark.parametrize("n", [1000, 1010, 1020])
def test_the_two_sided_exact_p_below_1e300_counts_both_extremes(n: int) -> None:
    # brute force: with every difference equal, only the all-plus and all-minus sign vectors
    # reach |T| = n, so p = 2 * 2**-n two-sided and 2**-n one-sided
    d = np.ones(n)
    assert permutation_test(d, method="exact").pvalue == math.ldexp(1.0, 1 - n)
    assert permutation_test(d, method="exact", alternative="greater").pvalue == math.ldexp(1.0, -n)


def test_a_file_that_is_not_parquet_says_so(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("pyarrow")
    f = tmp_path / "p.parquet"
    f.write_text("pair_id,background_i\n")
    with pytest.raises(ValueError, match=r"`path`: .*p\.parquet: not a readable Parquet file"):
        PairSet.read(f)
