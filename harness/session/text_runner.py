"""Condition C0: the text session that ``validate`` uses.

Same environment and simulated user as the duplex runner, but turns alternate and words pass as
text. Media time is a deterministic counter (2,000 ms per user utterance and per agent turn, as
published), so two runs of the same task write the same events. An agent that works like a chat
model (``continues_after_tools``) gets its tool results back within the same turn, up to
``MAX_TOOL_ROUNDS`` times, before the user speaks again.

With ``recover`` (campaign cells), a beat whose flow drains no plan while the task is not done is
not silence: the user recovers as in a voice session (:mod:`harness.user.recovery`: re-state or
volunteer an answer, ask to wrap up, nudge, close, end), so the agent never gets two turns without
a user turn between them. ``validate`` runs without it, as the reference does. Tool calls an agent
lists after its ``end_call`` are not executed: the call is over (logged as dropped).

The outcome and the session files are a voice session's (:mod:`.outcome`,
:func:`~harness.results.run_dir.write_graded_files`): a judge outage leaves the run ``PENDING``
with ``grading_inputs.json`` beside it, for ``apex-voice regrade``.

Every call into the agent goes through the same boundary policy as a voice session's
(:mod:`.agent_blame`): what an agent author's code raises or returns malformed ends the session as
its ``agent_failure``, graded and scored; the watchdog bounds every await.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.agents.agent_text import safe_text
from harness.agents.limits import AGENT_LIMITS, AgentLimits
from harness.agents.system_prompt import agent_instructions
from harness.agents.text_agents import AgentObservationView, AgentTurn, TextAgent, ToolCallRequest
from harness.blame.codes import AgentKind, FailureCode
from harness.blame.errors import AgentFailure
from harness.blame.origin_table import agent_check_failed
from harness.events import EVENTS_FILE, SCHEMA_VERSION, EventBus, EventType, JsonlEventWriter
from harness.grading.judge import SemanticJudge
from harness.grading.report import GradeReport
from harness.results.run_dir import write_graded_files
from harness.tasks.bundle import TaskBundle
from harness.user.flow_engine import Observation, UserPlan
from harness.user.llm_act_observer import LlmActClassifier
from harness.user.recovery import RecoveryMove
from harness.user.simulator import SimulatedUser
from mcp_servers.records import EnvironmentSnapshot

from .agent_blame import AgentCalls
from .agent_event_check import json_copy
from .environment_port import EnvironmentPort
from .outcome import session_outcome
from .session_effects import AgentActivity, SessionEffects

__all__ = ["TextSessionResult", "run_text_session"]

MEDIA_STEP_MS = 2000
#: User turns before the session is cut, unless the caller says otherwise (``--max-turns``).
MAX_TURNS = 60
#: How ``USER_TEXT`` marks each recovery move (as ``USER_AUDIO_START`` does in a voice session).
_MARKS = {RecoveryMove.RESTATE: "recovered", RecoveryMove.CLOSE: "closing", RecoveryMove.NUDGE: "nudge",
          RecoveryMove.FINALIZE: "finalize"}
#: ``AGENT_SIGNAL`` logged for tool calls listed after ``end_call`` (not executed).
DROPPED_AFTER_END_CALL = "tool_calls_dropped_after_end_call"
#: Tool-result rounds one agent turn may take (a model that loops on tools is cut off here).
MAX_TOOL_ROUNDS = 8


@dataclass
class TextSessionResult:
    run_id: str
    task_id: str
    condition: str
    #: ``None`` while judge verdicts are pending (``outcome`` is ``PENDING``).
    pts: int | None
    outcome: str
    #: User turns spoken, recovery turns included (what ``max_turns`` bounds).
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
    #: How the agent failed at its boundary (``{"kind", "detail", "media_ms"}``); the run is scored.
    agent_failure: dict[str, Any] | None = None
    #: Why the conversation ended: ``agent_ended``, ``flow_done``, ``max_turns``, ``closing``,
    #: ``nudges_exhausted`` or ``agent_failure``.
    reason: str = ""


async def run_text_session(
    bundle: TaskBundle,
    agent: TextAgent,
    env: EnvironmentPort,
    *,
    run_dir: Path | None = None,
    judge: SemanticJudge | None = None,
    seed: int = 1,
    run_id: str | None = None,
    agent_kind: AgentKind = "builtin",
    limits: AgentLimits = AGENT_LIMITS,
    max_turns: int = MAX_TURNS,
    recover: bool = False,
    observer: LlmActClassifier | None = None,
) -> TextSessionResult:
    """Run one C0 session to the end, close the agent (``aclose``, when it has one) and grade it.

    ``agent_kind`` (the model's ``ModelSpec.agent_kind``; a campaign passes it) decides blame at the
    agent boundary, as in a voice session; the default suits the harness's own text agents.
    ``max_turns`` bounds the user turns; ``recover`` lets the user recover from a stalled agent;
    ``observer`` hears, as in a voice session, the acts the task's patterns miss.
    """
    run_id = run_id or uuid.uuid4().hex[:12]
    session_dir = run_dir / run_id if run_dir is not None else None
    log = EventBus(
        run_id=run_id,
        task_version=bundle.task.version,
        condition="C0",
    )
    writer = await JsonlEventWriter.open(session_dir / EVENTS_FILE) if session_dir is not None else None
    if writer is not None:
        writer.attach(log)
    calls = AgentCalls.for_session(agent_kind, bundle.task.time_budget_s, limits)
    try:
        session = _TextSession(bundle, agent, env, log, seed, calls, limits,
                               max_turns=max_turns, recover=recover, observer=observer)
        return await session.run(judge, session_dir)
    finally:
        try:
            if writer is not None:
                await writer.aclose()  # the last lines reach the disk off the loop
        finally:
            log.close()


class _TextSession:
    def __init__(self, bundle: TaskBundle, agent: TextAgent, env: EnvironmentPort, log: EventBus, seed: int,
                 calls: AgentCalls, limits: AgentLimits, *, max_turns: int, recover: bool,
                 observer: LlmActClassifier | None):
        self.bundle = bundle
        self.agent = agent
        self.calls = calls
        self.limits = limits
        self.failure: dict[str, Any] | None = None
        self.log = log
        self.user = SimulatedUser(bundle, condition="C0", seed=seed)
        self.effects = SessionEffects(bundle, env, self.user, log)
        self.env = env
        self.media_ms = 0
        self.fallbacks = 0
        self.max_turns = max_turns
        self.recover = recover
        self.observer = observer
        self.end_reason = ""
        self.closing_said = False
        self.turns = 0

    async def run(self, judge: SemanticJudge | None, session_dir: Path | None) -> TextSessionResult:
        tools = await self.env.list_tools()
        model_id = _model_id(self.agent, self.calls, self.limits)
        started = False
        try:
            await self.calls.wait("reset", lambda: self.agent.reset(
                system_prompt=agent_instructions(self.bundle.task.title), tools=tools))
            self._log_run_start(model_id)
            started = True
            await self._converse(tools)
        except AgentFailure as failure:
            if not started:  # it failed at reset: the run still starts, to be graded
                self._log_run_start(model_id)
            self._agent_failed(failure)
            self.end_reason = "agent_failure"
        metadata = await self._close_agent()
        return await self._finish(judge, session_dir, {"model_id": model_id, **metadata})

    def _log_run_start(self, model_id: str) -> None:
        self.log.emit(
            EventType.RUN_START,
            "harness",
            0,
            {
                "task_id": self.bundle.task_id,
                "model_id": model_id,
                "condition": "C0",
                "schema_version": SCHEMA_VERSION,
            },
        )

    def _agent_failed(self, failure: AgentFailure) -> None:
        """The agent failed at its boundary: the conversation is over; the first failure is recorded."""
        self.log.emit(EventType.AGENT_FAILURE, "agent", self.media_ms, {"kind": failure.kind, "detail": failure.detail})
        if self.failure is None:
            self.failure = {"kind": failure.kind, "detail": failure.detail, "media_ms": self.media_ms}

    async def _close_agent(self) -> dict[str, Any]:
        """What the agent says of its session, then closed; a failure of either is recorded, never raised."""
        metadata: dict[str, Any] = {}
        try:
            if getattr(self.agent, "metadata", None) is not None:
                value = self.calls.sync("metadata", lambda: self.agent.metadata())  # type: ignore[attr-defined]
                metadata = self._checked(lambda: json_copy(value, "metadata()", self.limits.tool_arguments_chars))
        except AgentFailure as failure:
            self._agent_failed(failure)
        if getattr(self.agent, "aclose", None) is not None:
            closing = await self.calls.close(lambda: self.agent.aclose())  # type: ignore[attr-defined]
            if closing is not None:
                self._agent_failed(closing)
        return metadata

    def _checked(self, check: Any) -> Any:
        try:
            return check()
        except AgentFailure as failure:
            blamed = agent_check_failed(self.calls.kind, failure, "returned malformed data")
            if blamed is failure:
                raise
            raise blamed from None

    async def _converse(self, tools: list[dict[str, Any]]) -> None:
        """The turns, user then agent, until the flow is done, the user has nothing left to say, the
        agent hangs up or ``max_turns`` user turns were spoken (``turns`` counts them)."""
        obs = Observation()
        previous_results: list[dict[str, Any]] = []
        last_acts: list[str] = []
        while True:
            if self.turns == self.max_turns:
                self.end_reason = "max_turns"
                return
            user_text = await self._user_turn(obs, last_acts)
            if user_text is None:
                return
            self.turns += 1
            view = AgentObservationView(
                user_text=user_text, tool_results=previous_results, available_tools=tools, turn_index=self.turns - 1
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
            last_acts = list(activity.acts)
            if reply.end_call:
                self.end_reason = "agent_ended"
                return

    async def _user_turn(self, obs: Observation, last_acts: list[str]) -> str | None:
        """What the user says this beat: the flow's plans, else (``recover``) a recovery move;
        ``None`` when the user has nothing more to say and the session ends (``end_reason`` says why).

        Without ``recover`` an empty beat gives the agent an empty turn, as the reference does."""
        plans = self.user.next_plans(obs)
        if plans:
            return await self._speak(plans)
        if self.user.done:
            self.end_reason = "flow_done"
            return None
        if not self.recover:
            return ""
        if self.closing_said:
            self.end_reason = "closing"
            return None
        decision = self.user.recover(last_acts)
        if decision.move is RecoveryMove.END or decision.text is None:
            self.end_reason = "nudges_exhausted"
            return None
        payload = decision.user_plan_payload()
        if payload is not None:
            self.log.emit(EventType.USER_PLAN, "user", self.media_ms, payload)
        self.closing_said = decision.move is RecoveryMove.CLOSE
        self.log.emit(EventType.USER_TEXT, "user", self.media_ms, {"text": decision.text, _MARKS[decision.move]: True})
        self.media_ms += MEDIA_STEP_MS
        return decision.text

    async def _agent_turn(
        self, view: AgentObservationView, activity: AgentActivity
    ) -> tuple[AgentTurn, list[dict[str, Any]]]:
        """The agent's reply and its tool calls executed; a chat-style agent is asked again with
        the results until it stops calling tools. Returns the last reply and its unseen results."""
        for _ in range(MAX_TOOL_ROUNDS):
            self.calls.check("the text session")
            answer = await self.calls.wait("act", functools.partial(self.agent.act, view))
            reply = self._checked(lambda: _checked_turn(answer, self.limits))  # noqa: B023 - called at once
            if reply.text:
                await self._hear(reply.text, activity)
            if reply.after_end_call:  # the call is over: logged, never executed
                self.log.emit(EventType.AGENT_SIGNAL, "harness", self.media_ms, _dropped_signal(reply.after_end_call))
            results = []
            for call in reply.tool_calls:
                record = await self.effects.call_tool(call.name, call.args, self.media_ms, activity, call_id=call.call_id)
                results.append({"tool": record.name, "ok": record.ok, "result": record.output, "call_id": call.call_id})
            continues = self.calls.sync("continues_after_tools", lambda: getattr(self.agent, "continues_after_tools", False))
            if not (results and continues is True) or reply.end_call:
                return reply, results
            view = AgentObservationView(
                user_text="", tool_results=results, available_tools=view.available_tools, turn_index=view.turn_index
            )
        return reply, results

    async def _hear(self, text: str, activity: AgentActivity) -> None:
        """The agent's words as the user hears them: the task's patterns, then the observer for the
        acts they missed (as in a voice session)."""
        acts = self.effects.hear_text(text, self.media_ms, activity)
        if self.observer is None:
            return
        remaining = [key for key in self.user.classifier_candidates() if key not in acts]
        if not remaining:
            return
        labels = await self.observer.classify(text, remaining)
        heard = [act.key for act in self.user.hear_classified(labels)] if labels else []
        for key in heard:
            self.log.emit(EventType.AGENT_ACT, "agent", self.media_ms, {"act": key, "source": "classifier"})
        activity.acts.extend(heard)

    async def _speak(self, plans: list[UserPlan]) -> str:
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

    async def _finish(self, judge: SemanticJudge | None, session_dir: Path | None,
                      adapter_meta: dict[str, Any]) -> TextSessionResult:
        report = await self.effects.grade(judge)
        snapshot = self.effects.last_snapshot
        assert snapshot is not None, "grading takes the final snapshot"
        outcome = session_outcome(report, self.fallbacks)
        pending = {"pending_verdicts": len(report.pending_fields)} if report.pending_fields else {}
        self.log.emit(EventType.RUN_END, "harness", self.media_ms, {"outcome": outcome, "pts": report.pts, **pending})
        if session_dir is not None:
            await asyncio.to_thread(write_graded_files, session_dir, snapshot, self.user.observed_act_keys,
                                    list(self.bundle.gold_doc_ids))
        return TextSessionResult(
            run_id=self.log.run_id,
            task_id=self.bundle.task_id,
            condition="C0",
            pts=report.pts,
            outcome=outcome,
            turns=self.turns,
            fallback_events=self.fallbacks,
            leakage_violations=list(self.user.leakage_violations),
            grade=report,
            snapshot=snapshot,
            events=self.log,
            run_dir=session_dir,
            observed_act_keys=set(self.user.observed_act_keys),
            adapter_meta=adapter_meta,
            agent_failure=self.failure,
            reason=self.end_reason,
        )


def _model_id(agent: TextAgent, calls: AgentCalls, limits: AgentLimits) -> str:
    """The agent's ``model_id`` as recorded; a missing or odd one is recorded as its class's name."""
    try:
        value = calls.sync("model_id", lambda: getattr(agent, "model_id", None))
    except AgentFailure:
        value = None
    return value[: limits.tool_name_chars] if type(value) is str else type(agent).__name__


def _dropped_signal(calls: list[ToolCallRequest]) -> dict[str, Any]:
    """The ``AGENT_SIGNAL`` payload of tool calls listed after ``end_call`` (logged, never executed)."""
    return {
        "signal": DROPPED_AFTER_END_CALL,
        "detail": {"tools": [call.name for call in calls], "call_ids": [call.call_id for call in calls if call.call_id]},
    }


def _checked_turn(reply: object, limits: AgentLimits) -> AgentTurn:
    """The agent's turn checked and rebuilt from its fields (the types the session relies on)."""
    if type(reply) is not AgentTurn:
        raise AgentFailure(FailureCode.MALFORMED_EVENT, f"act() returned {type(reply).__name__}, not AgentTurn")
    if type(reply.text) is not str or type(reply.end_call) is not bool or type(reply.tool_calls) is not list:
        raise AgentFailure(FailureCode.MALFORMED_EVENT, "AgentTurn needs text: str, end_call: bool and tool_calls: list")
    if len(reply.text) > limits.transcript_item_chars or len(reply.tool_calls) > limits.events_per_poll:
        raise AgentFailure(FailureCode.OVER_LIMIT, "an AgentTurn past its bounds (text or number of tool calls)")
    calls = []
    for call in reply.tool_calls:
        if type(call) is not ToolCallRequest or type(call.name) is not str or not (
                call.call_id is None or type(call.call_id) is str):
            raise AgentFailure(FailureCode.MALFORMED_EVENT, "a tool call needs name: str and call_id: str | None")
        if len(call.name) > limits.tool_name_chars or len(call.call_id or "") > limits.tool_name_chars:
            raise AgentFailure(FailureCode.OVER_LIMIT, "a tool call's name or id past its bound")
        # Its arguments are data of any shape: the environment refuses bad ones as a tool error it sees.
        calls.append(ToolCallRequest(safe_text(call.name), call.args, safe_text(call.call_id) if call.call_id else call.call_id))
    after = reply.after_end_call
    if type(after) is not list or len(after) > limits.events_per_poll:
        raise AgentFailure(FailureCode.MALFORMED_EVENT, "AgentTurn.after_end_call needs a bounded list of tool calls")
    dropped = []
    for call in after:
        if type(call) is not ToolCallRequest or type(call.name) is not str or len(call.name) > limits.tool_name_chars:
            raise AgentFailure(FailureCode.MALFORMED_EVENT, "a tool call after end_call needs a bounded name: str")
        call_id = call.call_id if type(call.call_id) is str else None
        dropped.append(ToolCallRequest(safe_text(call.name), None,
                                       safe_text(call_id[: limits.tool_name_chars]) if call_id else None))
    # Its text is made safe here, once, as a voice agent's is at its boundary (harness/agents/agent_text.py).
    return AgentTurn(safe_text(reply.text), calls, reply.end_call, dropped)
