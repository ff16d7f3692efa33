"""IP-Bench on a Ray cluster: every (model, case) cell a Ray task, one actor serving the caches (issue 20 item 7).

``bench(spec, out=DIR, ray=ADDRESS)`` (``ipcausal bench … --ray [ADDRESS]``) connects to an
existing Ray cluster (``ADDRESS``, e.g. ``127.0.0.1:6379`` or ``auto``) or, with ``ray=True``,
starts a local one for the run, and runs each cell as a Ray task.  The cells of one model still run
one after another (the next is submitted when the previous has finished); different models run at
once, up to ``jobs``.

The response caches (``DIR/cache/<model>.sqlite``) are served by **one Ray actor** pinned to the
driver's node: a task looks every request up through it before sending and stores each answer
through it the moment it arrives.  A task whose worker dies (a node lost, a process killed) is
retried by Ray and finds every answer its first attempt received already cached, so no completed
request is sent again.  The actor also appends each stored request's key to
``DIR/cache/<model>.puts`` — the record of what the model was really asked (one line per answer
received; a key written twice would be a request sent twice).

The tasks write their cells' folders under ``DIR`` themselves: on a cluster of several machines
``DIR`` must be on a file system every node sees (the caches need not be: they live with the
actor).  Ray is an optional extra (``pip install 'ipcausal[ray]'``), imported only here.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ipcausal.study.bench.cell import failed_cell, run_cell

__all__ = ["require_ray", "run_on_ray", "ActorCache"]

#: Attempts Ray makes of a cell whose worker died before giving up on it.
TASK_RETRIES = 5


def require_ray() -> Any:
    """The ``ray`` module, or an ``ImportError`` that says how to install it.

    Examples
    --------
    >>> try:
    ...     ray = require_ray()
    ... except ImportError as exc:
    ...     ray = None
    ...     assert "pip install" in str(exc)
    """
    try:
        import ray
    except ImportError:
        raise ImportError("`ray`: running a bench on Ray needs the ray package: pip install 'ipcausal[ray]' "
                          "(or pip install ray)") from None
    return ray


class _CacheServer:
    """The actor's body: one :class:`~ipcausal.backends.cache.ResponseCache` per model, in ``root/cache``."""

    def __init__(self, root: str) -> None:
        self.root = Path(root) / "cache"
        self.caches: dict[str, Any] = {}

    def _cache(self, name: str) -> Any:
        from ipcausal.backends.cache import ResponseCache

        if name not in self.caches:
            self.caches[name] = ResponseCache(self.root / f"{name}.sqlite")
        return self.caches[name]

    def get_many(self, name: str, kind: str, model: str, requests: list[Any]) -> list[Any]:
        return self._cache(name).get_many(kind, model, requests)

    def put(self, name: str, kind: str, model: str, request: Any, response: Any) -> None:
        from ipcausal.backends.cache import cache_key

        self._cache(name).put(kind, model, request, response)
        with open(self.root / f"{name}.puts", "a", encoding="utf-8") as fh:
            fh.write(cache_key(kind, model, request, 0) + "\n")

    def size(self, name: str) -> int:
        return len(self._cache(name))

    def contains(self, name: str, key: str) -> bool:
        return key in self._cache(name)

    def close(self) -> None:
        for c in self.caches.values():
            c.close()
        self.caches.clear()


def _response_cache_type() -> type:
    from ipcausal.backends.cache import ResponseCache

    return ResponseCache


class ActorCache(_response_cache_type()):  # type: ignore[misc]
    """A :class:`~ipcausal.backends.cache.ResponseCache` whose rows live in the bench's cache actor.

    Only the reading and writing methods a run uses are served (``get``, ``get_many``, ``put``,
    ``len``, ``in``); ``close`` leaves the actor's file open for the other cells.
    """

    def __init__(self, actor: Any, name: str) -> None:  # noqa: D107 - no sqlite file of its own
        self._actor, self._name, self.path = actor, name, f"ray-actor:{name}"

    def get_many(self, kind: str, model: str, requests: Any) -> list[Any]:  # noqa: D102
        import ray

        return ray.get(self._actor.get_many.remote(self._name, kind, model, list(requests)))

    def put(self, kind: str, model: str, request: Any, response: Any) -> None:  # noqa: D102
        import ray

        ray.get(self._actor.put.remote(self._name, kind, model, request, response))

    def __len__(self) -> int:
        import ray

        return int(ray.get(self._actor.size.remote(self._name)))

    def __contains__(self, key: object) -> bool:
        import ray

        return bool(ray.get(self._actor.contains.remote(self._name, key)))

    def clear(self) -> None:  # noqa: D102
        raise NotImplementedError("the bench's cache actor is never cleared from a task")

    def close(self) -> None:  # noqa: D102
        pass

    def __repr__(self) -> str:
        return f"ActorCache({self._name!r})"


def _cell_task(m: Any, cs: Any, spec: Any, root: str, actor: Any, progress: bool) -> tuple[Any, Any]:
    """One cell, inside a Ray worker (the body of the remote task)."""
    try:
        return run_cell(m, cs, spec, Path(root), {}, progress, cache=ActorCache(actor, m.name))
    except Exception as exc:  # noqa: BLE001 - a failed cell is reported, the others finish
        return failed_cell(m, cs, exc, progress), None


def run_on_ray(spec: Any, root: Path, *, address: str | bool, jobs: int, progress: bool) -> dict[str, list]:
    """Run every cell of ``spec`` as a Ray task; ``{model: [(BenchCell, scored PairSet or None), …]}``.

    Each task runs :func:`~ipcausal.study.bench.cell.run_cell` (a failed one
    :func:`~ipcausal.study.bench.cell.failed_cell`), as the thread pool does.

    ``address`` ``True`` starts a local cluster for the run (shut down after it); a string connects
    to that cluster (left running).
    """
    ray = require_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    started = not ray.is_initialized()
    if started:
        kwargs: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
        if address is True:
            ray.init(**kwargs)
        else:
            ray.init(address=str(address), **kwargs)
    try:
        here = ray.get_runtime_context().get_node_id()
        actor = ray.remote(num_cpus=0, max_concurrency=64)(_CacheServer).options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(str(root))
        task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=False)(_cell_task)
        lock = threading.Lock()
        done: dict[str, list] = {}

        def work(m: Any) -> None:
            out = []
            for cs in spec.cases:
                try:
                    out.append(ray.get(task.remote(m, cs, spec, str(root), actor, progress)))
                except Exception as exc:  # noqa: BLE001 - the task's retries ran out (its workers kept dying)
                    out.append((failed_cell(m, cs, exc, progress), None))
            with lock:
                done[m.name] = out

        with ThreadPoolExecutor(max_workers=min(jobs, len(spec.models)), thread_name_prefix="ipcausal-ray") as pool:
            for f in [pool.submit(work, m) for m in spec.models]:
                f.result()
        ray.get(actor.close.remote())
        return done
    finally:
        if started:
            ray.shutdown()
