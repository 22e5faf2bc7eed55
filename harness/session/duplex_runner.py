"""Conditions C1/C2/C3: the continuous voice session on a media clock (see ``docs/duplex.md``).

One loop advances both channels frame by frame and hands each frame to a fixed set of parts
(``docs/architecture.md``): the agent's events to :class:`AgentEventRouter`, its calls to the tool
executor, the played agent audio to the :class:`FloorMeter` and the user's hearing, the user's audio
to the :class:`UserDriver`; at the frame's end one :class:`FrameState` goes to the condition's
:class:`TurnPolicy`, whose move the loop applies. Nothing holds up a frame: tool calls, gate
statuses and local ASR run as jobs delivered at frame boundaries (``deferred.py``). Grading and run
files belong to other modules.
"""

from __future__ import annotations

import traceback
import uuid
from collections.abc import Callable

import numpy as np

from harness.agents.realtime import PlaybackReport, RealtimeAdapter, SessionConfig, ToolResult, tool_path
from harness.agents.system_prompt import agent_instructions
from harness.audio.frames import FRAME_MS, AudioFrame, samples_to_ms
from harness.blame.errors import AgentFailure, ProviderError, SessionInfraError
from harness.events import EVENTS_FILE, SCHEMA_VERSION, EventBus, EventType, JsonlEventWriter
from harness.tasks.bundle import TaskBundle

from .agent_blame import AgentCalls
from .agent_boundary import AgentBoundary
from .agent_events import AgentEventRouter
from .agent_listener import AgentListener
from .channels import AgentChannel, AgentResponse
from .clocks import MediaClock, make_clock
from .deferred import DeferredWork
from .duplex_result import DuplexSessionResult, FrameLateness, speech_name, usage_total
from .environment_port import EnvironmentPort
from .floor_meter import FloorMeter
from .gate_monitor import GateMonitor
from .outcome import session_outcome
from .session_config import TOOL_MODES, DuplexConfig
from .session_recording import SessionRecording
from .tool_executor import CallDone, make_tool_executor
from .turn_policy import FrameState, TurnLedger, TurnMove, turn_policy
from .user_driver import UserDriver

__all__ = ["TOOL_MODES", "DuplexConfig", "DuplexSessionResult", "run_duplex_session"]


async def run_duplex_session(bundle: TaskBundle, adapter: RealtimeAdapter, env: EnvironmentPort,
                             config: DuplexConfig) -> DuplexSessionResult:
    """Run one voice session to its end, grade it and write its run files (when ``config.session_dir``).

    Whatever the agent does wrong — raise, send malformed events, hang past the watchdog — ends the
    session as its ``agent_failure``, graded and scored, never raised from here.

    Raises:
        SessionInfraError: the sandbox or the provider failed (retryable; never scored).
        Anything else: a harness bug; a ``HARNESS_ERROR`` event with its traceback is logged first.
    """
    from harness.results.run_dir import write_session_files

    # The watchdog starts with the session: set-up and the conversation both count, grading does not.
    calls = AgentCalls.for_session(config.agent_kind, bundle.task.time_budget_s, config.limits)
    agent = AgentBoundary(adapter, calls, config.limits)
    # In-process agents run on the virtual clock (deterministic, fast); live providers on wall time.
    clock = config.clock or make_clock(agent.clock_mode)
    bus = EventBus(run_id=config.run_id or uuid.uuid4().hex[:12], task_version=bundle.task.version,
                   condition=config.condition, wall_clock_ns=clock.wall_ns)
    writer = await JsonlEventWriter.open(config.session_dir / EVENTS_FILE) if config.session_dir is not None else None
    if writer is not None:
        writer.attach(bus)
    if config.on_bus is not None:
        config.on_bus(bus)  # a live consumer (the TUI) subscribes before the first event
    session = _DuplexSession(bundle, agent, env, config, clock, bus)
    try:
        result = await session.run()
        if config.session_dir is not None:
            await write_session_files(config.session_dir, result, gold_doc_ids=list(bundle.gold_doc_ids))
        result.session_dir = config.session_dir
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
        try:
            if writer is not None:
                await writer.aclose()  # its thread joins off the loop; bus.close() then has nothing to wait for
        finally:
            bus.close()
        await agent.close()  # once: a session that finished closed it before grading


