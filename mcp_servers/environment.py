"""One session's task environment: the object the MCP server and the in-process port both wrap.

It owns the world state, the workspace, the commit guard, the knowledge base and the tool runtime,
and exposes exactly the operations a session needs: agent tool calls (which never raise), the
user's approvals and revocations, event effects, the tool schemas and the final snapshot. A lock
serializes every operation so a threaded server cannot interleave two calls.

For persistence it also gives its changes since the last time it was asked (:meth:`journal_changes`:
new log records, artifacts that changed, the state after it changed), so a server appends what one
call did instead of rewriting a snapshot that grows with the session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from .commit_guard import CommitGuard
from .knowledge_base import KnowledgeBase
from .public_bundle import PublicBundle
from .record_copy import copy_record
from .records import ApprovalToken, EnvironmentSnapshot, SnapshotDelta, ToolCallRecord
from .state_store import StateStore
from .tool_handlers import EnvironmentParts
from .tool_runtime import ToolRuntime
from .tool_schema import realtime_tool_schemas
from .workspace import Workspace

__all__ = ["TaskEnvironment"]


def _media_time(value: Any) -> int:
    """Media time as an int; anything unusable counts as 0 rather than failing the call."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0


class TaskEnvironment:
    def __init__(self, bundle: PublicBundle, *, wall_clock_ns: Callable[[], int] = time.time_ns) -> None:
        """``wall_clock_ns`` stamps records; pass a constant clock for byte-identical replays."""
        self._bundle = bundle
        self._parts = EnvironmentParts(
            state=StateStore(bundle.initial_state),
            workspace=Workspace(bundle.workspace),
            guard=CommitGuard(bundle.approval_required_for),
            knowledge=KnowledgeBase(bundle.documents),
        )
        self._runtime = ToolRuntime(bundle.tools, self._parts, wall_clock_ns)
        self._pending: tuple[str, str] | None = None
        self._media_time_ms = 0
        self._lock = threading.RLock()
        self._journaled: dict[str, Any] = {}

    @property
    def task_id(self) -> str:
        return self._bundle.task_id

    @property
    def media_time_ms(self) -> int:
        """The latest media time of anything applied so far: a call, grant, revocation or event."""
        with self._lock:
            return self._media_time_ms

    @property
    def pending_approval(self) -> tuple[str, str] | None:
        """The latest ``(action_type, target_id)`` the agent asked approval for.

        Cleared once an authorized commit of that scope happens, so an old request cannot be
        approved (and committed) a second time without the agent asking again.
        """
        return self._pending

    def call_tool(self, name: str, args: Any, media_time_ms: int = 0) -> ToolCallRecord:
        """Execute one agent tool call; every outcome, including refusals, is a logged record."""
        with self._lock:
            record = self._runtime.call(name, args, self._advance(media_time_ms))
            if record.approval_request is not None:
                self._pending = (record.approval_request["action_type"], record.approval_request["target_id"])
            elif record.auth_decision == "AUTHORIZED" and record.result:
                if self._pending == (record.result.get("action_type"), record.result.get("target_id")):
                    self._pending = None
            return copy_record(record)

    def call_record(self, index: int) -> ToolCallRecord | None:
        """One call-log record by index (a copy), without building a whole snapshot."""
        with self._lock:
            return self._runtime.record(index)

    def grant_approval(
        self, action_type: str, target_id: str, media_time_ms: int, source_event_id: str | None = None
    ) -> ApprovalToken:
        with self._lock:
            return self._parts.guard.grant(
                action_type, target_id, self._advance(media_time_ms), source_event_id
            )

    def revoke_approval(self, action_type: str, target_id: str, media_time_ms: int) -> list[str]:
        with self._lock:
            return self._parts.guard.revoke(action_type, target_id, self._advance(media_time_ms))

    def apply_event(
        self, event_id: str, *, stale_fields: list[str], world_updates: dict[str, Any], media_time_ms: int
    ) -> None:
        """Apply a fired event: mark ``"<artifact_id>.<field>"`` entries stale, then update the world.

        Raises ``ValueError`` (before changing anything) for an entry that names no known artifact:
        that is a task-authoring error, not something the agent did.
        """
        with self._lock:
            targets = [entry.partition(".") for entry in stale_fields]
            for entry, (artifact_id, dot, field) in zip(stale_fields, targets, strict=True):
                if not dot or not field or self._parts.workspace.get(artifact_id) is None:
                    raise ValueError(
                        f"event {event_id!r}: stale field {entry!r} is not '<artifact_id>.<field>' "
                        f"of a known artifact ({', '.join(self._parts.workspace.artifact_ids)})"
                    )
            at = self._advance(media_time_ms)
            for artifact_id, _, field in targets:
                self._parts.workspace.mark_stale(artifact_id, field)
            self._parts.state.apply_updates(world_updates, media_time_ms=at, cause=f"event:{event_id}")

    def tool_schemas(self) -> list[dict[str, Any]]:
        return realtime_tool_schemas(self._bundle.tools, self._bundle.workspace)

    @property
    def call_count(self) -> int:
        return self._runtime.call_count

    def snapshot(self) -> EnvironmentSnapshot:
        with self._lock:
            return EnvironmentSnapshot(
                state=self._parts.state.as_dict(),
                artifacts=self._parts.workspace.snapshot(),
                versions=self._parts.workspace.versions,
                world_mutations=self._parts.state.history,
                call_log=self._runtime.call_log,
                approval_log=self._parts.guard.log,
                tokens=self._parts.guard.tokens,
                search_log=self._parts.knowledge.log,
                media_time_ms=self._media_time_ms,
                calls_not_logged=self._runtime.calls_not_logged,
            )

    def snapshot_since(self, cursor: dict[str, int]) -> SnapshotDelta:
        """The records each log gained after ``cursor`` (counts per log), and the small parts whole."""
        with self._lock:
            sources = self._log_sources()
            unknown = set(cursor) - set(sources)
            if unknown:
                raise ValueError(f"snapshot cursor: unknown logs {sorted(unknown)}; expected {sorted(sources)}")
            return SnapshotDelta(
                state=self._parts.state.as_dict(),
                artifacts=self._parts.workspace.snapshot(),
                tokens=self._parts.guard.tokens,
                media_time_ms=self._media_time_ms,
                calls_not_logged=self._runtime.calls_not_logged,
                **{key: source.records_since(max(0, int(cursor.get(key, 0)))) for key, source in sources.items()},
            )

    def _log_sources(self) -> dict[str, Any]:
        """Snapshot list field -> the part that appends to it (each has ``records_since``)."""
        return {
            "call_log": self._runtime,
            "versions": self._parts.workspace,
            "world_mutations": self._parts.state,
            "approval_log": self._parts.guard,
            "search_log": self._parts.knowledge,
        }

    def _replaceable(self) -> dict[str, Any]:
        """The snapshot fields a journal entry replaces whole (small, or rarely changed)."""
        return {
            "tokens": [token.model_dump(mode="json") for token in self._parts.guard.tokens],
            "media_time_ms": self._media_time_ms,
            "calls_not_logged": self._runtime.calls_not_logged,
        }

    def journal_base(self) -> dict[str, Any]:
        """The whole snapshot as JSON; :meth:`journal_changes` reports what happens after it."""
        with self._lock:
            snapshot = self.snapshot().model_dump(mode="json")
            self._journaled = {
                "counts": {key: len(snapshot[key]) for key in self._log_sources()},
                "artifacts": snapshot["artifacts"],
                "replaceable": self._replaceable(),
            }
            return snapshot

    def journal_changes(self) -> dict[str, Any] | None:
        """What changed since the base or the previous call (``None``: nothing); see ``state_file``."""
        with self._lock:
            append: dict[str, list[Any]] = {}
            for key, source in self._log_sources().items():
                new = source.records_since(self._journaled["counts"][key])
                if new:
                    append[key] = [record.model_dump(mode="json") for record in new]
                    self._journaled["counts"][key] += len(new)
            replace: dict[str, Any] = {}
            artifacts = {aid: a.model_dump(mode="json") for aid, a in self._parts.workspace.snapshot().items()}
            changed = {aid: a for aid, a in artifacts.items() if self._journaled["artifacts"].get(aid) != a}
            if changed:
                replace["artifacts"] = changed
                self._journaled["artifacts"] = artifacts
            current = self._replaceable()
            for key, value in current.items():
                if value != self._journaled["replaceable"][key]:
                    replace[key] = value
            self._journaled["replaceable"] = current
            if "world_mutations" in append:
                replace["state"] = self._parts.state.as_dict()
            if not append and not replace:
                return None
            return {"append": append, "replace": replace}

    def _advance(self, media_time_ms: Any) -> int:
        """Normalize a media time and remember the latest one seen (the snapshot's session end)."""
        at = _media_time(media_time_ms)
        self._media_time_ms = max(self._media_time_ms, at)
        return at
