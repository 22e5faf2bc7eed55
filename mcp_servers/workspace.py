"""The typed, versioned workspace of artifacts the agent fills in.

Field keys are flat strings (``technical_depth.evidence`` is one key, not a path). Writing a field
clears its staleness and marks its schema ``dependents`` stale, so a correction upstream forces the
agent to revisit what was derived from it. Every write is a :class:`MutationRecord` with a global
sequence number. Policy (who may write, what is valid) lives in the tool handlers, not here.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .public_models import ArtifactSchema, InitialWorkspace, LifecycleState
from .record_copy import copy_json, copy_records
from .records import ArtifactSnapshot, MutationRecord

__all__ = ["Artifact", "Workspace"]


@dataclass
class Artifact:
    artifact_id: str
    artifact_type: str
    lifecycle: LifecycleState
    schema: ArtifactSchema | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    stale_fields: set[str] = field(default_factory=set)

    @property
    def is_committed(self) -> bool:
        return self.lifecycle == LifecycleState.COMMITTED

    def snapshot(self) -> ArtifactSnapshot:
        return ArtifactSnapshot(
            artifact_id=self.artifact_id,
            artifact_type=self.artifact_type,
            lifecycle=self.lifecycle.value,
            fields=copy_json(self.fields),
            stale_fields=sorted(self.stale_fields),
        )


class Workspace:
    """All artifacts of one session plus the global version history."""

    def __init__(self, initial: InitialWorkspace) -> None:
        self._artifacts: dict[str, Artifact] = {
            artifact_id: Artifact(
                artifact_id=artifact_id,
                artifact_type=definition.artifact_type,
                lifecycle=definition.lifecycle,
                schema=definition.schema_,
                fields=copy.deepcopy(definition.fields),
            )
            for artifact_id, definition in initial.artifacts.items()
        }
        self._versions: list[MutationRecord] = []

    @property
    def artifact_ids(self) -> list[str]:
        return list(self._artifacts)

    def get(self, artifact_id: str) -> Artifact | None:
        return self._artifacts.get(artifact_id)

    def write(
        self,
        artifact_id: str,
        path: str,
        value: Any,
        *,
        media_time_ms: int,
        wall_time_ns: int = 0,
        causal_events: list[str] | None = None,
        cause: str = "",
    ) -> MutationRecord:
        """Store a copy of ``value`` under the flat key ``path`` and propagate staleness."""
        artifact = self._artifacts[artifact_id]
        record = MutationRecord(
            seq=len(self._versions),
            artifact_id=artifact_id,
            path=path,
            old=copy_json(artifact.fields.get(path)),
            new=copy_json(value),
            media_time_ms=media_time_ms,
            wall_time_ns=wall_time_ns,
            causal_events=list(causal_events or []),
            cause=cause,
        )
        artifact.fields[path] = copy.deepcopy(value)
        artifact.stale_fields.discard(path)
        spec = artifact.schema.field(path) if artifact.schema else None
        if spec is not None:
            artifact.stale_fields.update(spec.dependents)
        self._versions.append(record)
        return record

    def mark_stale(self, artifact_id: str, path: str) -> None:
        self._artifacts[artifact_id].stale_fields.add(path)

    def set_lifecycle(self, artifact_id: str, state: LifecycleState) -> None:
        self._artifacts[artifact_id].lifecycle = state

    def snapshot(self) -> dict[str, ArtifactSnapshot]:
        return {artifact_id: artifact.snapshot() for artifact_id, artifact in self._artifacts.items()}

    def records_since(self, start: int) -> list[MutationRecord]:
        return copy_records(self._versions[start:])

    @property
    def versions(self) -> list[MutationRecord]:
        return copy_records(self._versions)
