"""Conditions C1/C2/C3: the continuous voice session on a media clock (see ``docs/duplex.md``).

One loop advances both channels frame by frame. Nothing holds up a frame: tool calls, the gate
status after each call and local ASR run as jobs delivered at frame boundaries (``deferred.py``).
The runner moves audio, routes the agent's events and decides when the simulated user speaks;
speech activity, yield and stop latency are measured on the agent audio that played
(``agent_speech.py``), never taken from the adapter. Grading and run files belong to other modules.
"""

from __future__ import annotations

import asyncio
import json
import traceback
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from harness.agents.limits import AGENT_LIMITS, AgentLimits
from harness.agents.realtime import (
    AdapterError,
    AdapterInfo,
    AudioDelta,
    CallEnded,
    McpCallReported,
    McpEndpoint,
    PlaybackReport,
    PlayoutCleared,
    RealtimeAdapter,
    ResponseDone,
    SessionConfig,
    SpeechStarted,
    SpeechStopped,
    ToolCallCancelled,
    ToolCallRequested,
    ToolResult,
    TranscriptDelta,
    TranscriptDone,
    UserTranscript,
    tool_path,
)
from harness.agents.system_prompt import agent_instructions
from harness.audio.acoustics import AcousticChain
from harness.audio.agent_asr import AgentTranscriber, asr_available
from harness.audio.frames import FRAME_MS, AudioFrame, samples_to_ms
from harness.audio.speech_bank import SpeechSource
from harness.audio.stereo_recorder import StereoRecorder
from harness.audio.vad import FrameVad
from harness.errors import AgentFailure, ProviderError, SessionInfraError
from harness.events import EVENTS_FILE, SCHEMA_VERSION, EventBus, EventType, JsonlEventWriter
from harness.grading.report import GradeReport
from harness.tasks.bundle import TaskBundle
from harness.user.flow_engine import Observation, UserPlan
from harness.user.llm_act_observer import LlmActClassifier
from harness.user.recovery import RecoveryMove
from harness.user.simulator import SimulatedUser
from mcp_servers.records import EnvironmentSnapshot, ToolCallRecord

from .agent_blame import AgentCalls, AgentKind
from .agent_boundary import AgentBoundary
from .agent_speech import AgentSpeechMeter, SpeechSegment
from .audio_levels import LevelMeter
from .channels import AgentChannel, AgentResponse, UserChannel, UserUtterance
from .clocks import MediaClock, make_clock
from .deferred import DeferredWork
from .duplex_delivery import CONTINUE_ACTIONS, OVERLAY_FLOOR_ACTIONS, DeliveryTracker, overlay_events
from .environment_port import EnvironmentPort
from .heard_speech import HeardSlice, HeardSpeech
from .session_effects import AgentActivity, SessionEffects

__all__ = ["VOICE_CONDITIONS", "DuplexSessionResult", "run_duplex_session"]

#: The user takes its turn once the agent has finished and been silent this long.
TURN_GAP_MS = 400
#: An agent that says nothing for this long after the user's turn gets a nudge.
IDLE_TIMEOUT_MS = 8000
#: How often (media ms) the harness tells the server the media time, in native tool mode.
MEDIA_TIME_PUSH_MS = 100
#: How long the server's call stream may lag behind its call count before that is an infra failure.
CATCH_UP_TIMEOUT_S = 5.0
#: ``bridge``: the harness executes the agent's function calls; ``native``: the agent calls MCP itself.
TOOL_MODES = ("bridge", "native")
#: C1 alternates strictly (no overlap from the user); C2 and C3 are full duplex.
VOICE_CONDITIONS = ("C1", "C2", "C3")


