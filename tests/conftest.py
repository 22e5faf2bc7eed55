"""Shared test fixtures: reference-fixture paths, the docker gate and image build, an isolated judge cache."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REFERENCE_FIXTURES = REPO.parent / "shared" / "reference-fixtures"
TOY_FORM = REFERENCE_FIXTURES / "toy_form_001"
TOY_INTERVIEW = REFERENCE_FIXTURES / "toy_interview_001"
DEMO_DATA = REPO / "harness" / "demo_data"

#: Sessions against the protocol fakes run this many times faster than the wall (the fakes answer
#: as fast as they are fed); tests marked ``wall_clock`` keep true 1× pacing.
TEST_CLOCK_SPEED = "8"


def pytest_configure(config: pytest.Config) -> None:
    # Inherited by the CLI processes the tests start, too. A value set by the caller wins.
    os.environ.setdefault("APEX_VOICE_CLOCK_SPEED", TEST_CLOCK_SPEED)


#: Markers of the tests that take longest: true 1x pacing, a Ray cluster, a module that runs whole
#: sessions once for all its tests (``xdist_group``).
_LONG_MARKERS = ("wall_clock", "ray", "xdist_group")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Schedule for two workers (``--dist loadgroup`` in ``make test-all``): the Ray tests share one
    worker (a module's cluster starts once, never on both workers at once), and the longest tests
    start first, so none of them is the tail that keeps a worker busy after the other is done."""
    for item in items:
        if item.get_closest_marker("ray") and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group("ray"))
    items.sort(key=lambda item: not any(item.get_closest_marker(name) for name in _LONG_MARKERS))


@pytest.fixture(autouse=True, scope="module")
def _wall_clock_module(request):
    """A module marked ``wall_clock`` paces its module-scoped sessions (fixtures) at 1x too."""
    marks = getattr(request.module, "pytestmark", [])
    if not any(m.name == "wall_clock" for m in (marks if isinstance(marks, list) else [marks])):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("APEX_VOICE_CLOCK_SPEED", "1")
        yield


@pytest.fixture(autouse=True)
def _wall_clock_pacing(request, monkeypatch):
    if request.node.get_closest_marker("wall_clock"):
        monkeypatch.setenv("APEX_VOICE_CLOCK_SPEED", "1")


def require_reference_fixtures() -> None:
    """Skip (never fail) when ../shared is absent: the fixtures are not part of this repository."""
    if not TOY_FORM.is_dir():
        pytest.skip("../shared/reference-fixtures not present")


def require_docker() -> None:
    """Skip without a Docker engine, but fail under CI=true, where the engine is required."""
    try:
        import docker

        docker.from_env(use_context=False).ping()
    except Exception as exc:  # any failure to reach the engine
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no Docker engine answers: {exc}")
        pytest.skip(f"no Docker engine answers: {exc}")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Build the project images once, before any Docker test starts (and starts timing).

    On a fresh machine the first build takes minutes; inside a test it would eat that test's
    timeout. Progress goes to the terminal. Without an engine nothing is built: the Docker tests
    then skip, or fail under CI=true.
    """
    if session.config.option.collectonly or not any(i.get_closest_marker("docker") for i in session.items):
        return
    try:
        import docker

        client = docker.from_env(use_context=False)
        client.ping()
    except Exception:  # no engine: each Docker test reports it
        return
    from sandbox.image_build import build_images

    reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def report(line: str) -> None:
        if reporter is not None:
            reporter.write_line(f"[images] {line}")

    started = time.monotonic()
    try:
        summary = build_images(client=client, report=report)
    except Exception as exc:  # a failed build fails the run, with its cause, before any test
        pytest.exit(f"building the project images failed: {exc}", returncode=1)
    report(f"images ready in {time.monotonic() - started:.1f} s ({'cached' if summary.all_cached else 'built'})")


@pytest.fixture(scope="session")
def docker_engine():
    """The engine (the images are built by then), or a skip; a failure under CI=true."""
    require_docker()
    import docker

    return docker.from_env(use_context=False)


@pytest.fixture(autouse=True)
def _isolated_judge_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("APEX_VOICE_JUDGE_CACHE", str(tmp_path / "judge_cache.json"))
    for var in ("APEX_VOICE_LLM_API_KEY", "OPENAI_API_KEY", "APEX_VOICE_DATA"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def toy_form() -> Path:
    require_reference_fixtures()
    return TOY_FORM


@pytest.fixture
def toy_public_dir(toy_form: Path, tmp_path: Path) -> Path:
    """The toy form's public bundle, as a sandbox backend's ``start`` takes it."""
    from harness.tasks.loader import load_task

    target = tmp_path / "public"
    load_task(toy_form).public_bundle().write(target)
    return target


@pytest.fixture
def toy_interview() -> Path:
    require_reference_fixtures()
    return TOY_INTERVIEW
