# Two entry points for a new machine: `make demo` and `make test`.
# Each creates .venv (if missing) and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-all typecheck images venv clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# The main job: the oracle agent on the bundled demo suite, full duplex, no keys needed. Sessions
# run in Docker whenever an engine answers (`run` builds the server image first, with progress) and
# `run` prints why it chose its sandbox.
demo: $(STAMP)
	$(BIN)/apex-voice validate
	$(BIN)/apex-voice run

# The sandbox images (built offline from Debian packages when no base image is present).
images: $(STAMP)
	$(BIN)/apex-voice images build

# The fast tier, for every change: no Docker, no wall-clock pacing, no whole CLI campaigns.
FAST := not slow and not docker and not ray
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto -m "$(FAST)" $(PYTEST_ARGS)

# Every tier (what CI runs): the images first, with progress, then the whole suite in parallel.
test-all: images
	$(BIN)/python -m pytest -q -n auto --durations=10 $(PYTEST_ARGS)

# The type checker over the four packages ([tool.mypy] in pyproject.toml); CI runs it before the tests.
typecheck: $(STAMP)
	$(BIN)/mypy harness mcp_servers sandbox tui

clean:
	rm -rf $(VENV) build *.egg-info
