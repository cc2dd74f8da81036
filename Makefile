# Two commands do everything on a fresh clone with Python >= 3.11 and pip:
#   make demo   - create .venv, install hetsim, simulate Pipe-it's ResNet50 pipeline on hikey970
#   make test   - create .venv, install the dev extras and the example plugin, run the test suite
#   make test-core - the core's tests (not slow) with every plugin left out: no paper is needed
#   make fuzz   - 24,000 fuzzed inputs through the CLI: outcomes by class (docs/robustness.md)
#   make check  - the test suite, ruff (make lint) and mypy (make types): what CI runs
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-core fuzz lint types check bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# The example plugin (examples/hetsim-example, docs/extending.md) is installed next to hetsim, as a
# third-party plugin would be: the test suite exercises it.
$(VENV)/.installed-dev: pyproject.toml examples/hetsim-example/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]' -e examples/hetsim-example
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/hetsim demo --out results

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest

# Every installed plugin (the papers, the host tool, the example) left out, as if deleted: the core's
# tests must not need any of them (HETSIM_DISABLE_PLUGINS, hetsim/plugins.py).
PLUGINS = $(BIN)/python -c "from importlib.metadata import entry_points as e; \
	print(','.join(sorted({p.name for p in e(group='hetsim.plugins')})))"
test-core: $(VENV)/.installed-dev
	HETSIM_DISABLE_PLUGINS=$$($(PLUGINS)) $(BIN)/python -m pytest tests -m "not slow" -p no:cacheprovider

# FUZZ_CASES per target (6 targets), seeded: the same seed gives the same cases.
FUZZ_CASES ?= 2000
FUZZ_SEED  ?= 0
fuzz: $(VENV)/.installed-dev
	$(BIN)/python tests/fuzzing.py --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) --strict

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check hetsim hetsim_papers hetsim_host benchmarks tests workloads platforms notebooks examples conftest.py

types: $(VENV)/.installed-dev
	$(BIN)/mypy

check: test lint types

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) results .pytest_cache .hypothesis
