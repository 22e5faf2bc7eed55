"""The built-in tool handlers, with the reference's integrity holes closed.

A handler gets the session's environment parts and one already-validated call, and returns a
:class:`HandlerOutcome` or raises :class:`ToolError`. Arguments are read in the published order
(the agent's, then the tool's ``effect``), except that a tool bound to one artifact refuses another
and ``effect.state`` cannot be overridden. Integrity rules: the commit guard is the only path to
``COMMITTED``; committed artifacts are frozen; field keys and value types must match the artifact
schema.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .argument_validation import preview, type_problem, validate_field_values
from .commit_guard import CommitGuard
from .knowledge_base import KnowledgeBase
from .public_models import LifecycleState, ToolSpec
from .records import AuthDecision
from .state_store import StateStore
from .tool_error import ToolError
from .workspace import Artifact, Workspace

__all__ = [
    "HANDLERS",
    "EnvironmentParts",
    "Handler",
    "HandlerOutcome",
    "ToolCall",
    "commit_action_type",
]

DEFAULT_TOP_K = 3

#: Lifecycle states no tool may set directly: approval comes from the user, COMMITTED from the guard.
_GUARDED_STATES = frozenset({LifecycleState.APPROVED, LifecycleState.COMMITTED})
_SETTABLE_STATES = ", ".join(s.value for s in LifecycleState if s not in _GUARDED_STATES)
_DRAFTING_STATES = frozenset({LifecycleState.EMPTY, LifecycleState.PARTIAL})

_DENIALS: dict[AuthDecision, str] = {
    "PREMATURE_COMMIT": (
        "{action} needs the user's approval first: call request_approval and wait for a yes "
        "(one approval covers one commit)"
    ),
    "POST_REVOCATION_COMMIT": (
        "the user withdrew approval for {action} on '{target}': do not commit unless they approve again"
    ),
    "WRONG_SCOPE_COMMIT": (
        "the user's approval does not cover {action} on '{target}': commit exactly the target you "
        "asked approval for, or request approval for this one"
    ),
}


@dataclass
class EnvironmentParts:
    state: StateStore
    workspace: Workspace
    guard: CommitGuard
    knowledge: KnowledgeBase


@dataclass(frozen=True)
class ToolCall:
    spec: ToolSpec
    args: dict[str, Any]
    index: int
    media_time_ms: int
    wall_time_ns: int = 0
    #: The artifact whose schema ``args["fields"]`` was already checked against (the tool's shown
    #: schema lists that artifact's field keys), so the handler need not check it again.
    fields_checked_for: str | None = None


@dataclass
class HandlerOutcome:
    result: Any
    auth_decision: AuthDecision | None = None
    #: Set when the call did not achieve its purpose without being malformed (a denied commit).
    error: str | None = None
    #: ``"<artifact_id>.<field>" -> value`` this call wrote, in order (its keys are the mutations).
    written: dict[str, Any] = field(default_factory=dict)
    commit_attempt: str | None = None
    approval_request: dict[str, str] | None = None

    @property
    def mutations(self) -> list[str]:
        return list(self.written)


Handler = Callable[[EnvironmentParts, ToolCall], HandlerOutcome]


def _bound(call: ToolCall, key: str) -> Any:
    """The spec's ``effect`` value for ``key`` if it sets one, else the agent's argument."""
    value = call.spec.effect.get(key)
    return value if value is not None else call.args.get(key)


def _artifact_id(call: ToolCall) -> Any:
    """The artifact a call addresses: the agent's ``artifact_id`` or the tool's bound one (published
    order). A tool bound to one artifact refuses another, rather than writing somewhere else."""
    given, bound = call.args.get("artifact_id"), call.spec.effect.get("artifact_id")
    if given is not None and bound is not None and given != bound:
        raise ToolError(f"this tool works on {bound}, not {preview(given)}")
    return given if given is not None else bound


def _approval_target(call: ToolCall) -> str:
    """Published order for ``request_approval``: ``target_id``, the tool's target parameter, ``effect.target_id``."""
    param = call.spec.commit_target_param or "target_id"
    value = call.args.get("target_id") or call.args.get(param) or call.spec.effect.get("target_id") or ""
    return str(value)


