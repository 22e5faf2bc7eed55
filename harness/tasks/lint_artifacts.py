"""Gold expectations must be achievable with the task's tools.

A gold field that no tool can write, or a lifecycle no tool can reach, makes the task unpassable
for every agent (including the oracle) — the kind of mistake that otherwise surfaces only as a 0%
pass rate after a campaign.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_servers.public_models import LifecycleState

from .artifact_reach import ArtifactReach, artifact_reach
from .bundle import TaskBundle
from .gold_predicates import iter_predicates
from .lint_issue import LintIssue
from .package_paths import gold_file

__all__ = ["lint_artifacts"]

_ARTIFACT_PREDICATES = {
    "artifact_field_equals", "artifact_field_present", "artifact_not_stale", "artifact_lifecycle_at_least",
}
_FIELD_PREDICATES = {"artifact_field_equals", "artifact_field_present"}


def lint_artifacts(bundle: TaskBundle) -> Iterator[LintIssue]:
    reach = artifact_reach(bundle.workspace.artifacts, bundle.tools)
    yield from _expectations(bundle, reach)
    yield from _predicates(bundle, reach)
    yield from _expected_repairs(bundle, reach)


def _expectations(bundle: TaskBundle, reach: dict[str, ArtifactReach]) -> Iterator[LintIssue]:
    rel = gold_file(bundle.task)
    for index, expectation in enumerate(bundle.gold.artifact_expectations):
        entry = reach.get(expectation.artifact_id)
        if entry is None:
            continue  # the loader already refuses unknown artifact ids
        path = f"artifact_expectations[{index}]"
        for number, expected in enumerate(expectation.fields):
            if not entry.can_produce(expected.field):
                yield LintIssue(
                    "error", rel, f"{path}.fields[{number}].field",
                    f"{expected.field!r} can never be written: {entry.why_not(expectation.artifact_id)}",
                )
        if expectation.lifecycle_min is not None:
            yield from _lifecycle(rel, f"{path}.lifecycle_min", expectation.artifact_id, expectation.lifecycle_min, entry)


def _predicates(bundle: TaskBundle, reach: dict[str, ArtifactReach]) -> Iterator[LintIssue]:
    rel = gold_file(bundle.task)
    for path, predicate in iter_predicates(bundle.gold):
        if predicate.kind not in _ARTIFACT_PREDICATES:
            continue
        artifact_id = predicate.args.get("artifact_id")
        entry = reach.get(str(artifact_id))
        if entry is None:
            yield LintIssue(
                "error", rel, f"{path}.args.artifact_id",
                f"{artifact_id!r} is not an artifact of {bundle.task.initial_workspace}",
            )
            continue
        name = predicate.args.get("field")
        if predicate.kind in _FIELD_PREDICATES and not entry.can_produce(str(name)):
            yield LintIssue(
                "error", rel, f"{path}.args.field", f"{name!r} can never be written: {entry.why_not(str(artifact_id))}"
            )
        if predicate.kind == "artifact_lifecycle_at_least":
            state = predicate.args.get("state")
            if state not in LifecycleState.__members__:
                yield LintIssue(
                    "error", rel, f"{path}.args.state",
                    f"{state!r} is not one of {', '.join(LifecycleState.__members__)}",
                )
            else:
                yield from _lifecycle(rel, f"{path}.args.state", str(artifact_id), LifecycleState(state), entry)


def _lifecycle(
    rel: str, path: str, artifact_id: str, state: LifecycleState, entry: ArtifactReach
) -> Iterator[LintIssue]:
    if entry.reaches(state):
        return
    needed = "a commit tool" if state == LifecycleState.COMMITTED else "a set_lifecycle tool able to reach it or a commit tool"
    yield LintIssue(
        "error", rel, path, f"{state.value!r} is unreachable for artifact {artifact_id!r}: needs {needed}"
    )


def _expected_repairs(bundle: TaskBundle, reach: dict[str, ArtifactReach]) -> Iterator[LintIssue]:
    rel = bundle.task.event_program
    for index, event in enumerate(bundle.events.events):
        for number, target in enumerate(event.expected_repairs):
            artifact_id, _, name = target.partition(".")
            entry = reach.get(artifact_id)
            path = f"events[{index}].expected_repairs[{number}]"
            if entry is None:
                yield LintIssue(
                    "error", rel, path,
                    f"{target!r} names no artifact of {bundle.task.initial_workspace} (expected '<artifact_id>.<field>')",
                )
            elif entry.schema_fields is not None and name not in entry.schema_fields:
                yield LintIssue("error", rel, path, f"{name!r} is not a field of the {artifact_id!r} schema")
