# Two commands do everything on a fresh clone with Python >= 3.11 and pip:
#   make demo   - create .venv, install hetsim, simulate Pipe-it's ResNet50 pipeline on hikey970
#   make test   - create .venv, install the dev extras, run the test suite
#   make fuzz   - 24,000 fuzzed inputs through the CLI: outcomes by class (docs/robustness.md)
#   make check  - the test suite, ruff (make lint) and mypy (make types): what CI runs
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test fuzz lint types check bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/hetsim demo --out results

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest

# FUZZ_CASES per target (6 targets), seeded: the same seed gives the same cases.
FUZZ_CASES ?= 2000
FUZZ_SEED  ?= 0
fuzz: $(VENV)/.installed-dev
	$(BIN)/python tests/fuzzing.py --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) --strict

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check hetsim benchmarks tests workloads platforms notebooks

types: $(VENV)/.installed-dev
	$(BIN)/mypy

check: test lint types

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) results .pytest_cache .hypothesis
