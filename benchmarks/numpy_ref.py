"""Tuned numpy sign-flip Monte Carlo implementations (what a careful user would write)."""

from __future__ import annotations

import numpy as np


def mc_matmul(d: np.ndarray, n_resamples: int, seed: int, batch: int = 10_000) -> float:
    """Random bytes → unpacked bits → ±1 float32 matrix @ |d| (BLAS), in batches. Two-sided p."""
    rng = np.random.default_rng(seed)
    a = np.abs(d).astype(np.float32)
    n = a.size
    t_obs = abs(float(d.sum()))
    eps = 1e-9 * float(a.sum())
    hits = 0
    done = 0
    nbytes = (n + 7) // 8
    while done < n_resamples:
        b = min(batch, n_resamples - done)
        bits = np.unpackbits(rng.integers(0, 256, (b, nbytes), dtype=np.uint8), axis=1, count=n)
        t = bits.astype(np.float32) @ (2 * a) - a.sum()
        hits += int(np.count_nonzero(np.abs(t) >= t_obs - eps))  # float32 sums: ties not exact
        done += b
    return (hits + 1) / (n_resamples + 1)


def mc_bytetable(d: np.ndarray, n_resamples: int, seed: int, batch: int = 10_000) -> float:
    """The byte-table trick in numpy: 256-entry partial-sum tables, gathered by random bytes."""
    rng = np.random.default_rng(seed)
    a = np.abs(d)
    n = a.size
    groups = (n + 7) // 8
    pad = np.zeros(groups * 8)
    pad[:n] = a
    bits = ((np.arange(256)[:, None] >> np.arange(8)) & 1) * 2.0 - 1.0  # (256, 8)
    tab = (bits @ pad.reshape(groups, 8).T).T  # (groups, 256)
    t_obs = abs(float(d.sum()))
    eps = 1e-9 * float(a.sum())
    hits = 0
    done = 0
    offs = (np.arange(groups) * 256)[None, :]
    flat = tab.ravel()
    while done < n_resamples:
        b = min(batch, n_resamples - done)
        idx = rng.integers(0, 256, (b, groups), dtype=np.uint8).astype(np.intp) + offs
        t = flat[idx].sum(axis=1)
        hits += int(np.count_nonzero(np.abs(t) >= t_obs - eps))
        done += b
    return (hits + 1) / (n_resamples + 1)
