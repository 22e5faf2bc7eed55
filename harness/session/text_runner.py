"""Condition C0: the text session that ``validate`` uses.

Same environment and simulated user as the duplex runner, but turns alternate and words pass as
text. Media time is a deterministic counter (2,000 ms per user utterance and per agent turn, as
published), so two runs of the same task write the same events. An agent that works like a chat
model (``continues_after_tools``) gets its tool results back within the same turn, up to
``MAX_TOOL_ROUNDS`` times, before the user speaks again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.agents.system_prompt import agent_instructions
from harness.agents.text_agents import AgentObservationView, AgentTurn, TextAgent
from harness.events import EVENTS_FILE, SCHEMA_VERSION, EventBus, EventType, JsonlEventWriter
from harness.grading.judge import SemanticJudge
from harness.grading.report import GradeReport
from harness.results.run_dir import write_workspace_files
from harness.tasks.bundle import TaskBundle
from harness.user.flow_engine import Observation
from harness.user.simulator import SimulatedUser
from mcp_servers.records import EnvironmentSnapshot

from .environment_port import EnvironmentPort
from .session_effects import AgentActivity, SessionEffects

__all__ = ["TextSessionResult", "run_text_session"]

MEDIA_STEP_MS = 2000
MAX_TURNS = 60
#: Tool-result rounds one agent turn may take (a model that loops on tools is cut off here).
MAX_TOOL_ROUNDS = 8


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
    events: EventBus
    run_dir: Path | None = None
    observed_act_keys: set[str] = field(default_factory=set)
    #: What the agent says of its session (model, endpoint), for ``result.json``.
    adapter_meta: dict[str, Any] = field(default_factory=dict)


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
    log = EventBus(
        run_id=run_id,
        task_version=bundle.task.version,
        condition="C0",
    )
    if session_dir is not None:
        JsonlEventWriter(session_dir / EVENTS_FILE).attach(log)
    try:
        return await _TextSession(bundle, agent, env, log, seed).run(judge, session_dir)
    finally:
        log.close()


class _TextSession:
    def __init__(self, bundle: TaskBundle, agent: TextAgent, env: EnvironmentPort, log: EventBus, seed: int):
        self.bundle = bundle
        self.agent = agent
        self.log = log
        self.user = SimulatedUser(bundle, condition="C0", seed=seed)
        self.effects = SessionEffects(bundle, env, self.user, log)
        self.env = env
        self.media_ms = 0
        self.fallbacks = 0

    async def run(self, judge: SemanticJudge | None, session_dir: Path | None) -> TextSessionResult:
        tools = await self.env.list_tools()
        await self.agent.reset(system_prompt=agent_instructions(self.bundle.task.title), tools=tools)
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
            view = AgentObservationView(
                user_text=user_text, tool_results=previous_results, available_tools=tools, turn_index=turn_index
            )
            activity = AgentActivity()
            reply, previous_results = await self._agent_turn(view, activity)
            self.media_ms += MEDIA_STEP_MS
            # C0 fires events once per agent turn, on everything the turn did (published rule).
            await self.effects.fire_events(
                self.media_ms,
                activity,
                act_keys=activity.acts,
                tool_calls=activity.tool_calls,
                mutations=activity.mutations,
                commit_attempts=activity.commit_attempts,
                time_triggers=True,
            )
            obs = activity.observation(self.media_ms, self.user.repetition_counts)
            if reply.end_call:
                break
        return await self._finish(judge, session_dir, turns)

    async def _agent_turn(
        self, view: AgentObservationView, activity: AgentActivity
    ) -> tuple[AgentTurn, list[dict[str, Any]]]:
        """The agent's reply and its tool calls executed; a chat-style agent is asked again with
        the results until it stops calling tools. Returns the last reply and its unseen results."""
        for _ in range(MAX_TOOL_ROUNDS):
            reply = await self.agent.act(view)
            if reply.text:
                self.effects.hear_text(reply.text, self.media_ms, activity)
            results = []
            for call in reply.tool_calls:
                record = await self.effects.call_tool(call.name, call.args, self.media_ms, activity, call_id=call.call_id)
                results.append({"tool": record.name, "ok": record.ok, "result": record.output, "call_id": call.call_id})
            if not (results and getattr(self.agent, "continues_after_tools", False)) or reply.end_call:
                return reply, results
            view = AgentObservationView(
                user_text="", tool_results=results, available_tools=view.available_tools, turn_index=view.turn_index
            )
        return reply, results

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
            # The harness, never a tool, grants and revokes approvals when the user says so.
            if plan.speech_act == "APPROVE":
                await self.effects.grant(self.media_ms, plan.id)
            elif plan.speech_act in ("REVOKE", "DENY"):
                await self.effects.revoke(self.media_ms)
            texts.append(text)
            self.media_ms += MEDIA_STEP_MS
        return " ".join(texts)

    async def _finish(self, judge: SemanticJudge | None, session_dir: Path | None, turns: int) -> TextSessionResult:
        report = await self.effects.grade(judge)
        snapshot = self.effects.last_snapshot
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
