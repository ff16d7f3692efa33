"""The backend protocol, generation settings, the factory and per-request failure isolation."""

from __future__ import annotations

import pytest

from _helpers_backends import EchoBackend
from ipcausal.backends import (
    BACKEND_KINDS,
    Backend,
    BackendBase,
    BackendError,
    Choice,
    GenerationConfig,
    Request,
    Response,
    Usage,
    chat,
    generate_outcomes,
    get_backend,
    messages_of,
)


def test_get_backend_unknown_kind_names_allowed_values() -> None:
    with pytest.raises(ValueError, match=r"`kind` must be one of 'local', 'openai', 'vllm', 'simulated', got 'gpt'"):
        get_backend("gpt")
    with pytest.raises(ValueError, match=r"`kind` must be one of"):
        get_backend(None)  # type: ignore[arg-type]
    assert BACKEND_KINDS == ("local", "openai", "vllm", "simulated")


def test_lazy_public_names() -> None:
    import ipcausal

    assert ipcausal.get_backend is get_backend
    from ipcausal.study.run import run

    assert ipcausal.run is run


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_tokens": 0}, r"`max_tokens` must be a positive integer"),
        ({"max_tokens": True}, r"`max_tokens` must be a positive integer"),
        ({"temperature": -0.1}, r"`temperature` must be a number in \[0, 5\]"),
        ({"temperature": True}, r"`temperature` must be a number"),
        ({"top_p": 0.0}, r"`top_p` must be in \(0, 1\]"),
        ({"seed": -1}, r"`seed` must be an integer in \[0, 2\*\*31\) or None"),
        ({"seed": 1.5}, r"`seed` must be an integer"),
        ({"stop": "###"}, r"`stop` must be a tuple of non-empty strings"),
        ({"stop": None}, r"`stop` must be a tuple of non-empty strings"),
        ({"stop": ("",)}, r"`stop` must be a tuple of non-empty strings"),
        ({"n": 0}, r"`n` must be a positive integer"),
        ({"repeat_penalty": 0}, r"`repeat_penalty` must be positive"),
        ({"logprobs": 1}, r"`logprobs` must be True or False"),
    ],
)
def test_generation_config_validation(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GenerationConfig(**kwargs)


def test_generation_config_round_trip_and_sample_seed() -> None:
    cfg = GenerationConfig(stop=["a", "b"], seed=5)
    assert cfg.stop == ("a", "b")
    assert cfg.to_dict()["stop"] == ["a", "b"]
    assert [cfg.sample_seed(k) for k in range(3)] == [5, 6, 7]
    assert GenerationConfig(seed=None).sample_seed(3) is None
    with pytest.raises(ValueError, match=r"`index` must be a non-negative integer"):
        cfg.sample_seed(-1)


def test_messages_of_validation() -> None:
    assert messages_of("hi", system="be brief") == (
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    )
    with pytest.raises(ValueError, match=r"`messages` must not be empty"):
        messages_of([])
    with pytest.raises(ValueError, match=r"`messages`: role must be one of"):
        messages_of([{"role": "robot", "content": "x"}])
    with pytest.raises(ValueError, match=r"`messages` must be dicts with exactly the keys 'role' and 'content'"):
        messages_of([{"role": "user", "content": "x", "name": "bob"}])
    with pytest.raises(TypeError, match=r"`prompt` must be text"):
        messages_of(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`config` must be a GenerationConfig"):
        Request(messages_of("x"), config={"max_tokens": 3})  # type: ignore[arg-type]


def test_echo_backend_is_a_backend_and_chat_works() -> None:
    b = EchoBackend()
    assert isinstance(b, Backend)
    assert chat(b, "hello") == "echo:hello"
    with pytest.raises(TypeError, match=r"`backend` must implement"):
        chat(object(), "hello")  # type: ignore[arg-type]


def test_generate_outcomes_isolates_failures_of_a_protocol_only_backend() -> None:
    b = EchoBackend()
    reqs = [Request(messages_of(t)) for t in ("a", "FAIL b", "c")]
    seen: list[int] = []
    outs = generate_outcomes(b, reqs, on_result=lambda i, o: seen.append(i), concurrency=2)
    assert isinstance(outs[0], Response) and outs[0].text == "echo:a"
    assert isinstance(outs[1], BackendError) and "refused" in str(outs[1])
    assert isinstance(outs[2], Response) and outs[2].text == "echo:c"
    assert sorted(seen) == [0, 1, 2]
    with pytest.raises(TypeError, match=r"`requests` must be a sequence of Request"):
        generate_outcomes(b, Request(messages_of("x")))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`requests` must hold Request objects"):
        generate_outcomes(b, ["x"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"`concurrency` must be a positive integer"):
        generate_outcomes(b, reqs, concurrency=0)
    with pytest.raises(TypeError, match=r"`backend` must implement"):
        generate_outcomes(object(), reqs)  # type: ignore[arg-type]


class _Upper(BackendBase):
    """A minimal BackendBase subclass: upper-cases the prompt, fails on 'x'."""

    kind = "upper"
    model = "upper-1"

    def _outcomes(self, requests, on_result, concurrency):  # type: ignore[no-untyped-def]
        outs = []
        for i, r in enumerate(requests):
            text = r.messages[-1]["content"]
            out = BackendError("no x") if text == "x" else Response((Choice(text.upper()),), self.model, None, 3, 1)
            outs.append(out)
            on_result(i, out)
        return outs


def test_backend_base_usage_generate_and_close() -> None:
    with _Upper() as b:
        assert b.generate([Request(messages_of("ab"))])[0].text == "AB"
        with pytest.raises(BackendError, match="no x"):
            b.generate([Request(messages_of("x"))])
        assert b.usage == Usage(requests=1, failures=1, prompt_tokens=3, completion_tokens=1)
        assert b.usage.total_tokens == 4
        assert b.generate([]) == []
        assert "upper-1" in repr(b)
    with pytest.raises(BackendError, match="closed"):
        b.generate([Request(messages_of("ab"))])


def test_vllm_backend_validation_and_install_hint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=r"`model`: no model folder or file"):
        get_backend("vllm", model=str(tmp_path / "missing"))
    with pytest.raises(ValueError, match=r"`tensor_parallel_size` must be a positive integer"):
        get_backend("vllm", model=str(tmp_path), tensor_parallel_size=0)
    with pytest.raises(ValueError, match=r"`distributed_executor_backend` must be one of"):
        get_backend("vllm", model=str(tmp_path), distributed_executor_backend="slurm")
    with pytest.raises(ValueError, match=r"`model` must name a model folder"):
        get_backend("vllm", model="")
    with pytest.raises(ValueError, match=r"`batch_size` must be a positive integer"):
        get_backend("vllm", model=str(tmp_path), batch_size=0)
    with pytest.raises(ValueError, match=r"`seed` must be an integer"):
        get_backend("vllm", model=str(tmp_path), seed="0")
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r"pip install 'ipcausal\[vllm\]'"):
            get_backend("vllm", model=str(tmp_path))


def test_default_cache_path_sits_next_to_the_output() -> None:
    from ipcausal.commands.run import default_cache_path

    assert default_cache_path("out/run.csv").as_posix() == "out/run.csv.cache.sqlite"
    with pytest.raises(ValueError, match=r"`out` must be a file path"):
        default_cache_path("")
