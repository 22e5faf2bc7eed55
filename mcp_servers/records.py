"""Wire records of the task environment: tool calls, mutations, approvals and the snapshot.

One shape serves the in-process environment, the MCP server's control API and the grader, so a
session graded from an HTTP snapshot and one graded in-process see exactly the same data.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "ApprovalKind",
    "ApprovalRecord",
    "ApprovalToken",
    "ArtifactSnapshot",
    "AuthDecision",
    "EnvironmentSnapshot",
    "MutationRecord",
    "SearchRecord",
    "SnapshotDelta",
    "ToolCallRecord",
    "WorldMutationRecord",
]

AuthDecision = Literal["AUTHORIZED", "PREMATURE_COMMIT", "POST_REVOCATION_COMMIT", "WRONG_SCOPE_COMMIT"]


class ToolCallRecord(BaseModel):
    """One tool call as the grader and the event log see it.

    ``ok`` is false for every refused or failed call; ``error`` then holds the message the agent
    received. ``output`` is exactly what the agent received as the tool result.
    """

    index: int
    name: str
    args: Any = None
    ok: bool
    result: Any = None
    error: str | None = None
    auth_decision: AuthDecision | None = None
    media_time_ms: int = 0
    wall_time_ns: int = 0
    #: ``"<artifact_id>.<field>"`` keys this call wrote (drives flow/event triggers).
    mutations: list[str] = Field(default_factory=list)
    #: What the server wrote, by those keys: the values a commit's ``set_fields`` wrote appear nowhere
    #: in the agent's arguments. Left out of the record's JSON when nothing was written.
    written: dict[str, Any] = Field(default_factory=dict, exclude_if=lambda value: not value)
    #: Action type of a commit attempt (commit tools only, authorized or not).
    commit_attempt: str | None = None
    #: ``{"action_type", "target_id"}`` when this call asked the user for approval.
    approval_request: dict[str, str] | None = None
    #: Set (to the traceback) when the task server itself failed on this call: a bug of ours in
    #: a tool handler, never the caller's doing. Such a call is not a tool error: the server
    #: answers it with a JSON-RPC internal error and the harness fails the session as its own
    #: bug. Left out of the record's JSON when unset, so ordinary records keep their bytes.
    server_fault: str | None = Field(default=None, exclude_if=lambda value: value is None)

    @property
    def output(self) -> Any:
        """What the agent is shown: the result, or a structured error (never ``null``)."""
        if self.ok:
            return self.result
        payload: dict[str, Any] = {"error": self.error or "tool call failed"}
        if self.auth_decision is not None:
            payload["auth_decision"] = self.auth_decision
        return payload


class MutationRecord(BaseModel):
    seq: int
    artifact_id: str
    path: str
    old: Any = None
    new: Any = None
    media_time_ms: int = 0
    wall_time_ns: int = 0
    causal_events: list[str] = Field(default_factory=list)
    cause: str = ""


class WorldMutationRecord(BaseModel):
    seq: int
    path: str
    old: Any = None
    new: Any = None
    media_time_ms: int = 0
    cause: str = ""


class ApprovalToken(BaseModel):
    token_id: str
    action_type: str
    target_id: str
    granted_media_time_ms: int
    source_event_id: str | None = None
    revoked_media_time_ms: int | None = None
    #: An approval authorizes one commit; the index of the call that used it.
    consumed_by_call: int | None = None


#: What happened to an approval (one :class:`ApprovalRecord` each).
ApprovalKind = Literal["granted", "revoked", "consumed"]


class ApprovalRecord(BaseModel):
    kind: ApprovalKind
    action_type: str
    target_id: str
    media_time_ms: int
    token_ids: list[str] = Field(default_factory=list)
    source_event_id: str | None = None


class SearchRecord(BaseModel):
    query: str
    top_k: int
    hits: list[str] = Field(default_factory=list)
    media_time_ms: int = 0


class ArtifactSnapshot(BaseModel):
    artifact_id: str
    artifact_type: str
    lifecycle: str
    fields: dict[str, Any] = Field(default_factory=dict)
    stale_fields: list[str] = Field(default_factory=list)


class EnvironmentSnapshot(BaseModel):
    """Everything the grader needs from a finished session's environment."""

    state: dict[str, Any] = Field(default_factory=dict)
    artifacts: dict[str, ArtifactSnapshot] = Field(default_factory=dict)
    versions: list[MutationRecord] = Field(default_factory=list)
    world_mutations: list[WorldMutationRecord] = Field(default_factory=list)
    call_log: list[ToolCallRecord] = Field(default_factory=list)
    approval_log: list[ApprovalRecord] = Field(default_factory=list)
    tokens: list[ApprovalToken] = Field(default_factory=list)
    search_log: list[SearchRecord] = Field(default_factory=list)
    media_time_ms: int = 0
    #: Calls refused unrun and left out of ``call_log`` because it was at its size limit (a flood).
    calls_not_logged: int = 0

    def cursor(self) -> dict[str, int]:
        """How many records of each append-only log this snapshot holds (what a delta starts from)."""
        return {key: len(getattr(self, key)) for key in APPEND_ONLY_LOGS}

    def extend(self, delta: SnapshotDelta) -> None:
        """Bring this snapshot up to date with ``delta`` (taken from :meth:`cursor`)."""
        for key in APPEND_ONLY_LOGS:
            getattr(self, key).extend(getattr(delta, key))
        self.state = delta.state
        self.artifacts = delta.artifacts
        self.tokens = delta.tokens
        self.media_time_ms = delta.media_time_ms
        self.calls_not_logged = delta.calls_not_logged


#: The snapshot's lists that only ever grow: a delta carries their new records only.
APPEND_ONLY_LOGS = ("versions", "world_mutations", "call_log", "approval_log", "search_log")


class SnapshotDelta(BaseModel):
    """What changed since a snapshot's :meth:`EnvironmentSnapshot.cursor`: the new records of each
    append-only log, and the small parts (state, artifacts, tokens) whole.

    It lets a harness follow the environment call by call at a cost that does not grow with the
    session (the gate status after each call), instead of fetching every log again.
    """

    state: dict[str, Any] = Field(default_factory=dict)
    artifacts: dict[str, ArtifactSnapshot] = Field(default_factory=dict)
    tokens: list[ApprovalToken] = Field(default_factory=list)
    media_time_ms: int = 0
    calls_not_logged: int = 0
    versions: list[MutationRecord] = Field(default_factory=list)
    world_mutations: list[WorldMutationRecord] = Field(default_factory=list)
    call_log: list[ToolCallRecord] = Field(default_factory=list)
    approval_log: list[ApprovalRecord] = Field(default_factory=list)
    search_log: list[SearchRecord] = Field(default_factory=list)
