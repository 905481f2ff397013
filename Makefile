# Two commands for a fresh machine with Python 3.11+ and make:
#   make run    set up .venv (runtime dependencies only) and start the server on 127.0.0.1:8765
#   make test   set up .venv with the dev tools too and run lint, types and the whole test suite
# The client is then .venv/bin/quoridor (see the README, "Playing in a terminal").
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
DEV := $(VENV)/.dev

.PHONY: run test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What running needs: the server's and the client's own dependencies (a few MB).
$(RUNTIME): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUNTIME)

# What testing needs on top: pytest, ruff, mypy, and the reference engine (hundreds of MB).
$(DEV): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(DEV) $(RUNTIME)

run: $(RUNTIME)
	$(BIN)/quoridor-server

lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

bench: $(DEV)
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV)
