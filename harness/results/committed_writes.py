"""The reference's reading of writes after COMMITTED, for comparisons with published numbers.

Our environment refuses a write to a COMMITTED artifact (a committed record must not change
behind the approval); the reference accepts it and leaves the lifecycle as it is. An agent that
fixes a field after submitting therefore passes WA there and fails here. To compare with published
figures, this module re-grades a session as the reference would have seen it: the refused
post-commit writes are applied, in call order, to the final artifacts, and the session is graded
again with the current graders. Our reading stays the score; this is the labelled second column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.grading.context import GradingContext
from harness.grading.gates import grade
from harness.grading.judge import FieldJudge
from harness.tasks.models import GoldSpec
from mcp_servers.records import EnvironmentSnapshot, ToolCallRecord

from .grading_inputs import GradingInputs

__all__ = ["ReferenceReading", "refused_writes_after_commit", "reference_reading"]


@dataclass(frozen=True)
class ReferenceReading:
    writes: int
    pts: int | None


def _first_commit_index(calls: list[ToolCallRecord]) -> int | None:
    return next((c.index for c in calls if c.commit_attempt and c.ok), None)


def _target(call: ToolCallRecord, snapshot: EnvironmentSnapshot) -> str | None:
    """The artifact a refused write addressed: its ``artifact_id``, else the only committed artifact."""
    args = call.args if isinstance(call.args, dict) else {}
    named = args.get("artifact_id")
    if isinstance(named, str) and named in snapshot.artifacts:
        return named
    committed = [aid for aid, art in snapshot.artifacts.items() if art.lifecycle == "COMMITTED"]
    return committed[0] if len(committed) == 1 else None


def refused_writes_after_commit(snapshot: EnvironmentSnapshot) -> list[tuple[str, dict[str, Any]]]:
    """``(artifact_id, fields)`` of every refused field write to a COMMITTED artifact after the commit."""
    committed_at = _first_commit_index(snapshot.call_log)
    if committed_at is None:
        return []
    writes = []
    for call in snapshot.call_log:
        fields = call.args.get("fields") if isinstance(call.args, dict) else None
        if call.ok or call.index <= committed_at or not isinstance(fields, dict):
            continue
        target = _target(call, snapshot)
        if target is not None and snapshot.artifacts[target].lifecycle == "COMMITTED":
            writes.append((target, fields))
    return writes


async def reference_reading(inputs: GradingInputs, gold: GoldSpec, judge: FieldJudge | None) -> ReferenceReading:
    """PTS as the reference would give it (``writes`` 0: nothing differs, ``pts`` is ``None``: not re-graded)."""
    writes = refused_writes_after_commit(inputs.snapshot)
    if not writes:
        return ReferenceReading(0, None)
    snapshot = inputs.snapshot.model_copy(deep=True)
    for artifact_id, fields in writes:
        snapshot.artifacts[artifact_id].fields.update(fields)
    report = await grade(gold, GradingContext(
        snapshot=snapshot, observed_act_keys=set(inputs.observed_act_keys), gold_doc_ids=list(inputs.gold_doc_ids),
        judge=judge,
    ))
    return ReferenceReading(len(writes), report.pts)
