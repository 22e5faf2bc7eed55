"""``validate_task`` loads a package once; the oracle and the no-op share the bundle, which a session
leaves as loaded (tests/test_bundle_unchanged.py)."""

from __future__ import annotations

from typing import Any

import pytest

import harness.tasks.lint as lint_module
from harness.tasks.bundle import TaskBundle
from harness.validate import validate_task
from tests.conftest import DEMO_DATA

TASK_DIR = DEMO_DATA / "tasks" / "demo_auto_claim_intake_001"


async def test_a_package_is_loaded_once_per_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[Any] = []
    real_load = lint_module.load_task

    def counting_load(*args: Any, **kwargs: Any) -> TaskBundle:
        loads.append(args)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(lint_module, "load_task", counting_load)
    report = await validate_task(TASK_DIR)
    assert report.ok, report.problems
    assert len(loads) == 1
