"""What both runners (C0 text, C2 duplex) do the same way between the agent, the user and the
environment: executing and logging a tool call, collecting what the agent did for the user's next
flow step, approvals granted and revoked by the harness, fired events applied to the environment,
and the grade at the end. The runners differ only in *when* they call these.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.events import EventBus, EventType
from harness.grading.context import GradingContext
from harness.grading.gates import grade
from harness.grading.judge import FieldJudge
from harness.grading.report import GradeReport
from harness.tasks.bundle import TaskBundle
from harness.user.event_engine import FiredEvent
from harness.user.flow_engine import Observation
from harness.user.simulator import SimulatedUser
from mcp_servers.records import EnvironmentSnapshot, ToolCallRecord

from .environment_port import EnvironmentPort

__all__ = ["AgentActivity", "SessionEffects"]


@dataclass
class AgentActivity:
    """What the agent did since the user's last flow step (becomes the next ``Observation``)."""

    acts: list[str] = field(default_factory=list)
    tool_calls: list[str] = field(default_factory=list)
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    mutations: list[str] = field(default_factory=list)
    commit_attempts: list[str] = field(default_factory=list)
    approval_requests: list[str] = field(default_factory=list)
    fired_events: list[str] = field(default_factory=list)

    def observation(self, media_time_ms: int, repetition_counts: dict[str, int]) -> Observation:
        return Observation(
            media_time_ms=media_time_ms,
            new_act_keys=list(self.acts),
            tool_calls=list(self.tool_calls),
            artifact_mutations=list(self.mutations),
            commit_attempts=list(self.commit_attempts),
            approval_requests=list(self.approval_requests),
            fired_events=list(self.fired_events),
            repetition_counts=dict(repetition_counts),
        )


