"""IP-Bench on Ray (issue 20 item 7): a real local cluster, its worker node killed mid-bench.

The cluster is a head node (no CPUs: it holds the driver and the cache actor) and a worker node,
started with ``ray start`` on 127.0.0.1 in subprocesses.  ``ipcausal bench --ray ADDRESS`` runs in a
third subprocess; once the first answers are stored, the worker node's whole process group is
killed (SIGKILL) and a fresh worker node joins so that Ray can retry the lost cells.  The bench must
finish with the same ``bench.csv`` as the in-process run, and the cache actor's record of answers
received (``cache/<model>.puts``, one line per answer that reached it) must hold each request once.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ipcausal.study.bench import bench

ray = pytest.importorskip("ray")


MODELS = [{"name": "effect", "backend": "simulated", "effect": 2.0, "latency": 0.1},
          {"name": "null", "backend": "simulated", "effect": 0.0, "seed": 1, "latency": 0.1}]
CASES = [{"name": "echo", "limit": 8}, {"name": "education", "limit": 8}]
TOML = "\n".join(
    [f'[[models]]\nname = "{m["name"]}"\nbackend = "simulated"\neffect = {m["effect"]}\nseed = {m.get("seed", 0)}\n'
     f'latency = {m["latency"]}\n' for m in MODELS]
    + [f'[[cases]]\nname = "{c["name"]}"\nlimit = {c["limit"]}\n' for c in CASES])
RAY = str(Path(sys.executable).with_name("ray"))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), RAY_AUTH_MODE="disabled",
               RAY_health_check_period_ms="500", RAY_health_check_failure_threshold="4",
               RAY_health_check_initial_delay_ms="0", RAY_USAGE_STATS_ENABLED="0")
    return env


def _worker(address: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([RAY, "start", f"--address={address}", "--node-ip-address=127.0.0.1", "--num-cpus=2",
                             "--block", "--disable-usage-stats"], env=env, stdout=log.open("ab"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def _rows(path: Path) -> int:
    if not path.is_file():
        return 0
    with sqlite3.connect(path) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def _kill(proc: subprocess.Popen | None) -> None:
    if proc is not None and proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_bench_on_ray_survives_a_lost_worker_node(tmp_path):
    spec_path = tmp_path / "bench.toml"
    spec_path.write_text(TOML, encoding="utf-8")
    local = tmp_path / "local"
    bench(spec_path, out=local, progress=False)

    env = _env(tmp_path)
    port = _port()
    address = f"127.0.0.1:{port}"
    log = tmp_path / "ray.log"
    temp = Path("/tmp") / f"rt{port}"  # short: Ray's socket paths must stay under 107 characters
    out = tmp_path / "onray"
    workers: list[subprocess.Popen] = []
    driver = None
    try:
        subprocess.run([RAY, "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=0",
                        "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}"],
                       env=env, check=True, timeout=120, stdout=log.open("ab"), stderr=subprocess.STDOUT)
        workers.append(_worker(address, env, log))
        driver = subprocess.Popen([str(Path(sys.executable).with_name("ipcausal")), "bench", str(spec_path), "-o", str(out),
                                   "--ray", address, "--no-progress"], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 180
        caches = [out / "cache" / f"{m['name']}.sqlite" for m in MODELS]
        while sum(_rows(c) for c in caches) == 0:  # the first answers are in: kill the worker node
            assert driver.poll() is None, driver.communicate()[0]
            assert time.monotonic() < deadline, "no answer reached the cache actor in time"
            time.sleep(0.05)
        _kill(workers[0])
        at_kill = sum(_rows(c) for c in caches)
        killed_mid_bench = not (out / "bench.json").exists()
        workers.append(_worker(address, env, log))
        text, _ = driver.communicate(timeout=240)
        assert driver.returncode == 0, text + log.read_text(errors="replace")[-4000:]
    finally:
        if driver is not None and driver.poll() is None:
            driver.kill()
            driver.wait(timeout=30)
        for w in workers:
            _kill(w)
        subprocess.run([RAY, "stop", "--force"], env=env, timeout=120, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(temp, ignore_errors=True)

    assert killed_mid_bench
    # answers were still missing when the node died: some cells were lost with it and redone
    assert at_kill < sum(_rows(local / "cache" / f"{m['name']}.sqlite") for m in MODELS)
    assert (out / "bench.csv").read_text() == (local / "bench.csv").read_text()
    for m in MODELS:
        puts = (out / "cache" / f"{m['name']}.puts").read_text().split()
        assert len(puts) == len(set(puts)), f"{m['name']}: a completed request was sent again"
        # every answer of the in-process run was asked once on Ray, and no other
        assert len(puts) == _rows(out / "cache" / f"{m['name']}.sqlite") == _rows(local / "cache" / f"{m['name']}.sqlite")


def test_missing_ray_says_how_to_install(monkeypatch):
    from ipcausal.study.bench import require_ray

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"`ray`: .*pip install 'ipcausal\[ray\]'"):
        require_ray()


def test_ray_argument_is_checked(tmp_path):
    with pytest.raises(ValueError, match="`ray` must be None, True or a cluster address string"):
        bench({"models": MODELS[:1], "cases": CASES[:1]}, out=tmp_path, ray=3, progress=False)


def test_vllm_parallel_keys_reach_the_backend(monkeypatch):
    import ipcausal.backends as backends
    from ipcausal.study.bench.cell import _real_backend
    from ipcausal.study.bench import BenchSpec

    spec = BenchSpec.parse({"models": [{"name": "big", "backend": "vllm", "model": "/m", "tensor_parallel_size": 4,
                                        "pipeline_parallel_size": 2, "data_parallel_size": 3,
                                        "distributed_executor_backend": "ray"}], "cases": CASES[:1]})
    seen = {}
    monkeypatch.setattr(backends, "get_backend", lambda kind, **kw: seen.update(kind=kind, **kw))
    _real_backend(spec.models[0])
    assert seen == {"kind": "vllm", "model": "/m", "tensor_parallel_size": 4, "pipeline_parallel_size": 2,
                    "data_parallel_size": 3, "distributed_executor_backend": "ray"}


@pytest.mark.parametrize(("model", "message"), [
    ({"backend": "openai", "model": "m", "tensor_parallel_size": 2},
     r'`models\[0\].tensor_parallel_size` is a key of backend = "vllm" only'),
    ({"backend": "vllm", "model": "m", "pipeline_parallel_size": 0},
     r"`models\[0\].pipeline_parallel_size` must be"),
    ({"backend": "vllm", "model": "m", "distributed_executor_backend": "slurm"},
     r"`models\[0\].distributed_executor_backend` must be one of 'mp', 'ray', 'uni'"),
    ({"backend": "openai", "model": "m", "latency": 0.1}, r'`models\[0\].latency` is a key of backend = "simulated"'),
    ({"backend": "simulated", "latency": -1}, r"`models\[0\].latency` must be a number >= 0"),
])
def test_the_new_model_keys_are_checked(model, message):
    from ipcausal.study.bench import BenchSpec

    with pytest.raises(ValueError, match=message):
        BenchSpec.parse({"models": [{"name": "x", **model}], "cases": CASES[:1]})


def test_cli_ray_flag_is_checked(tmp_path, capsys, monkeypatch):
    from ipcausal.cli import main

    (tmp_path / "b.toml").write_text(TOML, encoding="utf-8")
    assert main(["bench", "--released", str(tmp_path), "-o", str(tmp_path / "o"), "--ray"]) == 2
    assert "--jobs, --cost-limit and --ray are for a bench file" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)
    assert main(["bench", str(tmp_path / "b.toml"), "-o", str(tmp_path / "o"), "--ray", "auto"]) == 2
    err = capsys.readouterr().err
    assert "--ray: `ray`: running a bench on Ray needs the ray package" in err
    assert not (tmp_path / "o" / "cache").exists()  # nothing was run
