"""IP-Bench on Ray (issue 20 item 7): a real local cluster, its worker node killed mid-bench.

The cluster is the session's (``ray_cluster`` in ``tests/conftest.py``, :mod:`_helpers_ray`): a head
node with no CPUs (it holds the driver and the cache actor) and a worker node, started with
``ray start --block`` on 127.0.0.1 with their own temp dir and ports, and stopped by the processes
they started — never ``ray stop``, which stops every Ray process on the machine.
``ipcausal bench --ray ADDRESS`` runs in a subprocess; once the first answers are stored, the worker
node's processes are killed (SIGKILL) and a fresh worker node joins so that Ray can retry the lost
cells.  The bench must finish with the same ``bench.csv`` as the in-process run, and the cache
actor's record of answers received (``cache/<model>.puts``, one line per answer that reached it)
must hold each request once.  A cluster the tests did not start (a user's) is left running.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ipcausal.study.bench import bench

ray = pytest.importorskip("ray")
pytest.importorskip("psutil")


MODELS = [{"name": "effect", "backend": "simulated", "effect": 2.0, "latency": 0.1},
          {"name": "null", "backend": "simulated", "effect": 0.0, "seed": 1, "latency": 0.1}]
CASES = [{"name": "echo", "limit": 8}, {"name": "education", "limit": 8}]
TOML = "\n".join(
    [f'[[models]]\nname = "{m["name"]}"\nbackend = "simulated"\neffect = {m["effect"]}\nseed = {m.get("seed", 0)}\n'
     f'latency = {m["latency"]}\n' for m in MODELS]
    + [f'[[cases]]\nname = "{c["name"]}"\nlimit = {c["limit"]}\n' for c in CASES])


def _rows(path: Path) -> int:
    if not path.is_file():
        return 0
    with sqlite3.connect(path) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_bench_on_ray_survives_a_lost_worker_node(tmp_path, ray_cluster):
    spec_path = tmp_path / "bench.toml"
    spec_path.write_text(TOML, encoding="utf-8")
    local = tmp_path / "local"
    bench(spec_path, out=local, progress=False)

    out = tmp_path / "onray"
    lost = list(ray_cluster.workers)  # the worker node(s) the cells can run on now: all of them die
    driver = subprocess.Popen([str(Path(sys.executable).with_name("ipcausal")), "bench", str(spec_path), "-o",
                               str(out), "--ray", ray_cluster.address, "--no-progress"], env=ray_cluster.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 180
        caches = [out / "cache" / f"{m['name']}.sqlite" for m in MODELS]
        while sum(_rows(c) for c in caches) == 0:  # the first answers are in: kill the worker node
            assert driver.poll() is None, driver.communicate()[0]
            assert time.monotonic() < deadline, "no answer reached the cache actor in time"
            time.sleep(0.05)
        for node in lost:
            node.kill()
            ray_cluster.workers.remove(node)
        at_kill = sum(_rows(c) for c in caches)
        killed_mid_bench = not (out / "bench.json").exists()
        ray_cluster.add_worker()
        text, _ = driver.communicate(timeout=240)
        assert driver.returncode == 0, text + ray_cluster.log.read_text(errors="replace")[-4000:]
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait(timeout=30)

    assert killed_mid_bench
    # answers were still missing when the node died: some cells were lost with it and redone
    assert at_kill < sum(_rows(local / "cache" / f"{m['name']}.sqlite") for m in MODELS)
    assert (out / "bench.csv").read_text() == (local / "bench.csv").read_text()
    for m in MODELS:
        puts = (out / "cache" / f"{m['name']}.puts").read_text().split()
        assert len(puts) == len(set(puts)), f"{m['name']}: a completed request was sent again"
        # every answer of the in-process run was asked once on Ray, and no other
        assert len(puts) == _rows(out / "cache" / f"{m['name']}.sqlite") == _rows(local / "cache" / f"{m['name']}.sqlite")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_stopping_the_tests_cluster_leaves_a_users_cluster_running(tmp_path):
    """The tests stop their cluster by its own processes: a second, independent cluster (a user's) keeps running."""
    import psutil
    from _helpers_ray import RayCluster

    users = RayCluster(tmp_path / "users.log").start(workers=0)
    try:
        ours = RayCluster(tmp_path / "ours.log").start(workers=0)
        theirs_before, ours_before = users.pids(), ours.pids()
        assert theirs_before and ours_before and not theirs_before & ours_before
        ours.stop()
        assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in ours_before)
        assert not ours.temp.exists()
        assert users.serving() and all(psutil.pid_exists(p) for p in theirs_before)
        assert users.pids() >= theirs_before
    finally:
        users.stop()


#: The probe's bench (tests/study/test_bench_probe.py): a model that infers and uses, one that does neither.
PROBED = {"settings": {"alpha": 0.05, "seed": 0, "probe": True},
          "models": [{"name": "infers-uses", "backend": "simulated", "effect": 2.0, "probe_accuracy": 1.0},
                     {"name": "neither", "backend": "simulated", "effect": 0.0, "seed": 3, "probe_accuracy": 1 / 3}],
          "cases": [{"name": "education", "limit": 12}]}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_on_ray_the_probe_is_the_same(tmp_path, monkeypatch, ray_cluster):
    """run_cell is shared: a Ray task probes through the cache actor and gets the same CellProbe."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    here = bench(PROBED, out=tmp_path / "here", progress=False)
    there = bench(PROBED, out=tmp_path / "ray", progress=False, ray=ray_cluster.address)  # the session's cluster
    assert [c.probe for c in there.cells] == [c.probe for c in here.cells]
    assert [c.probe.reading for c in there.cells] == ["infers and uses", "neither shown"]
    assert (tmp_path / "ray" / "bench.csv").read_text() == (tmp_path / "here" / "bench.csv").read_text()
    puts = (tmp_path / "ray" / "cache" / "infers-uses.puts").read_text().split()
    assert len(puts) == len(set(puts)) == there.cells[0].sent + there.cells[0].probe.sent  # each asked once


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
