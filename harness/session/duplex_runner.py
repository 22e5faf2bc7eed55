"""Condition C2: the continuous full-duplex session on a media clock (see ``docs/duplex.md``).

One loop advances both channels frame by frame. The runner only moves audio, executes tool calls
and decides when the simulated user speaks; yield and stop latency are measured from the agent's
audio, never produced by the harness. Grading and result files belong to other modules.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.agents.realtime import (
    AdapterError,
    AudioDelta,
    CallEnded,
    PlayoutCleared,
    RealtimeAdapter,
    ResponseDone,
    SessionConfig,
    ToolCallRequested,
    ToolResult,
    TranscriptDelta,
)
from harness.agents.system_prompt import agent_instructions
from harness.audio.agent_asr import AgentTranscriber, asr_available
from harness.audio.frames import FRAME_MS, AudioFrame
from harness.audio.speech_bank import SpeechSource
from harness.audio.stereo_recorder import StereoRecorder
from harness.audio.vad import FrameVad
from harness.events import EVENTS_FILE, SCHEMA_VERSION, EventBus, EventType, JsonlEventWriter
from harness.grading.report import GradeReport
from harness.tasks.bundle import TaskBundle
from harness.user.flow_engine import Observation, UserPlan
from harness.user.recovery import RecoveryMove
from harness.user.simulator import SimulatedUser
from mcp_servers.records import EnvironmentSnapshot

from .channels import AgentChannel, AgentResponse, UserChannel, UserUtterance
from .clocks import MediaClock, make_clock
from .duplex_delivery import CONTINUE_ACTIONS, OVERLAY_FLOOR_ACTIONS, DeliveryTracker, overlay_events
from .environment_port import EnvironmentPort
from .errors import SessionInfraError
from .run_files import write_workspace_files
from .session_effects import AgentActivity, SessionEffects

__all__ = ["DuplexSessionResult", "run_duplex_session"]

#: The user takes its turn once the agent has finished and been silent this long.
TURN_GAP_MS = 400
#: An agent that says nothing for this long after the user's turn gets a nudge.
IDLE_TIMEOUT_MS = 8000


@dataclass
class DuplexSessionResult:
    run_id: str
    task_id: str
    condition: str
    pts: int
    outcome: str
    reason: str
    turns: int
    grade: GradeReport
    snapshot: EnvironmentSnapshot
    events: EventBus
    session_dir: Path | None
    adapter_meta: dict[str, Any] = field(default_factory=dict)
    infra_errors: list[str] = field(default_factory=list)


async def run_duplex_session(
    bundle: TaskBundle,
    adapter: RealtimeAdapter,
    env: EnvironmentPort,
    *,
    speech: SpeechSource,
    session_dir: Path | None,
    judge: Any = None,
    seed: int = 1,
    max_turns: int = 44,
    run_id: str | None = None,
    clock: MediaClock | None = None,
    privileged: bool = False,
    on_bus: Callable[[EventBus], None] | None = None,
) -> DuplexSessionResult:
    """Run one C2 session to its end and grade it.

    Raises:
        SessionInfraError: the sandbox or the provider failed (retryable; never scored).
    """
    # In-process agents run on the virtual clock (deterministic, fast); live providers on wall time.
    clock = clock or make_clock(adapter.clock_mode)
    run_id = run_id or uuid.uuid4().hex[:12]
    log = EventBus(
        run_id=run_id,
        task_version=bundle.task.version,
        condition="C2",
        wall_clock_ns=clock.wall_ns,
    )
    if session_dir is not None:
        JsonlEventWriter(session_dir / EVENTS_FILE).attach(log)
    if on_bus is not None:
        on_bus(log)  # a live consumer (the TUI) subscribes before the first event
    session = _DuplexSession(bundle, adapter, env, speech, clock, log, seed, max_turns)
    session.privileged = privileged
    try:
        return await session.run(judge, session_dir)
    finally:
        log.close()
        await adapter.close()


class _DuplexSession:
    def __init__(
        self,
        bundle: TaskBundle,
        adapter: RealtimeAdapter,
        env: EnvironmentPort,
        speech: SpeechSource,
        clock: MediaClock,
        log: EventBus,
        seed: int,
        max_turns: int,
    ) -> None:
        self.bundle = bundle
        self.adapter = adapter
        self.env = env
        self.speech = speech
        self.clock = clock
        self.log = log
        self.max_turns = max_turns
        self.user = SimulatedUser(bundle, condition="C2", seed=seed)
        self.effects = SessionEffects(bundle, env, self.user, log)
        self.user_channel = UserChannel()
        self.agent_channel = AgentChannel()
        self.recorder = StereoRecorder()
        self.user_vad = FrameVad()
        self.agent_vad = FrameVad()
        self.deliveries = DeliveryTracker(bundle.events, log)
        self.overlay_event_ids = overlay_events(bundle.flow)
        self.clips: dict[str, Any] = {}
        self.heard = AgentActivity()
        self.held_plans: list[UserPlan] = []
        self.responses: list[AgentResponse] = []
        self.current: AgentResponse | None = None
        self.agent_acted = False  # since the user's last turn
        self.awaiting_followup_since: int | None = None
        self.last_agent_audio_ms = 0
        self.last_user_end_ms = 0
        self.user_turns = 0
        self.fallbacks = 0
        self.closing_said = False
        self.agent_hung_up = False
        self.end_reason: str | None = None
        self.speaking = {"user": False, "agent": False}
        self.infra_errors: list[str] = []
        self.transcriber: AgentTranscriber | None = None
        self.budget_ms = bundle.task.time_budget_s * 1000

    # -- set-up ------------------------------------------------------------------------------

    async def run(self, judge: Any, session_dir: Path | None) -> DuplexSessionResult:
        tools = await self.env.list_tools()
        config = SessionConfig(
            instructions=agent_instructions(self.bundle.task.title),
            tools=tools,
            voice=str(self.bundle.persona.get("realtime_voice") or "soft-spoken-gentleman"),
            reference_policy=self.bundle.policy if self.privileged else None,
        )
        try:
            await self.adapter.connect(config)
        except (ConnectionError, OSError) as exc:
            raise SessionInfraError(f"agent connection failed: {exc}", transient=True) from exc
        self.clips = await self.speech.prepare(self.user.speakable_texts())
        self.log.emit(
            EventType.RUN_START,
            "harness",
            0,
            {
                "task_id": self.bundle.task_id,
                "model_id": self.adapter.model_id,
                "condition": "C2",
                "clock": self.clock.kind,
                "user_audio": _speech_name(self.speech),
                "schema_version": SCHEMA_VERSION,
            },
        )
        await self._user_turn(0)
        while self.end_reason is None:
            await self._tick(self.clock.media_ms)
            await self.clock.advance()
        return await self._finish(judge, session_dir)

    # -- one frame -----------------------------------------------------------------------------

    async def _tick(self, t: int) -> None:
        user_pcm, started, ended = self.user_channel.next_frame(t)
        if started is not None:
            await self._user_started(started, t)
        await self.adapter.send_audio(AudioFrame(user_pcm, t))
        # Handling an event can make an in-process agent produce more (a tool result → its words).
        while events := self.adapter.poll_events():
            for event in events:
                await self._agent_event(event, t)
        agent_pcm, played = self.agent_channel.next_frame()
        self._agent_played(played, t)
        self.recorder.append(user_pcm, agent_pcm)
        self._floor("user", self.user_vad.update(user_pcm), t)
        self._floor("agent", self.agent_vad.update(agent_pcm), t)
        self.deliveries.observe_frame(t + FRAME_MS)
        if ended is not None:
            await self._user_ended(ended, t + FRAME_MS)
        await self._start_due_overlays(t)
        await self._maybe_user_turn(t + FRAME_MS)
        if t + FRAME_MS >= self.budget_ms and self.end_reason is None:
            self.end_reason = "time_budget"

    def _floor(self, channel: str, speaking: bool, t: int) -> None:
        if speaking != self.speaking[channel]:
            self.speaking[channel] = speaking
            self.log.emit(EventType.FLOOR_CHANGE, channel, t, {"channel": channel, "speaking": speaking})

    # -- the agent -------------------------------------------------------------------------------

    def _response(self) -> AgentResponse:
        if self.current is None or self.current.done:
            self.current = AgentResponse(response_id=len(self.responses))
            self.responses.append(self.current)
        return self.current

    async def _agent_event(self, event: Any, t: int) -> None:
        handler = self._AGENT_HANDLERS.get(type(event))
        if handler is not None:
            await handler(self, event, t)

    async def _on_audio(self, event: AudioDelta, t: int) -> None:
        self.agent_acted = True
        self.agent_channel.enqueue(self._response(), event.pcm)

    async def _on_transcript(self, event: TranscriptDelta, t: int) -> None:
        response = self._response()
        before = Counter(a.key for a in self.user.acts_in(response.transcript))
        response.transcript += event.text
        # Acts are observed as the words stream in, so an event can fire while the agent speaks.
        new = Counter(a.key for a in self.user.acts_in(response.transcript)) - before
        if new:
            await self._fire_events(t, act_keys=list(new.elements()))

    async def _on_tool_call(self, event: ToolCallRequested, t: int) -> None:
        self.agent_acted = True
        try:
            args: Any = json.loads(event.arguments) if event.arguments.strip() else {}
        except json.JSONDecodeError:
            args = event.arguments  # the environment refuses it with a message the model can act on
        acts_before = len(self.heard.acts)
        try:
            record = await self.effects.call_tool(event.name, args, t, self.heard, call_id=event.call_id)
        except SessionInfraError:
            raise
        except Exception as exc:  # the sandbox, not the model, failed
            raise SessionInfraError(f"tool call {event.name} failed in the sandbox: {exc}", transient=True) from exc
        await self._fire_events(
            t,
            act_keys=self.heard.acts[acts_before:],
            tool_calls=[record.name],
            mutations=record.mutations,
            commit_attempts=[record.commit_attempt] if record.commit_attempt else [],
        )
        await self._gate_status(t)
        self.awaiting_followup_since = t
        await self.adapter.send_tool_result(ToolResult(event.call_id, record.name, record.output, not record.ok))

    async def _on_playout_cleared(self, event: PlayoutCleared, t: int) -> None:
        for response in self.agent_channel.clear():
            response.truncated = True
            self._maybe_end_response(response, t)

    async def _on_response_done(self, event: ResponseDone, t: int) -> None:
        self.awaiting_followup_since = None
        response = self._response()
        response.done = True
        source = "adapter"
        if not response.transcript and response.audio:
            response.transcript = await self._transcribe(response, t)
            source = "asr"
        if response.transcript:
            acts = self.effects.hear_text(
                response.transcript, t, self.heard, response_id=response.response_id, source=source
            )
            await self._fire_events(t, act_keys=acts)
        self._maybe_end_response(response, t)

    async def _transcribe(self, response: AgentResponse, t: int) -> str:
        """The agent gave audio without words: the user hears it through local ASR."""
        if self.transcriber is None:
            if not asr_available():
                self.log.emit(
                    EventType.INFRA_FAILURE,
                    "harness",
                    t,
                    {"error": "agent audio without transcript and no local ASR (pip install 'apex-voice[asr]')"},
                )
                return ""
            self.transcriber = AgentTranscriber()
        return await self.transcriber.transcribe(np.frombuffer(bytes(response.audio), dtype="<i2"))

    async def _on_call_ended(self, event: CallEnded, t: int) -> None:
        self.agent_hung_up = True

    async def _on_error(self, event: AdapterError, t: int) -> None:
        self.infra_errors.append(event.message)
        self.log.emit(EventType.INFRA_FAILURE, "environment", t, {"error": event.message, "transient": event.transient})
        if event.transient:
            raise SessionInfraError(f"agent connection failed mid-session: {event.message}", transient=True)

    _AGENT_HANDLERS = {
        AudioDelta: _on_audio,
        TranscriptDelta: _on_transcript,
        ToolCallRequested: _on_tool_call,
        PlayoutCleared: _on_playout_cleared,
        ResponseDone: _on_response_done,
        CallEnded: _on_call_ended,
        AdapterError: _on_error,
    }

    def _agent_played(self, played: list[tuple[AgentResponse, int]], t: int) -> None:
        for response, samples in played:
            if response.onset_ms is None:
                response.onset_ms = t
                self.log.emit(EventType.AGENT_AUDIO_START, "agent", t, {"response_id": response.response_id})
            response.played_samples += samples
            self.last_agent_audio_ms = t + FRAME_MS
            self._maybe_end_response(response, t + FRAME_MS)

    def _maybe_end_response(self, response: AgentResponse, t: int) -> None:
        finished = response.truncated or (response.done and response.played_samples >= response.queued_samples)
        if finished and response.onset_ms is not None and response.end_ms is None:
            response.end_ms = t
            self.log.emit(
                EventType.AGENT_AUDIO_END,
                "agent",
                t,
                {
                    "response_id": response.response_id,
                    "text": response.transcript,
                    "duration_ms": response.duration_ms,
                    "truncated": response.truncated,
                },
            )

    @property
    def _agent_busy(self) -> bool:
        """The agent is speaking, mid-response, or owes the answer to a tool result it just got."""
        if self.awaiting_followup_since is not None and self.clock.media_ms - self.awaiting_followup_since > IDLE_TIMEOUT_MS:
            self.awaiting_followup_since = None  # it never answered: stop waiting for it
        return (
            self.agent_channel.queued_samples > 0
            or (self.current is not None and not self.current.done)
            or self.awaiting_followup_since is not None
        )

    # -- events, approvals and grading on the way --------------------------------------------

    async def _fire_events(
        self,
        t: int,
        *,
        act_keys: list[str],
        tool_calls: list[str] | None = None,
        mutations: list[str] | None = None,
        commit_attempts: list[str] | None = None,
    ) -> None:
        """Events fire as soon as their trigger is observed — mid-response, not at the turn's end."""
        fired = await self.effects.fire_events(
            t,
            self.heard,
            act_keys=act_keys,
            tool_calls=tool_calls or [],
            mutations=mutations or [],
            commit_attempts=commit_attempts or [],
            time_triggers=False,
        )
        overlay = [e.event_id for e in fired if e.event_id in self.overlay_event_ids]
        if overlay:
            self._plan_overlays(t, overlay)

    def _plan_overlays(self, t: int, event_ids: list[str]) -> None:
        """Step the flow at once so a barge-in or back-channel can land while the agent speaks."""
        for plan in self.user.next_plans(Observation(media_time_ms=t, fired_events=event_ids)):
            if plan.floor_action in OVERLAY_FLOOR_ACTIONS:
                onset = self.current.onset_ms if self.current is not None else None
                self.deliveries.schedule(plan, response_onset_ms=onset)
            else:
                self.held_plans.append(plan)

    async def _start_due_overlays(self, t: int) -> None:
        if self.user_channel.busy:
            return
        agent_speaking = self.agent_channel.queued_samples > 0
        onset = self.current.onset_ms if self.current is not None else None
        for plan in self.deliveries.due(
            t, agent_speaking=agent_speaking, agent_busy=self._agent_busy, current_onset_ms=onset
        ):
            self._speak_plan(plan, overlay=True)

    async def _gate_status(self, t: int) -> None:
        report = await self.effects.grade(judge=None)
        self.log.emit(EventType.GATE_STATUS, "harness", t, {**report.components, "pts": report.pts})

    # -- the user ------------------------------------------------------------------------------

    def _speak(self, text: str, *, plan: UserPlan | None = None, **flags: bool) -> None:
        clip = self.clips[text]  # every speakable text was prepared before the clock started
        self.user_channel.enqueue(UserUtterance(pcm=clip.pcm, text=text, plan=plan, flags=flags))

    def _speak_plan(self, plan: UserPlan, *, overlay: bool = False) -> None:
        utterance = self.user.realize(plan)
        if utterance is None:
            self.fallbacks += 1
            self.log.emit(EventType.SIMULATOR_FALLBACK, "harness", self.clock.media_ms, {"user_plan_id": plan.id})
            return
        flags = {}
        if overlay:
            flags["backchannel" if plan.floor_action in CONTINUE_ACTIONS else "barge"] = True
        self._speak(utterance.text, plan=plan, **flags)

    async def _user_started(self, utterance: UserUtterance, t: int) -> None:
        plan = utterance.plan
        if plan is not None:
            self.log.emit(
                EventType.USER_PLAN,
                "user",
                t,
                {"plan_id": plan.id, "speech_act": plan.speech_act, "facts": list(plan.fact_ids), "floor_action": plan.floor_action},
            )
        self.log.emit(
            EventType.USER_AUDIO_START,
            "user",
            t,
            {"text": utterance.text, "duration_ms": utterance.duration_ms, "plan_id": plan.id if plan else None, **utterance.flags},
        )
        if plan is not None and plan.speech_act in ("REVOKE", "DENY"):
            await self.effects.revoke(t)
        if utterance.flags.get("barge") or utterance.flags.get("backchannel"):
            self.deliveries.started(plan, onset_ms=t, playing=self.agent_channel.playing)

    async def _user_ended(self, utterance: UserUtterance, t: int) -> None:
        plan = utterance.plan
        self.log.emit(EventType.USER_AUDIO_END, "user", t, {"text": utterance.text, "plan_id": plan.id if plan else None})
        if not utterance.flags.get("backchannel"):
            # The user held the floor: it now waits for the agent's answer to *this* utterance.
            # (A back-channel does not take the floor, so the agent's ongoing turn still counts.)
            self.last_user_end_ms = t
            self.agent_acted = False
        # Approval takes effect when the user's "yes" has been heard, never at its onset.
        if plan is not None and plan.speech_act == "APPROVE":
            await self.effects.grant(t, plan.id)

    async def _maybe_user_turn(self, t: int) -> None:
        if self.user_channel.busy or self.deliveries.has_waiting or self._agent_busy:
            return
        if self.agent_hung_up:
            self.end_reason = "agent_ended"
        elif self.agent_acted and t - self.last_agent_audio_ms >= TURN_GAP_MS:
            await self._user_turn(t)
        elif not self.agent_acted and t - self.last_user_end_ms >= IDLE_TIMEOUT_MS:
            await self._user_turn(t)

    async def _user_turn(self, t: int) -> None:
        heard, self.heard = self.heard, AgentActivity()
        self.agent_acted = False
        self.last_user_end_ms = t  # the idle timer restarts even if the user says nothing
        obs = heard.observation(t, self.user.repetition_counts)
        plans, self.held_plans = [*self.held_plans, *self.user.next_plans(obs)], []
        if plans:
            self.user_turns += 1
            if self.user_turns > self.max_turns:
                self.end_reason = "max_turns"
                return
            for plan in plans:
                self._speak_plan(plan)
            return
        if self.user.done:
            self.end_reason = "flow_done"
            return
        self._recover(heard.acts, t)

    def _recover(self, last_acts: list[str], t: int) -> None:
        if self.closing_said:
            self.end_reason = "closing"
            return
        decision = self.user.recover(last_acts)
        if decision.move is RecoveryMove.END or decision.text is None:
            self.end_reason = "nudges_exhausted"
            return
        if decision.move is RecoveryMove.RESTATE:
            self.log.emit(
                EventType.USER_PLAN,
                "user",
                t,
                {"plan_id": decision.answer.plan_id if decision.answer else None, "speech_act": "ANSWER",
                 "facts": list(decision.answer.fact_ids) if decision.answer else [], "recovered": True},
            )
            self._speak(decision.text, recovered=True)
        elif decision.move is RecoveryMove.CLOSE:
            self.closing_said = True
            self.log.emit(EventType.USER_PLAN, "user", t, {"plan_id": "close", "speech_act": "END", "facts": []})
            self._speak(decision.text, closing=True)
        else:
            self._speak(decision.text, nudge=True)

    # -- the end ---------------------------------------------------------------------------------

    async def _finish(self, judge: Any, session_dir: Path | None) -> DuplexSessionResult:
        t = self.clock.media_ms
        self.deliveries.finish(t)
        for response in self.responses:
            if response.onset_ms is not None and response.end_ms is None:
                response.truncated = response.played_samples < response.queued_samples
                response.done = True
                self._maybe_end_response(response, t)
        report = await self.effects.grade(judge)
        snapshot = self.effects.last_snapshot
        outcome = "SIMULATOR_FALLBACK" if self.fallbacks else ("SUCCESS" if report.pts else "FAILURE")
        self.log.emit(EventType.RUN_END, "harness", t, {"outcome": outcome, "pts": report.pts, "reason": self.end_reason})
        if session_dir is not None:
            write_workspace_files(session_dir, snapshot)
            await asyncio.to_thread(self.recorder.write, session_dir / "audio")
        return DuplexSessionResult(
            run_id=self.log.run_id,
            task_id=self.bundle.task_id,
            condition="C2",
            pts=report.pts,
            outcome=outcome,
            reason=self.end_reason or "",
            turns=self.user_turns,
            grade=report,
            snapshot=snapshot,
            events=self.log,
            session_dir=session_dir,
            adapter_meta={"model_id": self.adapter.model_id, "clock": self.clock.kind},
            infra_errors=self.infra_errors,
        )


def _speech_name(speech: SpeechSource) -> str:
    if speech.bank is None:
        return "espeak"
    return "prerendered+espeak" if speech.fallback_texts else "prerendered"