def _commit_target(call: ToolCall) -> str:
    """Published rule for ``commit``: the declared target parameter only, then ``effect.target_id``.

    An undeclared ``target_id`` beside a declared ``commit_target_param`` is ignored (and reported
    back as an ignored argument), so it cannot move the commit to another scope.
    """
    value = call.args.get(call.spec.commit_target_param or "target_id") or call.spec.effect.get("target_id") or ""
    return str(value)


def commit_action_type(spec: ToolSpec) -> str:
    """The action a commit tool commits: the spec's ``commit_action_type`` (the loader requires one).

    Never the agent's ``action_type`` argument, which the published handler read when the spec had
    none: the agent would name the rule the guard applies (issue 33, break 7). A spec built without
    the loader falls back to the tool's own name.
    """
    return spec.commit_action_type or spec.name


def _artifact(parts: EnvironmentParts, call: ToolCall) -> Artifact:
    artifact_id = _artifact_id(call)
    if not isinstance(artifact_id, str) or not artifact_id:
        raise ToolError("no artifact given: pass 'artifact_id'")
    artifact = parts.workspace.get(artifact_id)
    if artifact is None:
        known = ", ".join(parts.workspace.artifact_ids) or "none"
        raise ToolError(f"unknown artifact {preview(artifact_id)} (known artifacts: {known})")
    return artifact


def _writable_artifact(parts: EnvironmentParts, call: ToolCall) -> Artifact:
    artifact = _artifact(parts, call)
    if artifact.is_committed:
        raise ToolError(
            f"{artifact.artifact_id} is already COMMITTED; a committed artifact cannot be changed"
        )
    return artifact


def kb_search(parts: EnvironmentParts, call: ToolCall) -> HandlerOutcome:
    top_k = call.args.get("top_k", DEFAULT_TOP_K)
    problem = type_problem(top_k, "integer")
    if problem is not None:
        raise ToolError(f"'top_k' {problem}")
    hits = parts.knowledge.search(str(call.args.get("query", "")), int(top_k), call.media_time_ms)
    return HandlerOutcome({"hits": [hit.as_dict() for hit in hits]})


def get_entity(parts: EnvironmentParts, call: ToolCall) -> HandlerOutcome:
    key = call.spec.effect.get("state_path") or call.args.get("path") or call.args.get("entity_id")
    if not isinstance(key, str) or not key:
        raise ToolError("no entity given: pass 'path' or 'entity_id'")
    entity = parts.state.get(key)
    if entity is None:
        # The reference answers ok with a null entity; an agent reads that as a lookup that worked.
        raise ToolError(f"no entity {preview(key)}: nothing is recorded under that id (check it and look it up again)")
    return HandlerOutcome({"entity": entity})


def update_artifact(parts: EnvironmentParts, call: ToolCall) -> HandlerOutcome:
    artifact = _writable_artifact(parts, call)
    fields = call.args.get("fields")
    if not isinstance(fields, dict):
        raise ToolError(f"'fields' must be an object of field values, got {preview(fields)}")
    checked = call.fields_checked_for == artifact.artifact_id
    problems = validate_field_values(artifact.artifact_id, None if checked else artifact.schema, fields)
    if problems:
        raise ToolError("; ".join(problems))
    causal = call.args.get("causal_events")
    causal_events = [str(event) for event in causal] if isinstance(causal, list) else []
    written = _write_fields(parts, call, artifact, fields, f"tool:{call.spec.name}", causal_events)
    if artifact.lifecycle in _DRAFTING_STATES:
        parts.workspace.set_lifecycle(artifact.artifact_id, LifecycleState.DRAFT)
    return HandlerOutcome({"updated": list(fields), "artifact_id": artifact.artifact_id}, written=written)