class SessionEffects:
    """The harness's side of one session: it alone grants approvals and applies fired events."""

    def __init__(self, bundle: TaskBundle, env: EnvironmentPort, user: SimulatedUser, log: EventBus) -> None:
        self.bundle = bundle
        self.env = env
        self.user = user
        self.log = log
        #: The latest ``(action_type, target_id)`` the agent asked the user to approve.
        self.pending_approval: tuple[str, str] | None = None
        self.last_snapshot: EnvironmentSnapshot | None = None
        self._mirror: EnvironmentSnapshot | None = None

    # -- the agent's words and tools ------------------------------------------------------------

    def hear_text(self, text: str, t: int, activity: AgentActivity, **extra: Any) -> list[str]:
        """The agent's (final) words: logged, observed as acts, counted for the user."""
        self.log.emit(EventType.AGENT_TEXT, "agent", t, {**extra, "text": text})
        acts = [a.key for a in self.user.hear_agent_text(text)]
        for key in acts:
            self.log.emit(EventType.AGENT_ACT, "agent", t, {"act": key, "source": "pattern"})
        activity.acts.extend(acts)
        return acts

    async def call_tool(
        self, name: str, args: Any, t: int, activity: AgentActivity, *, call_id: str | None = None
    ) -> ToolCallRecord:
        """Execute one tool call at once (the C0 runner): log it and note what the user observes."""
        self.log_call(name, args, t, call_id=call_id)
        record = await self.env.call_tool(name, args, t)
        self.take_result(record, t, activity, call_id=call_id, called_at_ms=t)
        return record

    def log_call(self, name: str, args: Any, t: int, *, call_id: str | None, source: str = "bridge", **extra: Any) -> None:
        ids = {"call_id": call_id} if call_id is not None else {}
        self.log.emit(EventType.TOOL_CALL, "agent", t, {"tool": name, "args": args, "source": source, **ids, **extra})

    def take_result(
        self,
        record: ToolCallRecord,
        t: int,
        activity: AgentActivity,
        *,
        call_id: str | None,
        called_at_ms: int,
        wall_latency_ms: float | None = None,
        cancelled: bool = False,
    ) -> None:
        """A call's result reached the session at ``t``: log it, its mutations, and what the user observes."""
        ids = {"call_id": call_id} if call_id is not None else {}
        extra = {"wall_latency_ms": round(wall_latency_ms, 3)} if wall_latency_ms is not None else {}
        self.log.emit(
            EventType.TOOL_RESULT,
            "environment",
            t,
            {
                "tool": record.name,
                "ok": record.ok,
                "is_error": not record.ok,
                "result": record.result,
                "error": record.error,
                "auth_decision": record.auth_decision,
                "index": record.index,
                "args": record.args,
                "mutations": list(record.mutations),
                "called_at_ms": called_at_ms,
                "latency_ms": t - called_at_ms,
                **({"cancelled": True} if cancelled else {}),
                **extra,
                **ids,
            },
        )
        for key in record.mutations:
            artifact_id, _, path = key.partition(".")
            # The value as the server wrote it (a commit's fields are in no argument of the agent's).
            new = {"new": record.written[key]} if key in record.written else {}
            self.log.emit(EventType.ARTIFACT_MUTATION, "agent", t, {"artifact_id": artifact_id, "path": path, **new,
                                                                     "cause": f"call #{record.index}"})
        activity.tool_calls.append(record.name)
        activity.tool_results.append({"tool": record.name, "ok": record.ok, "result": record.output})
        activity.mutations.extend(record.mutations)
        if record.commit_attempt is not None:
            activity.commit_attempts.append(record.commit_attempt)
        if record.approval_request is not None:
            self.pending_approval = (record.approval_request["action_type"], record.approval_request["target_id"])
            activity.approval_requests.append(record.approval_request["action_type"])
        # Every call of a mapped tool is an act, refused or not (published rule).
        for act in self.user.see_tool_call(record.name, record.result):
            activity.acts.append(act.key)
            self.log.emit(EventType.AGENT_ACT, "agent", t, {"act": act.key, "source": act.source})

    # -- the user's approvals -------------------------------------------------------------------

    async def grant(self, t: int, plan_id: str) -> None:
        if self.pending_approval is None:
            return
        action, target = self.pending_approval
        token = await self.env.grant_approval(action, target, t, plan_id)
        self.log.emit(EventType.APPROVAL_EVENT, "user", t, {"granted": action, "target_id": target, "token_id": token.token_id})

    async def revoke(self, t: int) -> None:
        if self.pending_approval is None:
            return
        action, target = self.pending_approval
        revoked = await self.env.revoke_approval(action, target, t)
        self.log.emit(EventType.APPROVAL_EVENT, "user", t, {"revoked": action, "target_id": target, "token_ids": revoked})

    # -- events ------------------------------------------------------------------------------------

    async def fire_events(
        self,
        t: int,
        activity: AgentActivity,
        *,
        act_keys: Iterable[str],
        tool_calls: Iterable[str] = (),
        mutations: Iterable[str] = (),
        commit_attempts: Iterable[str] = (),
        time_triggers: bool,
    ) -> list[FiredEvent]:
        """Fire the events these observations trigger and apply their effects to the environment."""
        fired = self.user.fire_events(
            act_keys=act_keys,
            tool_calls=tool_calls,
            artifact_mutations=mutations,
            commit_attempts=commit_attempts,
            media_time_ms=t,
            time_triggers=time_triggers,
        )
        for event in fired:
            self.log.emit(EventType.DUPLEX_EVENT, "user", t, {"event_id": event.event_id, "type": event.type})
            for key in event.stale_fields:
                artifact_id, _, path = key.partition(".")
                self.log.emit(EventType.ARTIFACT_MUTATION, "environment", t,
                              {"artifact_id": artifact_id, "path": path, "cause": f"stale:{event.event_id}"})
            for path, value in event.world_updates.items():
                self.log.emit(EventType.WORLD_MUTATION, "environment", t, {"path": path, "new": value,
                                                                             "cause": event.event_id})
            await self.env.apply_event(
                event.event_id, stale_fields=event.stale_fields, world_updates=event.world_updates, media_time_ms=t
            )
            if event.revokes_pending:
                await self.revoke(t)
            activity.fired_events.append(event.event_id)
        return fired

    # -- the grade ---------------------------------------------------------------------------------

    async def grade_so_far(self) -> GradeReport:
        """The provisional grade (no judge) during the session, from a mirror of the environment
        that follows it by deltas: each call costs what changed, not the whole session again."""
        if self._mirror is None:
            self._mirror = await self.env.snapshot()
        else:
            self._mirror.extend(await self.env.snapshot_since(self._mirror.cursor()))
        return await self._grade(self._mirror, judge=None)

    async def grade(self, judge: FieldJudge | None = None) -> GradeReport:
        """The final grade, from a whole snapshot (the authoritative one)."""
        snapshot = await self.env.snapshot()
        self.last_snapshot = snapshot
        return await self._grade(snapshot, judge=judge)

    async def _grade(self, snapshot: EnvironmentSnapshot, *, judge: FieldJudge | None) -> GradeReport:
        return await grade(
            self.bundle.gold,
            GradingContext(
                snapshot=snapshot,
                observed_act_keys=set(self.user.observed_act_keys),
                gold_doc_ids=self.bundle.gold_doc_ids,
                judge=judge,
            ),
        )
