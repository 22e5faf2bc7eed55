"""Shared test fixtures: reference-fixture paths, the docker gate, an isolated judge cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REFERENCE_FIXTURES = REPO.parent / "shared" / "reference-fixtures"
TOY_FORM = REFERENCE_FIXTURES / "toy_form_001"
TOY_INTERVIEW = REFERENCE_FIXTURES / "toy_interview_001"
DEMO_DATA = REPO / "harness" / "demo_data"


def require_reference_fixtures() -> None:
    """Skip (never fail) when ../shared is absent: the fixtures are not part of this repository."""
    if not TOY_FORM.is_dir():
        pytest.skip("../shared/reference-fixtures not present")


def require_docker() -> None:
    """Skip without a Docker engine, but fail under CI=true, where the engine is required."""
    try:
        import docker

        docker.from_env().ping()
    except Exception as exc:  # any failure to reach the engine
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no Docker engine answers: {exc}")
        pytest.skip(f"no Docker engine answers: {exc}")


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
def toy_interview() -> Path:
    require_reference_fixtures()
    return TOY_INTERVIEW