def _write_fields(
    parts: EnvironmentParts,
    call: ToolCall,
    artifact: Artifact,
    fields: dict[str, Any],
    cause: str,
    causal_events: list[str] | None = None,
) -> dict[str, Any]:
    """Write ``fields`` in order at the call's media time; returns what was written by ``artifact.field`` key."""
    for key, value in fields.items():
        parts.workspace.write(
            artifact.artifact_id,
            key,
            value,
            media_time_ms=call.media_time_ms,
            wall_time_ns=call.wall_time_ns,
            causal_events=causal_events or [],
            cause=cause,
        )
    return {f"{artifact.artifact_id}.{key}": value for key, value in fields.items()}


def set_lifecycle(parts: EnvironmentParts, call: ToolCall) -> HandlerOutcome:
    artifact = _writable_artifact(parts, call)
    requested = _bound(call, "state")
    try:
        state = LifecycleState(requested)
    except (ValueError, TypeError):
        raise ToolError(
            f"invalid lifecycle state {preview(requested)}; valid states: {_SETTABLE_STATES}"
        ) from None
    if state in _GUARDED_STATES:
        raise ToolError(
            f"lifecycle {state.value} cannot be set by a tool: approval comes from the user and "
            f"COMMITTED only from an approved commit; valid states: {_SETTABLE_STATES}"
        )
    parts.workspace.set_lifecycle(artifact.artifact_id, state)
    return HandlerOutcome({"artifact_id": artifact.artifact_id, "lifecycle": state.value})


def request_approval(parts: EnvironmentParts, call: ToolCall) -> HandlerOutcome:
    # Published order: the agent's action_type, then the tool's, then its effect's.
    action = call.args.get("action_type") or call.spec.commit_action_type or call.spec.effect.get("action_type")
    if not isinstance(action, str) or not action:
        raise ToolError("no action to approve: pass 'action_type'")
    target = _approval_target(call)
    if not target:
        raise ToolError(f"no target to approve: pass '{call.spec.commit_target_param or 'target_id'}'")
    return HandlerOutcome(
        {"requested_action": action, "target_id": target, "status": "awaiting_approval"},
        approval_request={"action_type": action, "target_id": target},
    )


def commit(parts: EnvironmentParts, call: ToolCall) -> HandlerOutcome:
    action = commit_action_type(call.spec)
    target = _commit_target(call)
    artifact_id = _artifact_id(call)  # refuse a wrong artifact before an approval is spent on it
    authorization = parts.guard.authorize(action, target, call.media_time_ms, call.index)
    authorized = authorization.decision == "AUTHORIZED"
    result = {"action_type": action, "target_id": target, "committed": authorized}
    if not authorized:
        return HandlerOutcome(
            result,
            auth_decision=authorization.decision,
            error=_DENIALS[authorization.decision].format(action=action, target=target),
            commit_attempt=action,
        )
    written: dict[str, Any] = {}
    artifact = parts.workspace.get(artifact_id) if isinstance(artifact_id, str) else None
    cause = f"commit:{call.spec.name}"
    if artifact is not None:
        parts.workspace.set_lifecycle(artifact.artifact_id, LifecycleState.COMMITTED)
        written = _write_fields(parts, call, artifact, call.spec.effect.get("set_fields") or {}, cause)
    world_updates = call.spec.effect.get("world_updates") or {}
    parts.state.apply_updates(world_updates, media_time_ms=call.media_time_ms, cause=cause)
    return HandlerOutcome(result, auth_decision="AUTHORIZED", written=written, commit_attempt=action)


HANDLERS: dict[str, Handler] = {
    "kb_search": kb_search,
    "get_entity": get_entity,
    "update_artifact": update_artifact,
    "set_lifecycle": set_lifecycle,
    "request_approval": request_approval,
    "commit": commit,
}
