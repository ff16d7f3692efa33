"""A Ray cluster the tests start themselves, and stop by the processes they started (never ``ray stop``).

``ray stop`` stops every Ray process on the machine, a user's cluster included.  A
:class:`RayCluster` has its own temp dir and its own ports (GCS, dashboard agent,
metrics, runtime-env agent: the ones a second head on one machine would otherwise share), runs
each node as ``ray start --block`` in a session of its own, and stops a node by signalling the
processes of that session and their descendants — recorded while they run — and nothing else.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
from _helpers_servers import free_port

RAY = str(Path(sys.executable).with_name("ray"))
REPO = Path(__file__).resolve().parents[1]


def ray_env() -> dict[str, str]:
    """The environment of the tests' Ray processes: this checkout on the path, fast failure detection."""
    return dict(os.environ, PYTHONPATH=str(REPO), RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0",
                RAY_health_check_period_ms="500", RAY_health_check_failure_threshold="4",
                RAY_health_check_initial_delay_ms="0")


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


class RayNode:
    """One ``ray start --block`` process (a session leader) and the processes it started."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        with log.open("ab") as fh:
            self.proc = subprocess.Popen([RAY, "start", *args, "--block", "--disable-usage-stats"], env=env,
                                         stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        self._seen: set[int] = {self.proc.pid}

    def pids(self) -> set[int]:
        """The live processes of this node: its session's and the descendants of every one seen so far."""
        found = set()
        for p in psutil.process_iter(["pid"]):
            with contextlib.suppress(psutil.Error):
                if os.getsid(p.pid) == self.proc.pid:
                    found.add(p.pid)
        for pid in list(self._seen | found):
            with contextlib.suppress(psutil.Error):
                found.update(c.pid for c in psutil.Process(pid).children(recursive=True))
        live = {pid for pid in found if psutil.pid_exists(pid)}
        self._seen |= live
        return live

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self, sig: int = signal.SIGKILL, wait: float = 30.0) -> None:
        """Send ``sig`` to this node's processes (all of them with SIGKILL; the leader only with SIGTERM,
        which stops its own children), then SIGKILL whatever is left after ``wait`` seconds."""
        targets = self.pids()
        with contextlib.suppress(ProcessLookupError):
            if sig == signal.SIGKILL:
                for pid in targets:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, sig)
            else:
                os.kill(self.proc.pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(psutil.pid_exists(p) and not _zombie(p) for p in targets):
            self.proc.poll()
            time.sleep(0.2)
        for pid in targets | self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=wait)


def _zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


class RayCluster:
    """A head node (no CPUs: it holds a driver and its actors) on 127.0.0.1 and worker nodes.

    Parameters
    ----------
    log : path
        File that collects every node's output.
    """

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.temp = Path("/tmp") / f"rt{self.port}"  # short: Ray's socket paths must stay under 107 characters
        self.env, self.log = ray_env(), log
        self.head: RayNode | None = None
        self.workers: list[RayNode] = []

    def start(self, workers: int = 1, timeout: float = 120.0) -> RayCluster:
        """Start the head (and ``workers`` worker nodes); return when the head's GCS listens."""
        ports = {"--dashboard-agent-listen-port": free_port(),
                 "--dashboard-agent-grpc-port": free_port(), "--metrics-export-port": free_port(),
                 "--runtime-env-agent-port": free_port()}
        self.head = RayNode(["--head", f"--port={self.port}", "--node-ip-address=127.0.0.1", "--num-cpus=0",
                             "--include-dashboard=false", f"--temp-dir={self.temp}",
                             *(f"{k}={v}" for k, v in ports.items())], self.env, self.log)
        deadline = time.monotonic() + timeout
        while not _listening(self.port):
            if not self.head.alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the test's Ray head did not start:\n" + self.log.read_text(errors="replace")[-3000:])
            time.sleep(0.2)
        for _ in range(workers):
            self.add_worker()
        return self

    def add_worker(self, cpus: int = 2) -> RayNode:
        """A worker node with ``cpus`` CPUs joins."""
        node = RayNode([f"--address={self.address}", "--node-ip-address=127.0.0.1", f"--num-cpus={cpus}",
                        f"--dashboard-agent-listen-port={free_port()}", f"--metrics-export-port={free_port()}",
                        f"--runtime-env-agent-port={free_port()}"], self.env, self.log)
        self.workers.append(node)
        return node

    def pids(self) -> set[int]:
        """Every live process of this cluster."""
        nodes = ([self.head] if self.head else []) + self.workers
        return set().union(*(n.pids() for n in nodes)) if nodes else set()

    def serving(self) -> bool:
        """Whether the head is up and its GCS port takes connections."""
        return self.head is not None and self.head.alive() and _listening(self.port)

    def stop(self) -> None:
        """Stop this cluster's nodes by their processes (workers first), and remove its temp dir."""
        for node in self.workers:
            node.kill(signal.SIGTERM, wait=15.0)
        if self.head is not None:
            self.head.kill(signal.SIGTERM, wait=15.0)
        shutil.rmtree(self.temp, ignore_errors=True)