@dataclass
class DuplexSessionResult:
    run_id: str
    task_id: str
    condition: str
    pts: int | None
    outcome: str
    reason: str
    turns: int
    grade: GradeReport
    snapshot: EnvironmentSnapshot
    events: EventBus
    session_dir: Path | None
    recorder: StereoRecorder
    observed_act_keys: list[str]
    adapter_meta: dict[str, Any] = field(default_factory=dict)
    infra_errors: list[str] = field(default_factory=list)
    usage: list[dict[str, Any]] = field(default_factory=list)
    #: How the agent failed at its boundary (``{"kind", "detail", "media_ms"}``); the run is scored.
    agent_failure: dict[str, Any] | None = None


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
    condition: str = "C2",
    tool_latency_ms: int = 0,
    sandbox: dict[str, Any] | None = None,
    observer: LlmActClassifier | None = None,
    tool_mode: str = "bridge",
    mcp_endpoint: McpEndpoint | None = None,
    acoustics: AcousticChain | None = None,
    agent_kind: AgentKind = "builtin",
    limits: AgentLimits = AGENT_LIMITS,
    agent_failure: AgentFailure | None = None,
) -> DuplexSessionResult:
    """Run one voice session to its end, grade it and write its run files (when ``session_dir``).

    ``agent_kind`` (the model's ``ModelSpec.agent_kind``; a campaign always passes it) decides blame
    at the agent boundary; the default suits the harness's own agents, which direct callers run.
    Whatever the agent does wrong — raise, send malformed events, hang past the watchdog — ends the
    session as its ``agent_failure``, graded and scored, never raised from here. A failure given as
    ``agent_failure`` happened before the session (its container exited): the adapter is never
    connected, and the environment is graded as it is.

    Raises:
        SessionInfraError: the sandbox or the provider failed (retryable; never scored).
        Anything else: a harness bug; a ``HARNESS_ERROR`` event with its traceback is logged first.
    """
    from harness.results.run_dir import write_session_files

    if condition not in VOICE_CONDITIONS:
        raise ValueError(f"unknown voice condition {condition!r}; expected one of {', '.join(VOICE_CONDITIONS)}")
    if (condition == "C3") != (acoustics is not None):
        raise ValueError("condition C3 and an acoustics chain go together (C3 needs one; C1/C2 take none)")
    # The watchdog starts with the session: set-up and the conversation both count, grading does not.
    agent = AgentBoundary(adapter, AgentCalls.for_session(agent_kind, bundle.task.time_budget_s, limits), limits)
    # In-process agents run on the virtual clock (deterministic, fast); live providers on wall time.
    clock = clock or make_clock(agent.clock_mode)
    run_id = run_id or uuid.uuid4().hex[:12]
    bus = EventBus(run_id=run_id, task_version=bundle.task.version, condition=condition, wall_clock_ns=clock.wall_ns)
    if session_dir is not None:
        JsonlEventWriter(session_dir / EVENTS_FILE).attach(bus)
    if on_bus is not None:
        on_bus(bus)  # a live consumer (the TUI) subscribes before the first event
    session = _DuplexSession(bundle, agent, env, speech, clock, bus, seed, max_turns, condition,
                             privileged=privileged, tool_latency_ms=tool_latency_ms, sandbox=sandbox,
                             observer=observer, tool_mode=tool_mode, mcp_endpoint=mcp_endpoint,
                             acoustics=acoustics, seed_for_acoustics=seed, prior_failure=agent_failure)
    try:
        result = await session.run(judge)
        if session_dir is not None:
            await write_session_files(session_dir, result, gold_doc_ids=list(bundle.gold_doc_ids))
        result.session_dir = session_dir
        return result
    except (SessionInfraError, ProviderError) as exc:
        bus.emit(EventType.INFRA_FAILURE, "harness", clock.media_ms,
                 {"error": str(exc), "kind": type(exc).__name__, "transient": getattr(exc, "transient", False)})
        raise
    except Exception as exc:
        bus.emit(EventType.HARNESS_ERROR, "harness", clock.media_ms,
                 {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()})
        raise
    finally:
        await session.work.aclose()
        bus.close()
        await agent.close()  # once: a session that finished closed it before grading


