"""The simulator as the inspect_ai model ``ipcausal/simulated``, and inspect's own CLI on an IP task.

``test_entry_point_*`` runs ``python -m inspect_ai eval`` in a subprocess that never imports
:mod:`ipcausal.interop.inspect_model`: the provider is found through the ``inspect_ai`` entry
point in pyproject.toml, so it needs ipcausal installed with that entry point (``pip install -e .``);
it is skipped, saying so, where the installed ipcausal predates it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install 'ipcausal[interop]'")

import inspect_ai.model  # noqa: E402

import ipcausal.interop.inspect_model  # noqa: E402,F401  (registers the provider in this process)
from ipcausal.testing import SimulatedModel  # noqa: E402

TASK_FILE = '''
from inspect_ai import task
from ipcausal import PairSet
from ipcausal.interop.inspect import IPEarlyStopping, ip_task

@task
def ipc():
    return ip_task(PairSet.read({pairs!r}), scorer="answer", bound=4, early_stopping=IPEarlyStopping(alpha=0.05))
'''


def test_model_args_pass_through_to_the_simulator() -> None:
    model = inspect_ai.model.get_model("ipcausal/simulated", effect=2.0, levels=7, seed=5, noise=0.5)
    sim = model.api.simulator  # type: ignore[attr-defined]
    assert (sim.effect, sim.levels, sim.seed, sim.noise) == (2.0, 7, 5, 0.5)
    want = SimulatedModel(effect=2.0, levels=7, seed=5, noise=0.5)
    for q in ("Question 1: what do you think about the colour and the flavour?",
              "Question 1: what do you think about the color and the flavor?"):
        out = asyncio.run(model.generate(q))
        assert SimulatedModel.read(out.completion) == want.answer(q)
        assert out.usage is not None and out.usage.input_tokens == len(q.split())
    with pytest.raises(ValueError, match=r"`effect` must be a finite number"):
        inspect_ai.model.get_model("ipcausal/simulated", effect="big", memoize=False)
    with pytest.raises(ValueError, match=r"`model`: the ipcausal provider has one model, 'ipcausal/simulated'"):
        inspect_ai.model.get_model("ipcausal/other", memoize=False)


def _registered() -> bool:
    return any(ep.name == "ipcausal" and ep.value == "ipcausal.interop.inspect_model"
               for ep in entry_points(group="inspect_ai"))


@pytest.mark.skipif(not _registered(), reason="the installed ipcausal has no `inspect_ai` entry point yet: "
                    "run `pip install -e .` again")
def test_entry_point_inspect_cli_stops_and_prints_the_paired_test(tmp_path: Path) -> None:
    sim = SimulatedModel(effect=1.5, levels=5, seed=2)
    pairs = sim.study(n=120, rng=2).drop_columns("y_i", "y_j", "score_i", "score_j", "model").write(
        tmp_path / "pairs.jsonl")
    (tmp_path / "ipc_task.py").write_text(TASK_FILE.format(pairs=str(pairs)))
    env = dict(os.environ, INSPECT_DISPLAY="plain", XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "ipc_task.py@ipc", "--model",
                           "ipcausal/simulated", "-M", "effect=1.5", "-M", "levels=5", "-M", "seed=2",
                           "--log-dir", str(tmp_path / "logs"), "--log-format", "json", "--max-samples", "8"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=500)
    assert proc.returncode == 0, proc.stderr[-4000:] + proc.stdout[-2000:]
    assert "ip_detected" in proc.stdout and "p_adjusted" in proc.stdout
    (log_file,) = (tmp_path / "logs").glob("*.json")
    log = json.loads(log_file.read_text())
    assert log["eval"]["model"] == "ipcausal/simulated"
    stops = log["results"]["early_stopping"]
    assert stops["manager"] == "ipcausal" and stops["metadata"]["groups"][0]["stop_reason"] == "rejected"
    assert len(stops["early_stops"]) == 240 - stops["metadata"]["samples_run"] > 0
