"""``apex-voice validate``: is a task package fit to measure agents with?

A package is valid when it loads, passes the cross-file lint, the oracle reaches PTS 1 in C0 with
no leakage, and an inactive agent does not pass. Every problem is one line that names the file,
the gate, the predicate or the field, so an author can fix it without reading a traceback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from harness.agents.text_agents import NoOpAgent, ScriptedAgent, TextAgent
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import TextSessionResult, run_text_session
from harness.tasks.bundle import TaskBundle
from harness.tasks.checksums import ChecksumManifest
from harness.tasks.lint import check_package
from mcp_servers.public_bundle import PublicBundle

__all__ = ["ValidationReport", "validate_task"]

#: A session's environment, from the public part of the task (both sessions of a validation share it:
#: an environment copies what it changes, tests/test_bundle_unchanged.py).
EnvironmentFactory = Callable[[PublicBundle], object]


class ValidationReport(BaseModel):
    """One task's verdict; the ``--json`` output is one of these per line."""

    task_id: str
    ok: bool = False
    loaded: bool = False
    lint_ok: bool = False
    oracle_pass: bool = False
    noop_fail: bool = False
    problems: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


def _in_process(public: PublicBundle) -> InProcessEnvironment:
    return InProcessEnvironment(public)


async def _session(
    bundle: TaskBundle, public: PublicBundle, agent: TextAgent, make_env: EnvironmentFactory
) -> TextSessionResult:
    return await run_text_session(bundle, agent, make_env(public))  # type: ignore[arg-type]


def _why_failed(result: TextSessionResult) -> str:
    reasons = result.grade.explain()
    return "; ".join(reasons[:4]) if reasons else result.outcome


async def validate_task(
    task_dir: Path,
    *,
    checksums: ChecksumManifest | None = None,
    make_env: EnvironmentFactory = _in_process,
) -> ValidationReport:
    """Validate one package; never raises for a bad package."""
    report = ValidationReport(task_id=task_dir.name)
    # Reading and hashing the package is file work: off the loop, where a sandbox may be serving.
    checked = await asyncio.to_thread(check_package, task_dir, checksums=checksums)
    report.problems += checked.problems
    report.warnings += checked.warnings
    bundle = checked.bundle
    if bundle is None:
        return report
    report.task_id = bundle.task_id
    report.loaded = True
    report.lint_ok = not report.problems

    public = bundle.public_bundle()
    if bundle.policy is None:
        report.problems.append("oracle: task has no reference/policy.yaml")
    else:
        oracle = await _session(bundle, public, ScriptedAgent.oracle(bundle.policy), make_env)
        report.oracle_pass = oracle.pts == 1 and not oracle.leakage_violations
        if oracle.pts != 1:
            report.problems.append(f"oracle: did not pass ({oracle.outcome}): {_why_failed(oracle)}")
        if oracle.leakage_violations:
            report.problems.append(f"oracle: leakage {oracle.leakage_violations}")

    # A session leaves its bundles as loaded (tests/test_bundle_unchanged.py), so both share them.
    noop = await _session(bundle, public, NoOpAgent(), make_env)
    report.noop_fail = noop.pts == 0
    if not report.noop_fail:
        report.problems.append("no-op: an inactive agent passes the task")

    report.ok = report.loaded and report.lint_ok and report.oracle_pass and report.noop_fail
    return report
