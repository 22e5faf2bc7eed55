"""Condition C0: the text session that ``validate`` uses.

Same environment and simulated user as the duplex runner, but turns alternate and words pass as
text. Media time is a deterministic counter (2,000 ms per user utterance and per agent turn, as
published), so two runs of the same task write the same events.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.agents.text_agents import AgentObservationView, TextAgent
from harness.grading.context import GradingContext
from harness.grading.gates import grade
from harness.grading.judge import SemanticJudge
from harness.grading.report import GradeReport
from harness.tasks.bundle import TaskBundle
from harness.user.flow_engine import Observation
from harness.user.simulator import SimulatedUser
from mcp_servers.records import EnvironmentSnapshot

from .environment_port import EnvironmentPort
from .event_log import SCHEMA_VERSION, EventLog, EventType
from .run_files import write_workspace_files

__all__ = ["TextSessionResult", "run_text_session"]

MEDIA_STEP_MS = 2000
MAX_TURNS = 60


@dataclass
class TextSessionResult:
    run_id: str
    task_id: str
    condition: str
    pts: int
    outcome: str
    turns: int
    fallback_events: int
    leakage_violations: list[str]
    grade: GradeReport
    snapshot: EnvironmentSnapshot
    events: EventLog
    run_dir: Path | None = None
    observed_act_keys: set[str] = field(default_factory=set)


@dataclass
class _Beat:
    """What the agent did in one turn, as the user simulator observes it."""

    acts: list[str] = field(default_factory=list)
    tool_calls: list[str] = field(default_factory=list)
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    mutations: list[str] = field(default_factory=list)
    commit_attempts: list[str] = field(default_factory=list)
    approval_requests: list[str] = field(default_factory=list)


async def run_text_session(
    bundle: TaskBundle,
    agent: TextAgent,
    env: EnvironmentPort,
    *,
    run_dir: Path | None = None,
    judge: SemanticJudge | None = None,
    seed: int = 1,
    run_id: str | None = None,
) -> TextSessionResult:
    """Run one C0 session to the end and grade it."""
    run_id = run_id or uuid.uuid4().hex[:12]
    session_dir = run_dir / run_id if run_dir is not None else None
    log = EventLog(
        run_id=run_id,
        task_version=bundle.task.version,
        condition="C0",
        path=session_dir / "events.jsonl" if session_dir else None,
    )
    try:
        return await _TextSession(bundle, agent, env, log, seed).run(judge, session_dir)
    finally:
        log.close()


class _TextSession:
    def __init__(self, bundle: TaskBundle, agent: TextAgent, env: EnvironmentPort, log: EventLog, seed: int):
        self.bundle = bundle
        self.agent = agent
        self.env = env
        self.log = log
        self.user = SimulatedUser(bundle, condition="C0", seed=seed)
        self.media_ms = 0
        self.fallbacks = 0
        self.pending_approval: tuple[str, str] | None = None

    async def run(self, judge: SemanticJudge | None, session_dir: Path | None) -> TextSessionResult:
        tools = await self.env.list_tools()
        await self.agent.reset(system_prompt=self.bundle.task.title, tools=tools)
        self.log.emit(
            EventType.RUN_START,
            "harness",
            0,
            {
                "task_id": self.bundle.task_id,
                "model_id": self.agent.model_id,
                "condition": "C0",
                "schema_version": SCHEMA_VERSION,
            },
        )
        obs = Observation()
        previous_results: list[dict[str, Any]] = []
        turns = 0
        for turn_index in range(MAX_TURNS):
            plans = self.user.next_plans(obs)
            if not plans and self.user.done:
                break
            user_text = await self._speak(plans)
            turns += 1
            reply = await self.agent.act(
                AgentObservationView(
                    user_text=user_text,
                    tool_results=previous_results,
                    available_tools=tools,
                    turn_index=turn_index,
                )
            )
            beat = await self._agent_turn(reply.text, reply.tool_calls)
            self.media_ms += MEDIA_STEP_MS
            fired = await self._fire_events(beat)
            previous_results = beat.tool_results
            obs = Observation(
                media_time_ms=self.media_ms,
                new_act_keys=beat.acts,
                tool_calls=beat.tool_calls,
                artifact_mutations=beat.mutations,
                commit_attempts=beat.commit_attempts,
                approval_requests=beat.approval_requests,
                fired_events=fired,
                repetition_counts=dict(self.user.repetition_counts),
            )
            if reply.end_call:
                break
        return await self._finish(judge, session_dir, turns)

    async def _speak(self, plans: list) -> str:
        texts: list[str] = []
        for plan in plans:
            utterance = self.user.realize(plan)
            if utterance is None:
                self.fallbacks += 1
                self.log.emit(EventType.SIMULATOR_FALLBACK, "harness", self.media_ms, {"user_plan_id": plan.id})
                text = f"[FALLBACK:{plan.id}]"
            else:
                text = utterance.text
            self.log.emit(
                EventType.USER_PLAN,
                "user",
                self.media_ms,
                {"plan_id": plan.id, "speech_act": plan.speech_act, "facts": list(plan.fact_ids)},
            )
            self.log.emit(EventType.USER_TEXT, "user", self.media_ms, {"text": text})
            await self._apply_approval_effect(plan.speech_act, plan.id)
            texts.append(text)
            self.media_ms += MEDIA_STEP_MS
        return " ".join(texts)

    async def _apply_approval_effect(self, speech_act: str, plan_id: str) -> None:
        """The harness, never a tool, grants and revokes approvals (when the user says so)."""
        if self.pending_approval is None:
            return
        action, target = self.pending_approval
        if speech_act == "APPROVE":
            token = await self.env.grant_approval(action, target, self.media_ms, plan_id)
            self.log.emit(
                EventType.APPROVAL_EVENT,
                "user",
                self.media_ms,
                {"granted": action, "target_id": target, "token_id": token.token_id},
            )
        elif speech_act in ("REVOKE", "DENY"):
            await self._revoke(action, target)

    async def _revoke(self, action: str, target: str) -> None:
        revoked = await self.env.revoke_approval(action, target, self.media_ms)
        self.log.emit(
            EventType.APPROVAL_EVENT,
            "user",
            self.media_ms,
            {"revoked": action, "target_id": target, "token_ids": revoked},
        )

    async def _agent_turn(self, text: str, tool_calls: list) -> _Beat:
        beat = _Beat()
        if text:
            self.log.emit(EventType.AGENT_TEXT, "agent", self.media_ms, {"text": text})
            for act in self.user.hear_agent_text(text):
                beat.acts.append(act.key)
                self.log.emit(EventType.AGENT_ACT, "agent", self.media_ms, {"act": act.key, "source": act.source})
        for call in tool_calls:
            self.log.emit(EventType.TOOL_CALL, "agent", self.media_ms, {"tool": call.name, "args": call.args})
            record = await self.env.call_tool(call.name, call.args, self.media_ms)
            self.log.emit(
                EventType.TOOL_RESULT,
                "environment",
                self.media_ms,
                {
                    "tool": record.name,
                    "ok": record.ok,
                    "result": record.result,
                    "auth_decision": record.auth_decision,
                    "error": record.error,
                },
            )
            beat.tool_calls.append(record.name)
            beat.tool_results.append({"tool": record.name, "ok": record.ok, "result": record.output})
            beat.mutations.extend(record.mutations)
            if record.commit_attempt is not None:
                beat.commit_attempts.append(record.commit_attempt)
            if record.approval_request is not None:
                request = record.approval_request
                self.pending_approval = (request["action_type"], request["target_id"])
                beat.approval_requests.append(request["action_type"])
            if record.ok or record.result is not None:
                for act in self.user.see_tool_call(record.name, record.result):
                    beat.acts.append(act.key)
                    self.log.emit(
                        EventType.AGENT_ACT, "agent", self.media_ms, {"act": act.key, "source": act.source}
                    )
        return beat

    async def _fire_events(self, beat: _Beat) -> list[str]:
        fired = self.user.fire_events(
            act_keys=beat.acts,
            tool_calls=beat.tool_calls,
            artifact_mutations=beat.mutations,
            commit_attempts=beat.commit_attempts,
            media_time_ms=self.media_ms,
            time_triggers=True,
        )
        for event in fired:
            self.log.emit(
                EventType.DUPLEX_EVENT, "user", self.media_ms, {"event_id": event.event_id, "type": event.type}
            )
            await self.env.apply_event(
                event.event_id,
                stale_fields=event.stale_fields,
                world_updates=event.world_updates,
                media_time_ms=self.media_ms,
            )
            if event.revokes_pending and self.pending_approval is not None:
                await self._revoke(*self.pending_approval)
        return [e.event_id for e in fired]

    async def _finish(self, judge: SemanticJudge | None, session_dir: Path | None, turns: int) -> TextSessionResult:
        snapshot = await self.env.snapshot()
        report = await grade(
            self.bundle.gold,
            GradingContext(
                snapshot=snapshot,
                observed_act_keys=set(self.user.observed_act_keys),
                gold_doc_ids=self.bundle.gold_doc_ids,
                judge=judge,
            ),
        )
        outcome = "SIMULATOR_FALLBACK" if self.fallbacks else ("SUCCESS" if report.pts else "FAILURE")
        self.log.emit(EventType.RUN_END, "harness", self.media_ms, {"outcome": outcome, "pts": report.pts})
        if session_dir is not None:
            write_workspace_files(session_dir, snapshot)
        return TextSessionResult(
            run_id=self.log.run_id,
            task_id=self.bundle.task_id,
            condition="C0",
            pts=report.pts,
            outcome=outcome,
            turns=turns,
            fallback_events=self.fallbacks,
            leakage_violations=list(self.user.leakage_violations),
            grade=report,
            snapshot=snapshot,
            events=self.log,
            run_dir=session_dir,
            observed_act_keys=set(self.user.observed_act_keys),
        )
