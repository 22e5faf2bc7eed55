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
FAST := not slow and not docker and not ray and not pipecat
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto -m "$(FAST)" $(PYTEST_ARGS)

# Every tier (what CI runs). The sandbox images build in the background (build/images.log: most of a
# fresh build waits on downloads and the engine) while the tests that need no Docker run; the Docker
# tests run once the images are ready. Each run prints its 10 slowest tests; `--dist loadgroup` keeps
# a module that shares one expensive setup on one worker (tests/conftest.py schedules the longest first).
test-all: $(STAMP)
	@mkdir -p build
	@$(BIN)/apex-voice images build > build/images.log 2>&1 & images=$$!; \
	status=0; \
	$(BIN)/python -m pytest -q -n auto --dist loadgroup --durations=10 -m "not docker and not pipecat" $(PYTEST_ARGS) || status=$$?; \
	echo "test-all: the Docker tier waits for the images (build/images.log)"; \
	if ! wait $$images; then tail -n 40 build/images.log; echo "test-all: building the images failed"; exit 1; fi; \
	tail -n 1 build/images.log; \
	$(BIN)/python -m pytest -q -n auto --dist loadgroup --durations=10 -m "docker and not pipecat" $(PYTEST_ARGS) || status=$$?; \
	exit $$status

# The type checker over the four packages ([tool.mypy] in pyproject.toml); CI runs it before the tests.
typecheck: $(STAMP)
	$(BIN)/mypy harness mcp_servers sandbox tui

clean:
	rm -rf $(VENV) build *.egg-info
