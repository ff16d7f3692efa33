"""The openai backend against a real ``python -m llama_cpp.server`` and a fault-injecting proxy."""

from __future__ import annotations

import json

import pytest

from ipcausal.backends import Backoff

pytest.importorskip("openai", reason="needs the openai client: pip install 'ipcausal[openai]'")
pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]: pip install 'ipcausal[local]'")

import ipcausal  # noqa: E402
from _helpers_servers import FaultProxy, free_port  # noqa: E402
from ipcausal.backends import BackendError, GenerationConfig, Request, Response, get_backend, messages_of  # noqa: E402
from ipcausal.backends.local import resolve_gguf  # noqa: E402
from ipcausal.backends.openai_backend import OpenAIBackend  # noqa: E402
from ipcausal.cli import main  # noqa: E402
from ipcausal.pairs import PairSet  # noqa: E402
from ipcausal.study.run import summarize  # noqa: E402

SECRET = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture(scope="module")
def server(llama_server: str) -> str:
    return llama_server  # the session's server (tests/conftest.py)


@pytest.fixture()
def proxy(server: str) -> FaultProxy:
    with FaultProxy(server) as p:
        yield p


def _backend(url: str, **kw: object) -> OpenAIBackend:
    opts = {"model": "smollm2", "base_url": url, "backoff": 0.01, "max_retries": 3, "timeout": 30.0}
    opts.update(kw)
    return get_backend("openai", **opts)  # type: ignore[return-value]


def _req(text: str = "What colour is grass?", **cfg: object) -> Request:
    return Request(messages_of(text), GenerationConfig(**{"max_tokens": 4, **cfg}))


def test_talks_to_a_real_server_and_sends_every_setting(proxy: FaultProxy) -> None:
    b = _backend(proxy.url, model=None)  # the model is taken from the server's /v1/models
    assert b.model == "smollm2"
    (r,) = b.generate([_req(seed=3, temperature=0.5, top_p=0.9, stop=("\n\n",))])
    assert isinstance(r, Response) and r.text and r.prompt_tokens > 5 and 1 <= r.completion_tokens <= 4
    sent = proxy.posts()[-1]["json"]
    assert sent["max_tokens"] == 4 and sent["seed"] == 3 and sent["temperature"] == 0.5 and sent["top_p"] == 0.9
    assert sent["repeat_penalty"] == 1.0 and sent["stop"] == ["\n\n"]  # sent explicitly (server default is 1.1)
    assert b.usage.requests == 1 and b.usage.completion_tokens == r.completion_tokens


def test_greedy_output_matches_the_in_process_backend(server: str) -> None:
    req = _req("Name a primary colour.", max_tokens=8)
    remote = _backend(server).generate([req])[0].text
    with get_backend("local") as local:
        assert local.generate([req])[0].text == remote


def test_n_samples_loop_when_the_server_ignores_n(proxy: FaultProxy) -> None:
    (r,) = _backend(proxy.url).generate([_req("Name an animal.", n=3, temperature=1.0, seed=5, max_tokens=6)])
    assert len(r.choices) == 3
    seeds = [p["json"]["seed"] for p in proxy.posts()]
    assert seeds == [5, 6, 7]  # one call per missing sample, seed + k
    assert r.completion_tokens == sum(c.completion_tokens for c in r.choices)


def test_429_with_retry_after_is_honoured(proxy: FaultProxy) -> None:
    proxy.script = [("status", 429, {"Retry-After": "1"}, {"error": {"message": "slow down"}})]
    (r,) = _backend(proxy.url).generate([_req()])
    posts = proxy.posts()
    assert r.text and len(posts) == 2
    assert posts[1]["t"] - posts[0]["t"] >= 0.9  # waited as asked, not the 0.01 s backoff


def test_server_errors_timeouts_and_truncated_json_are_retried(proxy: FaultProxy) -> None:
    proxy.script = [("status", 500, {}, {"error": {"message": "boom"}}), ("truncate",), ("sleep", 3.0),
                    ("status", 200, {}, b"not json at all"), ("status", 200, {}, {"choices": []})]
    b = _backend(proxy.url, timeout=1.0, max_retries=5)
    (r,) = b.generate([_req()])
    assert isinstance(r, Response) and r.text and len(proxy.posts()) == 6


def test_persistent_failure_is_reported_not_raised_per_request(proxy: FaultProxy) -> None:
    proxy.always = ("status", 503, {}, {"error": {"message": "overloaded"}})
    outs = _backend(proxy.url, max_retries=2).generate_outcomes([_req("a"), _req("b")])
    assert all(isinstance(o, BackendError) and o.retryable for o in outs)
    assert "HTTP 503" in str(outs[0]) and "gave up after 3 attempts" in str(outs[0])
    assert len(proxy.posts()) == 6


