"""``validate_task`` loads a package once, and the no-op's session still starts from an untouched bundle."""

from __future__ import annotations

from typing import Any

import pytest

import harness.validate as validate_module
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.bundle import TaskBundle
from harness.validate import validate_task
from tests.conftest import DEMO_DATA

TASK_DIR = DEMO_DATA / "tasks" / "demo_auto_claim_intake_001"


async def test_a_package_is_loaded_once_per_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[Any] = []
    real_load = validate_module.load_task

    def counting_load(*args: Any, **kwargs: Any) -> TaskBundle:
        loads.append(args)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(validate_module, "load_task", counting_load)
    report = await validate_task(TASK_DIR)
    assert report.ok, report.problems
    assert len(loads) == 1


async def test_what_the_oracle_session_changed_does_not_reach_the_no_op() -> None:
    seen: list[TaskBundle] = []

    def tampering_env(bundle: TaskBundle) -> InProcessEnvironment:
        if not seen:  # the oracle's session: scribble on everything it was handed
            bundle.initial_state["tampered"] = True
            bundle.gold.artifact_expectations.clear()
            bundle.task.autonomy.approval_required_for.append("everything")
        seen.append(bundle)
        return InProcessEnvironment(bundle.public_bundle())

    report = await validate_task(TASK_DIR, make_env=tampering_env)
    oracle_bundle, noop_bundle = seen
    assert oracle_bundle is not noop_bundle
    assert "tampered" not in noop_bundle.initial_state
    assert noop_bundle.gold.artifact_expectations and "everything" not in noop_bundle.task.autonomy.approval_required_for
    assert report.noop_fail, report.problems
