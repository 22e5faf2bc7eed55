"""What the task's tools can do to each artifact: which fields they can write, how far its lifecycle goes.

Bindings follow the built-in handlers (reference §2.6): a tool acts on an artifact named by its
``effect.artifact_id`` or on any artifact when it takes an ``artifact_id`` parameter. Only a
``commit`` tool reaches ``COMMITTED``: in this project the commit guard is the only path there, so
``set_lifecycle`` is capped at ``APPROVED``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_servers.public_models import LIFECYCLE_ORDER, ArtifactDef, LifecycleState, ToolSet, ToolSpec

__all__ = ["ArtifactReach", "artifact_reach"]

_SET_LIFECYCLE_CAP = LifecycleState.APPROVED


@dataclass
class ArtifactReach:
    """Capabilities of the tool set on one artifact."""

    initial_fields: set[str]
    schema_fields: set[str] | None
    update_tools: list[str] = field(default_factory=list)
    commit_tools: list[str] = field(default_factory=list)
    committed_fields: set[str] = field(default_factory=set)
    max_lifecycle: int = 0

    def can_produce(self, name: str) -> bool:
        """True when the field is initially present, set on commit, or writable by an update tool."""
        if name in self.initial_fields or name in self.committed_fields:
            return True
        return bool(self.update_tools) and (self.schema_fields is None or name in self.schema_fields)

    def why_not(self, artifact_id: str) -> str:
        """Why a field outside :meth:`can_produce` stays unwritten."""
        if not self.update_tools:
            return f"no tool writes artifact {artifact_id!r} (no update_artifact tool bound to it, no commit set_fields)"
        return f"not a field of the {artifact_id!r} schema (fields: {', '.join(sorted(self.schema_fields or ()))})"

    def reaches(self, state: LifecycleState) -> bool:
        return self.max_lifecycle >= LIFECYCLE_ORDER.index(state.value)


def artifact_reach(artifacts: dict[str, ArtifactDef], tools: ToolSet) -> dict[str, ArtifactReach]:
    reach: dict[str, ArtifactReach] = {}
    for artifact_id, artifact in artifacts.items():
        schema = artifact.schema_
        entry = ArtifactReach(
            initial_fields=set(artifact.fields),
            schema_fields={f.name for f in schema.fields} if schema else None,
            max_lifecycle=LIFECYCLE_ORDER.index(artifact.lifecycle.value),
        )
        for tool in tools.tools:
            if _binds(tool, artifact_id):
                _HANDLER_REACH.get(tool.handler or "", _no_reach)(entry, tool)
        reach[artifact_id] = entry
    return reach


def _binds(tool: ToolSpec, artifact_id: str) -> bool:
    return tool.effect.get("artifact_id") == artifact_id or any(p.name == "artifact_id" for p in tool.params)


def _raise_to(entry: ArtifactReach, state: LifecycleState) -> None:
    entry.max_lifecycle = max(entry.max_lifecycle, LIFECYCLE_ORDER.index(state.value))


def _update_reach(entry: ArtifactReach, tool: ToolSpec) -> None:
    entry.update_tools.append(tool.name)
    _raise_to(entry, LifecycleState.DRAFT)


def _set_lifecycle_reach(entry: ArtifactReach, tool: ToolSpec) -> None:
    cap = LIFECYCLE_ORDER.index(_SET_LIFECYCLE_CAP.value)
    if any(p.name == "state" for p in tool.params):
        target = cap
    elif tool.effect.get("state") in LIFECYCLE_ORDER:
        target = min(LIFECYCLE_ORDER.index(tool.effect["state"]), cap)
    else:
        return
    entry.max_lifecycle = max(entry.max_lifecycle, target)


def _commit_reach(entry: ArtifactReach, tool: ToolSpec) -> None:
    entry.commit_tools.append(tool.name)
    entry.committed_fields.update((tool.effect.get("set_fields") or {}).keys())
    _raise_to(entry, LifecycleState.COMMITTED)


def _no_reach(entry: ArtifactReach, tool: ToolSpec) -> None:
    """Handlers that never touch an artifact (search, lookup, approval requests)."""


_HANDLER_REACH = {
    "update_artifact": _update_reach,
    "set_lifecycle": _set_lifecycle_reach,
    "commit": _commit_reach,
}