class _DuplexSession:
    def __init__(
        self,
        bundle: TaskBundle,
        agent: AgentBoundary,
        env: EnvironmentPort,
        speech: SpeechSource,
        clock: MediaClock,
        bus: EventBus,
        seed: int,
        max_turns: int,
        condition: str,
        *,
        privileged: bool,
        tool_latency_ms: int,
        sandbox: dict[str, Any] | None = None,
        observer: LlmActClassifier | None = None,
        tool_mode: str = "bridge",
        mcp_endpoint: McpEndpoint | None = None,
        acoustics: AcousticChain | None = None,
        seed_for_acoustics: int = 1,
        prior_failure: AgentFailure | None = None,
    ) -> None:
        self.acoustics = acoustics
        self.seed = seed_for_acoustics
        if tool_mode not in TOOL_MODES:
            raise ValueError(f"unknown tool mode {tool_mode!r}; expected one of {', '.join(TOOL_MODES)}")
        if tool_mode == "native" and mcp_endpoint is None:
            raise ValueError("native tool mode needs the task's MCP endpoint to hand to the agent")
        self.sandbox = sandbox
        self.observer = observer
        self.tool_mode = tool_mode
        self.mcp_endpoint = mcp_endpoint
        # ``tool_path`` reads only the adapter class's ``mcp_client``, which the boundary carries.
        self.tool_path = tool_path(tool_mode, agent)  # type: ignore[arg-type]
        self._observed: asyncio.Queue[ToolCallRecord] = asyncio.Queue()
        self._observed_total = 0
        self._latest_call = -1
        self._last_media_push = -MEDIA_TIME_PUSH_MS
        self.bundle = bundle
        self.agent = agent
        #: The agent's failure at its boundary, and the media time it happened at.
        self.failure: AgentFailure | None = None
        self.failure_ms = 0
        self._prior_failure = prior_failure
        self.env = env
        self.speech = speech
        self.clock = clock
        self.log = bus
        self.max_turns = max_turns
        self.condition = condition
        self.privileged = privileged
        self.tool_latency_ms = tool_latency_ms
        self.user = SimulatedUser(bundle, condition=condition, seed=seed)
        self.effects = SessionEffects(bundle, env, self.user, bus)
        self.work = DeferredWork(wait_at_boundary=clock.kind == "virtual")
        self.user_channel = UserChannel()
        self.agent_channel = AgentChannel()
        self.recorder = StereoRecorder()
        self.levels = LevelMeter(self.recorder)
        self._last_levels: tuple[float, float] | None = None
        self.user_vad = FrameVad()
        self.agent_speech = AgentSpeechMeter()
        self.deliveries = DeliveryTracker(bundle.events, bus)
        # C1 is turn-based: nothing the user says overlaps the agent.
        self.overlay_event_ids = overlay_events(bundle.flow) if condition != "C1" else set()
        self.clips: dict[str, Any] = {}
        self.heard = AgentActivity()
        #: What the user has heard of each response: words only as their audio plays (docs/duplex.md).
        self.hearing = HeardSpeech()
        self.held_plans: list[UserPlan] = []
        self.responses: dict[str, AgentResponse] = {}
        self.current: AgentResponse | None = None
        self.pending_calls: dict[str, ToolCallRequested] = {}
        self.cancelled_calls: set[str] = set()
        self._tool_chain: Any = None
        self.agent_acted = False  # since the user's last turn
        self.awaiting_followup_since: int | None = None
        self.answered_at_ms = -1  # media time of the agent's last spoken response's end
        self.last_agent_audio_ms = 0
        self.last_user_end_ms = 0
        self.user_turns = 0
        self.fallbacks = 0
        self.closing_said = False
        self.agent_hung_up = False
        self.end_reason: str | None = None
        self.user_speaking = False
        self.infra_errors: list[str] = []
        self.usage: list[dict[str, Any]] = []
        self.transcriber: AgentTranscriber | None = None
        self.budget_ms = bundle.task.time_budget_s * 1000

    # -- set-up ------------------------------------------------------------------------------

    async def run(self, judge: Any) -> DuplexSessionResult:
        tools = await self.env.list_tools()
        config = SessionConfig(
            instructions=agent_instructions(self.bundle.task.title),
            tools=tools,
            voice=str(self.bundle.persona.get("realtime_voice") or "soft-spoken-gentleman"),
            reference_policy=self.bundle.policy if self.privileged else None,
            tool_mode=self.tool_mode,  # type: ignore[arg-type]
            mcp=self.mcp_endpoint if self.tool_mode == "native" else None,
        )
        started = False
        try:
            if self._prior_failure is not None:
                raise self._prior_failure
            await self.agent.connect(config)
            if self.tool_mode == "native":
                # The agent calls the tools itself; every call is observed at the server.
                self.work.submit("native-calls", self._follow_calls(), due_ms=10**12, deliver=_ignore)
            self.clips = await self.speech.prepare(self.user.speakable_texts())
            if self.acoustics is not None:
                # C3: every clip through the seeded degradations, once, before the clock (same samples on a rerun).
                self.clips = await asyncio.to_thread(self.acoustics.degrade_clips, self.clips, seed=self.seed)
            # Media time starts now that the agent is connected and every clip is ready: a slow connect
            # must not be followed by a burst of frames catching up with the wall.
            self._start(config)
            started = True
            await self._user_turn(0)
            while self.end_reason is None:
                # The loop's own watch: an agent that keeps it busy without media advancing is hung too.
                self.agent.calls.check("the session loop")
                await self._tick(self.clock.media_ms)
                await self.clock.advance()
        except AgentFailure as failure:
            if not started:  # it failed while connecting: the run still starts, to be graded
                self._start(config)
            self._agent_failed(failure)
        return await self._finish(judge)

    def _start(self, config: SessionConfig) -> None:
        self.clock.start()
        self.log.emit(
            EventType.RUN_START,
            "harness",
            0,
            {
                "task_id": self.bundle.task_id,
                "model_id": self.agent.model_id,
                "condition": self.condition,
                "clock": self.clock.kind,
                "user_audio": _speech_name(self.speech),
                "schema_version": SCHEMA_VERSION,
                "tool_mode": config.tool_mode,
                "tool_path": self.tool_path,
                "tool_latency_ms": self.tool_latency_ms,
                "privileged": self.privileged,
                "observer": self._observer_name,
                **({"acoustics": self._acoustics_spec} if self.acoustics is not None else {}),
            },
        )
        if self.sandbox is not None:
            info = dict(self.sandbox)
            self.log.emit(EventType.SANDBOX_STARTED, "harness", 0,
                          {"backend": str(info.pop("backend", "unknown")), "metadata": info})

    def _agent_failed(self, failure: AgentFailure) -> None:
        """The agent failed at its boundary: it is heard no more, and the session ends to be graded.

        The first failure is the one recorded; a later one (its close, say) only adds to the log.
        """
        t = self.clock.media_ms
        self.log.emit(EventType.AGENT_FAILURE, "agent", t, {"kind": failure.kind, "detail": failure.detail})
        if self.failure is None:
            self.failure, self.failure_ms = failure, t
        if self.end_reason is None:
            self.end_reason = "agent_failure"

    # -- one frame -----------------------------------------------------------------------------

    async def _tick(self, t: int) -> None:
        user_pcm, started, ended = self.user_channel.next_frame(t)
        if started is not None:
            await self._user_started(started, t)
        if self.tool_mode == "native" and t - self._last_media_push >= MEDIA_TIME_PUSH_MS:
            # The server stamps calls it receives with the media time the harness last pushed.
            self._last_media_push = t
            self.work.submit("media-time", self.env.set_media_time(t), due_ms=t, deliver=_ignore)
        await self.agent.send_audio(AudioFrame(user_pcm, t))
        await self._pump(t)
        agent_pcm, played = self.agent_channel.next_frame()
        await self._agent_played(played, agent_pcm, t)
        self.recorder.append(user_pcm, agent_pcm)
        levels = self.levels.frame_recorded()
        if levels is not None and levels != self._last_levels:
            # Only changes are sent (a silent stretch is one event); a consumer holds the last level.
            self._last_levels = levels
            self.log.emit(EventType.AUDIO_LEVEL, "harness", t + FRAME_MS - self.levels.window_ms,
                          {"window_ms": self.levels.window_ms, "user_dbfs": levels[0], "agent_dbfs": levels[1]})
        user_speaking = self.user_vad.update(user_pcm)
        if user_speaking != self.user_speaking:
            self.user_speaking = user_speaking
            self.log.emit(EventType.FLOOR_CHANGE, "user", t, {"channel": "user", "speaking": user_speaking})
        self.deliveries.observe_frame(t + FRAME_MS)
        if ended is not None:
            await self._user_ended(ended, t + FRAME_MS)
        await self._start_due_overlays(t)
        await self._maybe_user_turn(t + FRAME_MS)
        if t + FRAME_MS >= self.budget_ms and self.end_reason is None:
            self.end_reason = "time_budget"

    async def _pump(self, t: int) -> None:
        """Handle the agent's events and deliver due jobs until neither produces more.

        A delivered tool result can make an in-process agent answer at once, so both are repeated.
        """
        while True:
            self.agent.calls.check("the agent's events")  # an agent that never stops sending is hung
            events = self.agent.poll_events()
            for event in events:
                await self._agent_event(event, t)
            before = len(self.log.events)
            if self.work.has_due(t):
                await self.work.settle(t)
            while not self._observed.empty():
                await self._observed_call(self._observed.get_nowait(), t)
            if not events and len(self.log.events) == before:
                return

    # -- the agent -------------------------------------------------------------------------------

    def _response(self, response_id: str | None) -> AgentResponse:
        """The response an event belongs to: by the adapter's id, else the one in progress."""
        if response_id is not None:
            response = self.responses.get(response_id)
            if response is None:
                response = self.responses[response_id] = AgentResponse(response_id=response_id)
                self.current = response
            return response
        if self.current is None or self.current.done:
            self.current = AgentResponse(response_id=f"r{len(self.responses)}")
            self.responses[self.current.response_id] = self.current
        return self.current

    async def _agent_event(self, event: Any, t: int) -> None:
        handler = self._AGENT_HANDLERS.get(type(event))
        if handler is not None:
            await handler(self, event, t)

    async def _on_audio(self, event: AudioDelta, t: int) -> None:
        self.agent_acted = True
        response = self._response(event.response_id)
        self.agent_channel.enqueue(response, event.item_id, event.pcm)
        self.hearing.audio(response.response_id, event.item_id, len(event.pcm) // 2)

    async def _on_transcript(self, event: TranscriptDelta, t: int) -> None:
        response = self._response(event.response_id)
        words = [list(w) for w in event.words] if event.words else None
        self.log.emit(EventType.AGENT_TRANSCRIPT_PARTIAL, "agent", t,
                      {"text": event.text, "response_id": response.response_id, "item_id": event.item_id,
                       **({"words": words} if words else {})})
        # Words are only claims until their audio plays: the user hears them in _agent_played.
        self.hearing.words(response.response_id, event.item_id, event.text, event.words)

    async def _on_transcript_done(self, event: TranscriptDone, t: int) -> None:
        self.hearing.words_done(self._response(event.response_id).response_id, event.item_id, event.text)

    async def _observe_streaming(self, heard: HeardSlice, t: int) -> None:
        """Acts in words just heard fire their events at once, while the agent is still speaking.

        Only the newly heard slice and a bounded window before it are scanned (linear in the
        transcript): an act is new when it is in the window but not in the window's old part.
        """
        seen = Counter(a.key for a in self.user.acts_in(heard.window))
        seen.subtract(a.key for a in self.user.acts_in(heard.window[: heard.before]))
        new = [key for key, count in seen.items() for _ in range(count)]
        if new:
            await self._fire_events(t, act_keys=new)

    async def _on_tool_call(self, event: ToolCallRequested, t: int) -> None:
        if self.tool_mode == "native":
            # The provider's own MCP call event: the call itself is observed at the server.
            self._signal("tool_call_reported", t, response_id=event.response_id,
                         detail={"call_id": event.call_id, "name": event.name})
            return
        self.agent_acted = True
        try:
            args: Any = json.loads(event.arguments) if event.arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError):  # malformed, or nested past any sense
            args = event.arguments  # the environment refuses it with a message the model can act on
        self.effects.log_call(event.name, args, t, call_id=event.call_id, response_id=event.response_id)
        self.pending_calls[event.call_id] = event
        # Calls run one after another in the order the agent made them (the call log's order).
        previous, wall_start = self._tool_chain, self.clock.wall_ns()
        self._tool_chain = self.work.submit(
            f"tool:{event.call_id}",
            self._call_after(previous, event.name, args, t),
            due_ms=t + self.tool_latency_ms,
            deliver=partial(self._tool_done, event, t, wall_start),
        ).task

    async def _call_after(self, previous: Any, name: str, args: Any, t: int) -> ToolCallRecord:
        if previous is not None and not previous.done():
            await previous
        return await self.env.call_tool(name, args, t)

    async def _tool_done(self, event: ToolCallRequested, called_at: int, wall_start: int,
                         record: ToolCallRecord, t: int) -> None:
        self.pending_calls.pop(event.call_id, None)
        cancelled = event.call_id in self.cancelled_calls
        # Wall latency only means something on the wall clock (and would make virtual runs differ).
        wall_ms = (self.clock.wall_ns() - wall_start) / 1e6 if self.clock.kind == "realtime" else None
        await self._took_effect(record, t, call_id=event.call_id, called_at=called_at, wall_ms=wall_ms,
                                cancelled=cancelled)
        if cancelled or self.failure is not None:
            return  # withdrawn, or the agent failed: the result is logged, not sent
        self.awaiting_followup_since = t
        await self.agent.send_tool_result(ToolResult(event.call_id, record.name, record.output, not record.ok))

    async def _follow_calls(self) -> None:
        async for record in self.env.follow_calls():
            self._observed_total += 1
            self._observed.put_nowait(record)

    async def _catch_up_with_server(self, t: int) -> None:
        """Native mode: before the user decides anything, every call the server recorded is observed.

        The stream may lag the agent's own calls by a few ms; the user's next move must not depend
        on that lag (on the virtual clock it would make runs differ).
        """
        recorded = await self.env.set_media_time(t)
        deadline = asyncio.get_running_loop().time() + CATCH_UP_TIMEOUT_S
        while self._observed_total < recorded:
            if asyncio.get_running_loop().time() > deadline:
                raise SessionInfraError(f"the server recorded {recorded} calls but its call stream delivered "
                                        f"{self._observed_total} within {CATCH_UP_TIMEOUT_S} s", transient=True)
            await asyncio.sleep(0.001)
        while not self._observed.empty():
            await self._observed_call(self._observed.get_nowait(), t)

    async def _observed_call(self, record: ToolCallRecord, t: int) -> None:
        """A call the agent made itself, as the server recorded it (native tool mode)."""
        self.agent_acted = True
        if record.media_time_ms > self.answered_at_ms:
            # Made since the agent last answered (a process behind a socket speaks after its calls
            # land): the answer is owed, as after a bridge result.
            self.awaiting_followup_since = t
        self.effects.log_call(record.name, record.args, t, call_id=None, source="server",
                              called_at_ms=record.media_time_ms)
        await self._took_effect(record, t, call_id=None, called_at=record.media_time_ms, wall_ms=None,
                                cancelled=False)

    async def _took_effect(self, record: ToolCallRecord, t: int, *, call_id: str | None, called_at: int,
                           wall_ms: float | None, cancelled: bool) -> None:
        """One call's result is in (bridge or native): logged, observed by the user, and graded so far."""
        acts_before = len(self.heard.acts)
        self.effects.take_result(record, t, self.heard, call_id=call_id, called_at_ms=called_at,
                                 wall_latency_ms=wall_ms, cancelled=cancelled)
        await self._fire_events(
            t,
            act_keys=self.heard.acts[acts_before:],
            tool_calls=[record.name],
            mutations=record.mutations,
            commit_attempts=[record.commit_attempt] if record.commit_attempt else [],
        )
        self._latest_call = record.index
        if not self.work.pending("gate"):
            self._submit_gate(t)

    async def _on_tool_cancelled(self, event: ToolCallCancelled, t: int) -> None:
        self.cancelled_calls.update(event.call_ids)
        self._signal("tool_call_cancelled", t, detail={"call_ids": list(event.call_ids)})

    async def _on_playout_cleared(self, event: PlayoutCleared, t: int) -> None:
        cut = self.agent_channel.clear()
        for response in cut:
            response.cleared = True
        self.hearing.cleared([response.response_id for response in cut])
        await self._hear_over(self.hearing.over(), t)
        self.deliveries.agent_signalled_stop(t)
        self._signal("playout_cleared", t, response_id=event.response_id)

    async def _on_speech_started(self, event: SpeechStarted, t: int) -> None:
        self._signal("speech_started", t, item_id=event.item_id, detail=_present(audio_start_ms=event.audio_start_ms))

    async def _on_speech_stopped(self, event: SpeechStopped, t: int) -> None:
        self._signal("speech_stopped", t, item_id=event.item_id, detail=_present(audio_end_ms=event.audio_end_ms))

    async def _on_user_transcript(self, event: UserTranscript, t: int) -> None:
        self.log.emit(EventType.USER_TRANSCRIPT_PARTIAL, "agent", t, {"text": event.text, "item_id": event.item_id})

    async def _on_response_done(self, event: ResponseDone, t: int) -> None:
        response = self._response(event.response_id)
        if self.hearing.has_audio(response.response_id):
            # A response that only made calls (or only sent words, which nobody heard) is not the
            # answer: its continuation is still owed.
            self.awaiting_followup_since = None
            self.answered_at_ms = t
        response.done = True
        if event.usage is not None:
            usage = {k: v for k, v in _fields(event.usage).items() if v is not None}
            self.usage.append({"response_id": response.response_id, **usage})
        self._signal("response_done", t, response_id=response.response_id,
                     detail=_present(status=event.status))
        self.hearing.done(response.response_id)
        await self._hear_over(self.hearing.over(), t)

    async def _hear_over(self, response_ids: list[str], t: int, *, asr: bool = True) -> None:
        """Responses that are over (done, nothing left to play): their last words, and their record.

        ``asr=False`` at session end: nothing is delivered any more, so no transcription starts.
        """
        for response_id in response_ids:
            for heard in self.hearing.finish(response_id):
                await self._observe_streaming(heard, t)
            row = self.hearing.row(response_id)
            if row is None:
                continue  # only tool calls
            self.log.emit(EventType.SPEECH_AGREEMENT, "harness", t, row)
            response = self.responses[response_id]
            audio = self.hearing.unheard_audio(response_id)
            if audio is not None:
                if not asr:
                    continue
                # Audio without words: the user hears what played through local ASR, off the frame.
                self.work.submit("asr", self._transcribe(audio, t), due_ms=t,
                                 deliver=partial(self._hear_response, response, "asr"))
            else:
                await self._hear_response(response, "adapter", self.hearing.heard_text(response_id), t)

    async def _hear_response(self, response: AgentResponse, source: str, text: str, t: int) -> None:
        if not text:
            return
        response.transcript = text
        acts = self.effects.hear_text(text, t, self.heard, response_id=response.response_id, source=source)
        await self._fire_events(t, act_keys=acts)
        if self.observer is not None:
            # What the patterns did not hear, an LLM may (cached: a rerun hears the same user).
            remaining = [key for key in self.user.classifier_candidates() if key not in acts]
            if remaining:
                self.work.submit("observer", self.observer.classify(text, remaining), due_ms=t,
                                 deliver=self._hear_classified)

    async def _hear_classified(self, labels: list[str], t: int) -> None:
        if not labels:
            return
        acts = [act.key for act in self.user.hear_classified(labels)]
        for key in acts:
            self.log.emit(EventType.AGENT_ACT, "agent", t, {"act": key, "source": "classifier"})
        self.heard.acts.extend(acts)
        await self._fire_events(t, act_keys=acts)

    @property
    def _acoustics_spec(self) -> dict[str, Any]:
        """The C3 chain as recorded: preset, processors with every parameter, version."""
        assert self.acoustics is not None
        return self.acoustics.spec.model_dump(mode="json")

    @property
    def _observer_name(self) -> str:
        return self.observer.name if self.observer is not None else "deterministic"

    async def _transcribe(self, audio: np.ndarray, t: int) -> str:
        if self.transcriber is None:
            if not asr_available():
                self.log.emit(EventType.INFRA_FAILURE, "harness", t, {
                    "error": "agent audio without transcript and no local ASR (pip install 'apex-voice[asr]')",
                    "kind": "asr_unavailable"})
                return ""
            self.transcriber = AgentTranscriber()
        return await self.transcriber.transcribe(audio)

    async def _on_call_ended(self, event: CallEnded, t: int) -> None:
        self.agent_hung_up = True
        self._signal("call_ended", t)

    async def _on_mcp_call_reported(self, event: McpCallReported, t: int) -> None:
        # The provider's account of its own MCP call: a diagnostic; the server's stream is the record.
        detail = {"call_id": event.call_id, "name": event.name, **({"error": event.error} if event.error else {})}
        self._signal(f"mcp_call_{event.status}", t, response_id=event.response_id, detail=detail)

    async def _on_adapter_info(self, event: AdapterInfo, t: int) -> None:
        self.log.emit(EventType.ADAPTER_INFO, "agent", t, {"metadata": dict(event.metadata)})

    async def _on_error(self, event: AdapterError, t: int) -> None:
        self.infra_errors.append(event.message)
        self.log.emit(EventType.INFRA_FAILURE, "agent", t,
                      {"error": event.message, "kind": event.kind, "transient": event.transient})
        failure = self.agent.adapter_error(event)  # blamed by where it came from (agent_boundary)
        if failure is not None:
            raise failure

    _AGENT_HANDLERS = {
        AudioDelta: _on_audio,
        TranscriptDelta: _on_transcript,
        TranscriptDone: _on_transcript_done,
        ToolCallRequested: _on_tool_call,
        ToolCallCancelled: _on_tool_cancelled,
        McpCallReported: _on_mcp_call_reported,
        PlayoutCleared: _on_playout_cleared,
        SpeechStarted: _on_speech_started,
        SpeechStopped: _on_speech_stopped,
        UserTranscript: _on_user_transcript,
        ResponseDone: _on_response_done,
        CallEnded: _on_call_ended,
        AdapterInfo: _on_adapter_info,
        AdapterError: _on_error,
    }

    def _signal(self, signal: str, t: int, *, response_id: str | None = None, item_id: str | None = None,
                detail: dict[str, Any] | None = None) -> None:
        payload: dict[str, Any] = {"signal": signal, "detail": detail or {}}
        if response_id is not None:
            payload["response_id"] = response_id
        if item_id is not None:
            payload["item_id"] = item_id
        self.log.emit(EventType.AGENT_SIGNAL, "agent", t, payload)

    async def _agent_played(self, played: list[tuple[AgentResponse, str | None, int]], pcm: np.ndarray, t: int) -> None:
        """Measure the frame that played on the agent channel, and tell the adapter what played."""
        for heard in self.hearing.played(pcm, [(r.response_id, item, n) for r, item, n in played]):
            await self._observe_streaming(heard, t)
        await self._hear_over(self.hearing.over(), t)
        if self.agent.reports_playback:
            for response, item_id, _ in played:
                played_ms = samples_to_ms(self.agent_channel.played_by_item[(response.response_id, item_id)])
                self.agent.playback(PlaybackReport(response.response_id, item_id, played_ms))
        if played:
            self.last_agent_audio_ms = t + FRAME_MS
        playing = played[0][0].response_id if played else None
        step = self.agent_speech.update(pcm, t, playing)
        if step.floor_changed:
            self.log.emit(EventType.FLOOR_CHANGE, "agent", t, {"channel": "agent", "speaking": step.floor})
        if step.opened is not None:
            self.log.emit(EventType.AGENT_AUDIO_START, "agent", t,
                          _present(segment=step.opened.index, response_id=step.opened.response_id))
        if step.closed is not None:
            self._segment_ended(step.closed)

    def _segment_ended(self, segment: SpeechSegment) -> None:
        self.log.emit(EventType.AGENT_AUDIO_END, "agent", segment.last_voiced_end_ms,
                      _present(segment=segment.index, duration_ms=segment.duration_ms, response_id=segment.response_id))

    @property
    def _agent_busy(self) -> bool:
        """The agent is speaking, mid-response, running a tool, or owes the answer to a tool result."""
        if self.awaiting_followup_since is not None and self.clock.media_ms - self.awaiting_followup_since > IDLE_TIMEOUT_MS:
            self.awaiting_followup_since = None  # it never answered: stop waiting for it
        return (
            self.agent_channel.queued_samples > 0
            or (self.current is not None and not self.current.done)
            or bool(self.pending_calls)
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
        for plan in self._next_plans(Observation(media_time_ms=t, fired_events=event_ids), t):
            if plan.floor_action in OVERLAY_FLOOR_ACTIONS:
                segment = self.agent_speech.current
                self.deliveries.schedule(plan, response_onset_ms=segment.start_ms if segment else None)
            else:
                self.held_plans.append(plan)

    async def _start_due_overlays(self, t: int) -> None:
        if self.user_channel.busy:
            return
        segment = self.agent_speech.current
        for plan in self.deliveries.due(
            t,
            agent_speaking=self.agent_channel.queued_samples > 0,
            agent_busy=self._agent_busy,
            current_onset_ms=segment.start_ms if segment else None,
        ):
            self._speak_plan(plan, overlay=True)

    def _submit_gate(self, t: int) -> None:
        """One gate status at a time: calls that land while one is computed are covered by the next.

        An agent flooding tool calls thus costs at most two grades per burst, not one per call.
        """
        self.work.submit("gate", self._grade_so_far(), due_ms=t, deliver=self._gate_status)

    async def _grade_so_far(self) -> tuple[int, GradeReport]:
        after_call = self._latest_call
        return after_call, await self.effects.grade_so_far()

    async def _gate_status(self, graded: tuple[int, GradeReport], t: int) -> None:
        after_call, report = graded
        self.log.emit(EventType.GATE_STATUS, "harness", t,
                      {**report.components, "pts": report.pts, "after_call": after_call, "failing": report.explain()})
        if self._latest_call > after_call:
            self._submit_gate(t)

    # -- the user ------------------------------------------------------------------------------

    def _next_plans(self, obs: Observation, t: int) -> list[UserPlan]:
        before = self.user.flow.current
        plans = self.user.next_plans(obs)
        if self.user.flow.current != before:
            self.log.emit(EventType.USER_STATE_TRANSITION, "user", t,
                          {"from_state": before, "to_state": self.user.flow.current})
        return plans

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
            self.deliveries.started(plan, onset_ms=t, duration_ms=utterance.duration_ms, segment=self.agent_speech.current,
                                    speech=self.hearing.speech_playing())

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
        move = self._turn_move(t)
        if move is not None and self.tool_mode == "native":
            await self._catch_up_with_server(t)
            if self.user_channel.busy or self.deliveries.has_waiting or self._agent_busy:
                return
            move = self._turn_move(t)
        if move == "end":
            self.end_reason = "agent_ended"
        elif move == "turn":
            await self._user_turn(t)

    def _turn_move(self, t: int) -> str | None:
        """Whether the user speaks now (the agent finished, or stayed idle too long) or the call ends."""
        if self.agent_hung_up:
            return "end"
        if self.agent_acted and t - self.last_agent_audio_ms >= TURN_GAP_MS:
            return "turn"
        if not self.agent_acted and t - self.last_user_end_ms >= IDLE_TIMEOUT_MS:
            return "turn"
        return None

    async def _user_turn(self, t: int) -> None:
        heard, self.heard = self.heard, AgentActivity()
        self.agent_acted = False
        self.last_user_end_ms = t  # the idle timer restarts even if the user says nothing
        obs = heard.observation(t, self.user.repetition_counts)
        plans, self.held_plans = [*self.held_plans, *self._next_plans(obs, t)], []
        if self.condition == "C1":
            # Turn-based: a back-channel is not a turn, and nothing is spoken over the agent.
            plans = [p for p in plans if p.floor_action not in CONTINUE_ACTIONS]
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

    async def _finish(self, judge: Any) -> DuplexSessionResult:
        t = self.clock.media_ms
        try:
            if self.tool_mode == "native":
                await self._catch_up_with_server(t)
            await self.work.settle(t)  # results that are ready still land; anything later is cut
        except AgentFailure as failure:  # it failed taking a result: the rest land without it
            self._agent_failed(failure)
            await self.work.settle(t)
        await self.work.aclose()
        closed = self.agent_speech.close()
        if closed is not None:
            self._segment_ended(closed)
        await self._hear_over(self.hearing.close(), t, asr=False)
        self.deliveries.finish(t)
        metadata = {"model_id": self.agent.model_id, "clock": self.clock.kind, **self._agent_metadata()}
        self.log.emit(EventType.ADAPTER_INFO, "harness", t, {"metadata": metadata, "usage": _usage_total(self.usage)})
        closing = await self.agent.close()  # before grading, so a failure to close is on the record
        if closing is not None:
            self._agent_failed(closing)
        report = await self.effects.grade(judge)
        snapshot = self.effects.last_snapshot
        outcome = "SIMULATOR_FALLBACK" if self.fallbacks else _outcome(report)
        self.log.emit(EventType.RUN_END, "harness", t, {"outcome": outcome, "pts": report.pts, "reason": self.end_reason,
                                                         "pending_verdicts": len(report.pending_fields)})
        return DuplexSessionResult(
            run_id=self.log.run_id,
            task_id=self.bundle.task_id,
            condition=self.condition,
            pts=report.pts,
            outcome=outcome,
            reason=self.end_reason or "",
            turns=self.user_turns,
            grade=report,
            snapshot=snapshot,
            events=self.log,
            session_dir=None,
            recorder=self.recorder,
            observed_act_keys=sorted(self.user.observed_act_keys),
            adapter_meta={**metadata, "privileged": self.privileged, "tool_path": self.tool_path,
                          "observer": self._observer_name,
                          **({"acoustics": self._acoustics_spec} if self.acoustics is not None else {})},
            infra_errors=self.infra_errors,
            usage=self.usage,
            agent_failure=(None if self.failure is None else
                           {"kind": self.failure.kind, "detail": self.failure.detail, "media_ms": self.failure_ms}),
        )

    def _agent_metadata(self) -> dict[str, Any]:
        """What the adapter says of its session; an agent that fails to say is recorded, not trusted."""
        try:
            return self.agent.metadata()
        except AgentFailure as failure:
            self._agent_failed(failure)
            return {}


def _outcome(report: GradeReport) -> str:
    if report.pending:
        return "PENDING"  # the judge did not answer: neither a pass nor a fail until regraded
    return "SUCCESS" if report.pts else "FAILURE"


async def _ignore(result: Any, t: int) -> None:
    return None


def _speech_name(speech: SpeechSource) -> str:
    if speech.bank is None:
        return "espeak"
    return "prerendered+espeak" if speech.fallback_texts else "prerendered"


def _present(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _fields(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in obj.__slots__}


def _usage_total(usage: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not usage:
        return None
    total: Counter[str] = Counter()
    for row in usage:
        total.update({k: v for k, v in row.items() if isinstance(v, int)})
    return {"responses": len(usage), **total}
