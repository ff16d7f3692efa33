"""Cache-hit re-run vs first run: ``ipcausal.run`` on 10,000 pairs against a local llama.cpp server.

What it does
------------
1. Starts ``python -m llama_cpp.server`` with the SmolLM2-135M-Instruct GGUF on a free
   127.0.0.1 port and waits until ``/v1/models`` answers.
2. Builds ``--pairs`` pairs (default 10,000) whose 20,000 prompts are all different
   ("Reply with one word. Item 17, British English." …), so nothing is deduplicated.
3. First run: ``ipcausal.run`` with the ``openai`` backend against that server, writing
   into a fresh SQLite cache.  To keep the first run's duration reasonable on a small CPU
   machine every response is limited to ``--max-tokens`` (default 1) token; the server
   still renders the chat template, evaluates each prompt and samples, i.e. it does the
   full request round trip, only with a one-token answer.
4. Re-run: the same call again with the same cache, so every response comes from the cache.
5. Prints both durations and their ratio (the target is ≥ 100×), and checks that the re-run
   asked the server for nothing and returned identical responses.

Run it with ``python benchmarks/bench_cache.py`` (``--pairs 500`` for a quick look).  The
result goes to ``benchmarks/CACHE.txt``, which ``benchmarks/run.py`` copies into RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_server(model: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    fh = open(log, "wb")  # noqa: SIM115 - the server writes to it until it stops
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "512", "--model_alias", "smollm2"],
        stdout=fh, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"llama_cpp.server exited ({proc.returncode}); see {log}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"llama_cpp.server did not start; see {log}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10_000, help="number of pairs (default 10,000)")
    parser.add_argument("--max-tokens", type=int, default=1, help="tokens per response in the first run (default 1)")
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight (default 4)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--no-write", action="store_true", help="do not write benchmarks/CACHE.txt")
    args = parser.parse_args(argv)

    from ipcausal import PairSet, get_backend, run
    from ipcausal.backends import GenerationConfig
    from ipcausal.backends.local import resolve_gguf

    pairs = PairSet.from_records(
        {"pair_id": k, "background_i": "US", "background_j": "UK",
         "x_i": f"Reply with one word. Item {k}, American English.",
         "x_j": f"Reply with one word. Item {k}, British English."}
        for k in range(args.pairs)
    )
    config = GenerationConfig(max_tokens=args.max_tokens, temperature=0.0, seed=0)
    with tempfile.TemporaryDirectory(prefix="ipcausal-bench-") as tmp:
        proc, url = _start_server(resolve_gguf(), Path(tmp) / "server.log")
        try:
            cache = Path(tmp) / "cache.sqlite"
            backend = get_backend("openai", model="smollm2", base_url=url, concurrency=args.concurrency)
            t0 = time.perf_counter()
            first = run(pairs, backend, cache=cache, config=config, progress=not args.no_progress)
            t_first = time.perf_counter() - t0
            sent = backend.usage.requests + backend.usage.failures
            t0 = time.perf_counter()
            again = run(pairs, backend, cache=cache, config=config, progress=False)
            t_again = time.perf_counter() - t0
            resent = backend.usage.requests + backend.usage.failures - sent
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    n_req = 2 * args.pairs
    same = first["y_i"].tolist() == again["y_i"].tolist() and first["y_j"].tolist() == again["y_j"].tolist()
    lines = [
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: python benchmarks/bench_cache.py --pairs {args.pairs}",
        f"pairs: {args.pairs} ({n_req} requests, max_tokens={args.max_tokens}, concurrency={args.concurrency}, "
        f"cpus={os.cpu_count()}, load average {' '.join(f'{v:.2f}' for v in os.getloadavg())})",
        f"first run (llama_cpp.server): {t_first:9.2f} s  ({n_req / t_first:8.1f} requests/s)",
        f"cache-hit re-run:             {t_again:9.2f} s  ({n_req / t_again:8.1f} requests/s)",
        f"ratio first / re-run:         {t_first / t_again:9.1f}x  (target >= 100x)",
        f"re-run sent to the server: {resent} requests; identical responses: {same}",
    ]
    print("\n".join(lines))
    if not args.no_write:
        # benchmarks/run.py copies this file into RESULTS.md
        (Path(__file__).resolve().parent / "CACHE.txt").write_text("\n".join(lines) + "\n")
    return 0 if (resent == 0 and same) else 1


if __name__ == "__main__":
    sys.exit(main())
