# Two commands for a fresh machine with Python 3.11+ and make:
#   make run    set up .venv (runtime dependencies only) and start the server on 127.0.0.1:8765
#               (its compiled build where this machine has a C compiler: see COMPILE below)
#   make test   set up .venv with the dev tools too and run lint, types and the whole test suite
# The client is then .venv/bin/quoridor (see the README, "Playing in a terminal").
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
DEV := $(VENV)/.dev
# setuptools boxes a warning on every editable install of this layout (folders named like the
# packages "may take precedence"): nothing to act on, and 30 lines a newcomer reads as trouble.
INSTALL := PYTHONWARNINGS=ignore::UserWarning $(BIN)/python -m pip install --quiet -e

.PHONY: run run-compiled test lint bench clean

$(BIN)/python:
	@echo "setting up $(VENV) (once; the dependencies are a few MB)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What running needs: the server's and the client's own dependencies (a few MB).
$(RUNTIME): pyproject.toml | $(BIN)/python
	$(INSTALL) .
	touch $(RUNTIME)

# What testing needs on top: pytest, ruff, mypy, and the reference engine (hundreds of MB).
$(DEV): pyproject.toml | $(BIN)/python
	$(INSTALL) '.[dev]'
	touch $(DEV) $(RUNTIME)

# The compiled build: the same server with its engine and move path compiled to C by mypyc
# (deploy/compile.py), about 1.7x the moves a core. `make run` starts it where a C compiler
# and Python's headers are there (it is built first, about a minute, and rebuilt whenever a
# file of the packages changed since: it is a copy of them, the browser client's files too),
# and the interpreted server elsewhere, saying why. `make run COMPILE=no` skips the build.
# The server replaces the recipe's shell (exec): one process of that name, whose id is the one
# in the database's lock file, for a script's SIGTERM.
COMPILE ?= $(shell $(PYTHON) -m deploy.compile --check >/dev/null 2>&1 && echo yes)

ifeq ($(COMPILE),yes)
run: run-compiled
else
run: $(RUNTIME)
	@$(PYTHON) -m deploy.compile --check 2>&1 || true
	exec $(BIN)/quoridor-server
endif

COMPILER := $(VENV)/.compiler
COMPILED := $(VENV)/compiled/BUILD.json
SOURCES := $(shell find engine protocol server client web -type f -not -path '*/__pycache__/*' 2>/dev/null)

$(COMPILER): pyproject.toml | $(BIN)/python
	$(INSTALL) '.[compile]'
	touch $(COMPILER) $(RUNTIME)

$(COMPILED): $(SOURCES) deploy/compile.py $(COMPILER)
	$(BIN)/python -m deploy.compile --out $(VENV)/compiled

run-compiled: $(RUNTIME) $(COMPILED)
	PYTHONPATH=$(VENV)/compiled exec $(BIN)/quoridor-server

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