def test_client_errors_fail_at_once(proxy: FaultProxy) -> None:
    proxy.script = [("status", 400, {}, {"error": {"message": "bad request"}})]
    out = _backend(proxy.url).generate_outcomes([_req()])[0]
    assert isinstance(out, BackendError) and not out.retryable and "HTTP 400" in str(out)
    assert len(proxy.posts()) == 1


def test_concurrency_is_bounded(proxy: FaultProxy) -> None:
    proxy.always = ("sleep", 0.2)
    outs = _backend(proxy.url, concurrency=3).generate_outcomes([_req(f"Say {k}.", max_tokens=1) for k in range(7)])
    assert all(isinstance(o, Response) for o in outs)
    assert 2 <= proxy.max_inflight <= 3


def test_the_api_key_is_never_stored_or_shown(proxy: FaultProxy, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("IPCAUSAL_TEST_KEY", SECRET)
    pairs = PairSet.from_records([{"pair_id": 1, "background_i": "US", "background_j": "UK", "x_i": "Hi", "x_j": "Hello"}])
    proxy.script = [("status_echo_auth", 401)]
    b = _backend(proxy.url, api_key_env="IPCAUSAL_TEST_KEY")
    assert SECRET not in repr(b) and SECRET not in str(vars(b).get("base_url"))
    out = ipcausal.run(pairs, b, cache=tmp_path / "c.sqlite", config=GenerationConfig(max_tokens=2), progress=False)
    assert proxy.posts()[0]["auth"] == f"Bearer {SECRET}"  # it was used …
    s = summarize(out)
    assert s.failed == 1 and "HTTP 401" in s.failures[0].reason and SECRET not in s.failures[0].reason
    out.write(tmp_path / "out.jsonl")
    for f in tmp_path.iterdir():  # … and written nowhere
        assert SECRET.encode() not in f.read_bytes(), f
        assert b"SECRET-0123" not in f.read_bytes(), f


def test_constructor_validation(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match=r"`api_key`: no API key given and \$OPENAI_API_KEY is not set"):
        OpenAIBackend("gpt-4o-mini")
    with pytest.raises(ValueError, match=r"`model` is required for api.openai.com"):
        OpenAIBackend(api_key="sk-x")
    with pytest.raises(ValueError, match=r"`base_url` must be an http\(s\) URL"):
        OpenAIBackend("m", base_url="ftp://x")
    with pytest.raises(ValueError, match=r"`concurrency` must be a positive integer"):
        OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", concurrency=0)
    with pytest.raises(ValueError, match=r"`timeout` must be positive"):
        OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", timeout=0)
    with pytest.raises(ValueError, match=r"`max_retries` must be a non-negative integer"):
        OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", max_retries=-1)
    with pytest.raises(ValueError, match=r"`backoff` must be a non-negative number"):
        OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", backoff=-1)
    with pytest.raises(ValueError, match=r"`model` must be a non-empty string"):
        OpenAIBackend("", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(TypeError, match=r"`extra_body` must be a mapping"):
        OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", extra_body=[1])
    with pytest.raises(ValueError, match=r"`api_key` must be a non-empty string"):
        OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", api_key="")
    with pytest.raises(ValueError, match=r"`max_retry_after` must be a non-negative number"):
        OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", backoff=Backoff(max_retry_after=-1.0))
    with pytest.raises(ValueError, match=r"`api_key_env` must name an environment variable"):
        OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", api_key_env="")


def test_unreachable_server_is_a_clear_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(BackendError, match=r"cannot reach the server at http://127.0.0.1:\d+/v1"):
        OpenAIBackend(base_url=url)
    b = OpenAIBackend("m", base_url=url, max_retries=1, backoff=0.01, concurrency=1)
    outs = b.generate_outcomes([_req(f"q{k}") for k in range(12)])
    assert all(isinstance(o, BackendError) for o in outs)
    assert "connection failed" in str(outs[0]) and "gave up after 2 attempts" in str(outs[0])
    # after 8 requests in a row found the server down, the rest fail fast instead of retrying
    assert "skipped, the server stopped answering" in str(outs[-1])
    pairs = PairSet.from_records([{"pair_id": 1, "background_i": "US", "background_j": "UK", "x_i": "a", "x_j": "b"}])
    with pytest.raises(BackendError, match=r"cannot reach the server"):
        ipcausal.run(pairs, b, progress=False)  # the preflight check, before anything is sent
    with pytest.raises(TypeError, match=r"`preflight` must be True or False"):
        ipcausal.run(pairs, b, progress=False, preflight="no")


def test_cli_incomplete_run_exits_3_then_resumes(proxy: FaultProxy, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "pairs.jsonl"
    src.write_text("".join(json.dumps({"pair_id": k, "background_i": "US", "background_j": "UK",
                                       "x_i": f"Hi {k}", "x_j": f"Hello {k}"}) + "\n" for k in range(2)))
    out = tmp_path / "out.jsonl"
    argv = ["run", str(src), "--backend", "openai", "--base-url", proxy.url, "--model", "smollm2", "--max-tokens", "2",
            "--retries", "0", "--out", str(out), "--no-progress", "--price-input", "0.5", "--price-output", "1.5"]
    proxy.script = [("status", 500, {}, {"error": {"message": "boom"}})]
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert "requested 4, completed 3, from cache 0, failed 1" in err and "INCOMPLETE" in err and "HTTP 500" in err
    assert "cost of the new tokens" in err
    assert sum(r["error_i"] is not None or r["error_j"] is not None for r in PairSet.read(out).records()) == 1
    n_posts = len(proxy.posts())
    assert main(argv) == 0
    assert "requested 4, completed 4, from cache 3, failed 0" in capsys.readouterr().err
    assert len(proxy.posts()) == n_posts + 1


# -- one retry decision; programming errors; the model name ------------------------------------
def test_should_retry_is_the_one_decision() -> None:
    import httpx
    import openai

    from ipcausal.backends.openai_backend import should_retry

    req = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")

    def status(code: int) -> openai.APIStatusError:
        return openai.APIStatusError("x", response=httpx.Response(code, request=req), body=None)

    assert should_retry(openai.APITimeoutError(request=req)) and should_retry(openai.APIConnectionError(request=req))
    assert all(should_retry(status(c)) for c in (408, 409, 425, 429, 500, 502, 503))
    assert not any(should_retry(status(c)) for c in (400, 401, 403, 404, 422))
    assert not any(should_retry(e) for e in (ValueError("x"), KeyError("x"), TypeError("x"), AttributeError("x"),
                                             BackendError("skipped", retryable=True)))


def test_a_programming_error_fails_at_once_with_its_own_message(proxy: FaultProxy) -> None:
    b = _backend(proxy.url, extra_body={"not_json": object()})  # our bug: a body that cannot be encoded
    with pytest.raises(TypeError, match=r"not JSON serializable"):
        b.generate_outcomes([_req()])
    assert proxy.posts() == []  # neither sent nor retried, nor turned into "malformed response"


def test_a_model_the_server_does_not_serve_is_rejected_before_any_request(proxy: FaultProxy, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    pairs = PairSet.from_records([{"pair_id": 1, "background_i": "US", "background_j": "UK", "x_i": "Hi", "x_j": "Hello"}])
    b = _backend(proxy.url, model="wrongname")
    with pytest.raises(BackendError, match=r"`model` 'wrongname' is not served by the server at http://127\.0\.0\.1:\d+/v1, "
                                           r"which serves 'smollm2'"):
        ipcausal.run(pairs, b, progress=False)
    src = tmp_path / "pairs.jsonl"
    pairs.write(src)
    argv = ["run", str(src), "--backend", "openai", "--base-url", proxy.url, "--model", "wrongname",
            "--out", str(tmp_path / "out.jsonl"), "--no-progress"]
    assert main(argv) == 2
    assert "'wrongname' is not served" in capsys.readouterr().err and not (tmp_path / "out.jsonl").exists()
    assert proxy.posts() == []
    # a gateway that accepts names it does not list: the check can be switched off
    assert _backend(proxy.url, model="wrongname", check_model=False).check() == ["smollm2"]
    with pytest.raises(TypeError, match=r"`check_model` must be True or False"):
        _backend(proxy.url, check_model="yes")
    with pytest.raises(ValueError, match=r"`down_after` must be a positive number of seconds"):
        _backend(proxy.url, down_after=0)


def test_without_alias_the_label_is_the_gguf_stem_not_its_path() -> None:
    from _helpers_servers import llama_server_process

    gguf = resolve_gguf()
    with llama_server_process(gguf, alias=None) as (url, _proc):
        b = OpenAIBackend(base_url=url)
        assert b.model == gguf.stem and "/" not in b.model
        (r,) = b.generate([_req(max_tokens=2)])
        assert r.text
        # the stem is accepted as --model too, and the full path is what goes over the wire
        named = OpenAIBackend(gguf.stem, base_url=url)
        assert str(gguf) in named.check() and named.model == gguf.stem
        assert named.generate([_req(max_tokens=2)])[0].text == r.text