class _DuplexSession:
    """The frame loop over the parts; also the tool executor's :class:`CallSink`."""

    def __init__(self, bundle: TaskBundle, agent: AgentBoundary, env: EnvironmentPort, config: DuplexConfig,
                 clock: MediaClock, bus: EventBus) -> None:
        self.bundle, self.agent, self.env, self.config, self.clock, self.log = bundle, agent, env, config, clock, bus
        self.policy = turn_policy(config.condition)
        self.work = DeferredWork(wait_at_boundary=clock.kind == "virtual")
        self.ledger = TurnLedger()
        self.floor = FloorMeter(bus)
        self.user = UserDriver(bundle, env, bus, self.floor, clock, policy=self.policy, seed=config.seed,
                               max_turns=config.max_turns, condition=config.condition)
        self.listener = AgentListener(self.user, self.work, bus, config.observer, hearing=config.hearing)
        self.gate = GateMonitor(self.user.effects.grade_so_far, self.work, bus)
        self.tools = make_tool_executor(config.tool_mode, env, self.user.effects, self.work, clock, self,
                                        latency_ms=config.tool_latency_ms)
        self.agent_channel = AgentChannel(config.limits)
        self.router = AgentEventRouter(agent, bus, self.ledger, self.agent_channel, self.listener, self.tools,
                                       self.user.deliveries)
        self.recording = SessionRecording(bus, bundle.task.time_budget_s)
        self.lateness = FrameLateness()
        # ``tool_path`` reads only the adapter class's ``mcp_client``, which the boundary carries.
        self.tool_path = tool_path(config.tool_mode, agent)  # type: ignore[arg-type]
        self.failure: AgentFailure | None = None
        self.failure_ms = 0
        self.end_reason: str | None = None

    async def run(self) -> DuplexSessionResult:
        config = self.config
        agent_config = SessionConfig(
            instructions=agent_instructions(self.bundle.task.title),
            tools=await self.env.list_tools(),
            voice=str(self.bundle.persona.get("realtime_voice") or "soft-spoken-gentleman"),
            reference_policy=self.bundle.policy if config.privileged else None,
            tool_mode=config.tool_mode,
            mcp=config.mcp_endpoint if config.tool_mode == "native" else None,
        )
        started = False
        try:
            if config.agent_failure is not None:
                raise config.agent_failure
            # Clips first: a live provider is connected (and billed) only once there is nothing to wait for.
            await self.user.prepare(config.speech, config.acoustics, config.seed)
            await self.agent.connect(agent_config)
            self.tools.start()
            # Media time starts now that the agent is connected and every clip is ready: a slow connect
            # must not be followed by a burst of frames catching up with the wall.
            self._start()
            started = True
            self._user_turn(0)
            # The realtime clock's deadline for media time m is m / speed after its start (wall ms).
            realtime, speed = self.clock.kind == "realtime", self.clock.speed or 1.0
            while self.end_reason is None:
                # The loop's own watch: an agent that keeps it busy without media advancing is hung too.
                self.agent.calls.check("the session loop")
                await self._frame(self.clock.media_ms)
                await self.clock.advance()
                if realtime:
                    self.lateness.sample(self.clock.wall_ns() / 1e6 - self.clock.media_ms / speed)
        except AgentFailure as failure:
            if not started:  # it failed while connecting: the run still starts, to be graded
                self._start()
            self._agent_failed(failure)
        return await self._finish()

    def _start(self) -> None:
        config = self.config
        self.clock.start()
        self.log.emit(EventType.RUN_START, "harness", 0, {
            "task_id": self.bundle.task_id, "model_id": self.agent.model_id, "condition": config.condition,
            "clock": self.clock.kind, "user_audio": speech_name(config.speech), "schema_version": SCHEMA_VERSION,
            "tool_mode": config.tool_mode, "tool_path": self.tool_path, "tool_latency_ms": config.tool_latency_ms,
            "privileged": config.privileged, "observer": _observer(config), "hearing": config.hearing,
            **_acoustics(config),
            # A realtime clock run faster than the wall (APEX_VOICE_CLOCK_SPEED) is never a measurement: say so.
            **({"clock_speed": self.clock.speed} if self.clock.speed is not None else {})})
        if config.sandbox is not None:
            info = dict(config.sandbox)
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
        self._end("agent_failure")

    def _end(self, reason: str) -> None:
        if self.end_reason is None:
            self.end_reason = reason

    # -- one frame -----------------------------------------------------------------------------

    async def _frame(self, t: int) -> None:
        boundary = t + FRAME_MS
        user_pcm, started, ended = self.user.channel.next_frame(t)
        if started is not None:
            await self.user.started(started, t, agent_speech=self.listener.hearing.speech_playing)
        self.tools.frame(t)
        await self.agent.send_audio(AudioFrame(user_pcm, t))
        await self._pump(t)
        agent_pcm, played = self.agent_channel.next_frame()
        await self._agent_played(played, agent_pcm, t)
        self.recording.frame(user_pcm, agent_pcm, t)
        self.user.deliveries.observe_frame(boundary)
        if ended is not None and await self.user.ended(ended, boundary):
            # The user held the floor: it now waits for the agent's answer to *this* utterance.
            self.ledger.user_held_floor(boundary)
        # Everything below reads the state at the frame's end boundary (starting an overlay makes
        # the user busy, never the agent: one busy value serves both).
        self.ledger.give_up_waiting(boundary)
        agent_busy = self._agent_busy()
        self.user.start_due_overlays(t, agent_busy=agent_busy)
        move = self.policy.decide(self._state(agent_busy or self._still_hearing()), boundary)
        if move is not TurnMove.WAIT:
            await self._move(move, boundary)
        if boundary >= self.bundle.task.time_budget_s * 1000:
            self._end("time_budget")

    async def _pump(self, t: int) -> None:
        """Handle the agent's events and deliver due jobs until neither produces more.

        A delivered tool result can make an in-process agent answer at once, so both are repeated.
        """
        self.agent.new_frame()  # the event bound is per frame, however many polls it takes
        while True:
            self.agent.calls.check("the agent's events")  # an agent that never stops sending is hung
            events = self.agent.poll_events()
            for event in events:
                await self.router.route(event, t)
            before = len(self.log.events)
            if self.work.has_due(t):
                await self.work.settle(t)
            await self.tools.drain(t)
            if not events and len(self.log.events) == before:
                return

    async def _agent_played(self, played: list[tuple[AgentResponse, str | None, int]], pcm: np.ndarray, t: int) -> None:
        """Measure the frame that played on the agent channel, and tell the adapter what played."""
        await self.listener.played(pcm, [(r.response_id, item, n) for r, item, n in played], t)
        if self.agent.reports_playback:
            for response, item_id, _ in played:
                played_ms = samples_to_ms(self.agent_channel.played_by_item[(response.response_id, item_id)])
                self.agent.playback(PlaybackReport(response.response_id, item_id, played_ms))
        self.floor.played(pcm, t, played[0][0].response_id if played else None, bool(played),
                          self.agent_channel.queued_samples)

    def _agent_busy(self) -> bool:
        """The agent is speaking, mid-response, running a tool, or owes the answer to a tool result.

        Once it has hung up (or failed) it sends nothing more: only its queued audio and calls in
        flight can still land, and a response it left open must not hold the call to the time budget.
        """
        if self.ledger.agent_hung_up:
            return self.agent_channel.queued_samples > 0 or self.tools.pending
        return (self.agent_channel.queued_samples > 0 or self.router.mid_response or self.tools.pending
                or self.ledger.answer_owed_since is not None)

    def _still_hearing(self) -> bool:
        """Local ASR is still making out the agent's words (an agent that sends audio without them):
        the user answers what it heard, so it does not take its turn before it has heard it. On the
        virtual clock the job is settled at its boundary; on the realtime clock it takes wall time."""
        return bool(self.work.pending("asr"))

    def _state(self, agent_busy: bool) -> FrameState:
        ledger = self.ledger
        return FrameState(user_busy=self.user.channel.busy, overlays_waiting=self.user.deliveries.has_waiting,
                          agent_busy=agent_busy, agent_hung_up=ledger.agent_hung_up,
                          agent_acted=ledger.agent_acted, last_agent_audio_ms=self.floor.last_audio_end_ms,
                          last_user_end_ms=ledger.last_user_end_ms)

    async def _move(self, move: TurnMove, t: int) -> None:
        """Apply the policy's move at ``t``."""
        if self.tools.mode == "native":
            # Every call the server recorded is observed before the user decides (its stream may lag).
            await self.tools.catch_up(t)
            move = self.policy.decide(self._state(self._agent_busy() or self._still_hearing()), t)
        if move is TurnMove.END:
            self._end("agent_ended")
        elif move is TurnMove.TURN:
            self._user_turn(t)

    def _user_turn(self, t: int) -> None:
        self.ledger.user_held_floor(t)  # the idle timer restarts even if the user says nothing
        reason = self.user.take_turn(t)
        if reason is not None:
            self._end(reason)

    # -- the call sink ---------------------------------------------------------------------------

    async def call_done(self, done: CallDone, t: int) -> None:
        if done.source == "server":
            self.ledger.agent_acted = True
            if done.called_at_ms > self.ledger.answered_at_ms:
                # Made since the agent last answered (a process behind a socket speaks after its
                # calls land): the answer is owed, as after a bridge result.
                self.ledger.owe_answer(t)
        await self.user.call_done(done, t)
        self.gate.call_landed(done.record.index, t)

    async def send_result(self, result: ToolResult, t: int) -> None:
        if self.failure is not None:
            return  # the agent failed: the result is logged, not sent
        self.ledger.owe_answer(t)
        await self.agent.send_tool_result(result)

    # -- the end ---------------------------------------------------------------------------------

    async def _finish(self) -> DuplexSessionResult:
        t = self.clock.media_ms
        try:
            await self.tools.catch_up(t)
            await self.work.settle(t)  # results that are ready still land; anything later is cut
        except AgentFailure as failure:  # it failed taking a result: the rest land without it
            self._agent_failed(failure)
            await self.work.settle(t)
        await self.work.aclose()
        self.floor.close()
        await self.listener.hear_over(self.listener.hearing.close(), t, asr=False)
        self.user.deliveries.finish(t)
        metadata = {"model_id": self.agent.model_id, "clock": self.clock.kind, **_agent_metadata(self.agent, self._agent_failed)}
        self.log.emit(EventType.ADAPTER_INFO, "harness", t, {"metadata": metadata, "usage": usage_total(self.router.usage)})
        closing = await self.agent.close()  # before grading, so a failure to close is on the record
        if closing is not None:
            self._agent_failed(closing)
        report = await self.user.effects.grade(self.config.judge)
        snapshot = self.user.effects.last_snapshot
        assert snapshot is not None  # grade() took it
        outcome = session_outcome(report, self.user.fallbacks)
        self.log.emit(EventType.RUN_END, "harness", t, {"outcome": outcome, "pts": report.pts, "reason": self.end_reason,
                                                         "pending_verdicts": len(report.pending_fields),
                                                         **self.lateness.summary()})
        blamed = self.failure
        return DuplexSessionResult(
            run_id=self.log.run_id, task_id=self.bundle.task_id, condition=self.config.condition, pts=report.pts,
            outcome=outcome, reason=self.end_reason or "", turns=self.user.turns, grade=report, snapshot=snapshot,
            events=self.log, session_dir=None, recorder=self.recording.recorder,
            observed_act_keys=sorted(self.user.user.observed_act_keys),
            adapter_meta={**metadata, "privileged": self.config.privileged, "tool_path": self.tool_path,
                          "observer": _observer(self.config), **_acoustics(self.config)},
            agent_errors=self.router.agent_errors, usage=self.router.usage,
            agent_failure=None if blamed is None else
            {"kind": blamed.kind, "detail": blamed.detail, "media_ms": self.failure_ms},
        )

def _agent_metadata(agent: AgentBoundary, failed: Callable[[AgentFailure], None]) -> dict[str, object]:
    """What the adapter says of its session; an agent that fails to say is recorded, not trusted."""
    try:
        return agent.metadata()
    except AgentFailure as failure:
        failed(failure)
        return {}


def _observer(config: DuplexConfig) -> str:
    return config.observer.name if config.observer is not None else "deterministic"


def _acoustics(config: DuplexConfig) -> dict[str, object]:
    """The C3 chain as recorded: preset, processors with every parameter, version."""
    chain = config.acoustics
    return {"acoustics": chain.spec.model_dump(mode="json")} if chain is not None else {}
