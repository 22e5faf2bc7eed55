"""Duplex events delivered during agent speech, and the measurement of how the agent reacted.

A barge-in (expects the agent to yield) or a back-channel (expects it to continue) is scheduled
when its event fires and spoken at the onset of the agent's current speech plus
``start_window_ms[0]``, while the agent is speaking by the one rule of ``floor_meter.py`` (audio
queued to play and a speech segment open). The same rule decides, at the user's onset, whether
there was a floor to yield (``docs/duplex.md``, "One definition of speaking"):

- nothing queued to play (a pause: between responses, waiting on a tool, or past its last words
  while its segment is still open) — not speaking: ``no_opportunity`` ``agent_paused`` (a segment
  was open) or ``agent_silent`` (none), listed, never scored;
- speaking, but the audio playing is not speech (a tone, noise): ``agent_not_speech``;
- speaking: the segment is watched on the played audio. When it ends, the stop latency is its last
  voiced sample − the onset, never clamped (negative when the onset fell in a pause of queued
  speech). ``floor_outcome`` is ``yielded`` when the agent dropped queued audio after the onset and
  stopped within ``max_stop_latency_ms``, ``finished`` when it stopped in time with nothing dropped
  (its queued audio ran out: not a yield, and no floor decision to score), ``kept_talking`` otherwise.

What the adapter says (a cleared playout) is recorded beside it as a diagnostic; the drop is the
harness's own channel dropping samples. Nothing here touches the agent's audio.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.audio.agent_speech import SpeechSegment
from harness.events import EventBus, EventType
from harness.tasks.models import EventProgram, EventSpec, FlowSpec
from harness.user.flow_engine import UserPlan

from .floor_meter import FloorMeter

__all__ = ["CONTINUE_ACTIONS", "OVERLAY_FLOOR_ACTIONS", "YIELD_ACTIONS", "DeliveryTracker", "overlay_events"]

YIELD_ACTIONS = frozenset({"BARGE_IN", "URGENT_OVERRIDE"})
CONTINUE_ACTIONS = frozenset({"BACKCHANNEL", "OVERLAP_WITHOUT_FLOOR_CLAIM"})
OVERLAY_FLOOR_ACTIONS = YIELD_ACTIONS | CONTINUE_ACTIONS

DEFAULT_WINDOW_MS = 700
DEFAULT_MAX_STOP_LATENCY_MS = 1500
#: How long after its onset a delivery is watched for a stop before it counts as "kept talking".
WATCH_EXTRA_MS = 3000


def overlay_events(flow: FlowSpec) -> set[str]:
    """Event ids whose flow reaction is spoken over the agent (barge-in or back-channel)."""
    return {
        t.when.external_event
        for state in flow.states.values()
        for t in state.transitions
        if t.when.external_event and t.do is not None and t.do.floor_action.value in OVERLAY_FLOOR_ACTIONS
    }


@dataclass
class _Waiting:
    plan: UserPlan
    spec: EventSpec | None
    response_onset_ms: int | None


@dataclass
class _Watch:
    plan: UserPlan
    spec: EventSpec | None
    onset_ms: int
    user_end_ms: int
    segment: SpeechSegment
    signalled_ms: int | None = None
    #: When queued agent audio was first dropped after the onset (the agent cut its own speech).
    cut_ms: int | None = None


class DeliveryTracker:
    def __init__(self, program: EventProgram, log: EventBus) -> None:
        self._specs = {e.id: e for e in program.events}
        self._log = log
        self._waiting: list[_Waiting] = []
        self._watching: list[_Watch] = []

    @property
    def has_waiting(self) -> bool:
        return bool(self._waiting) or bool(self._watching)

    def schedule(self, plan: UserPlan, *, response_onset_ms: int | None) -> None:
        self._waiting.append(_Waiting(plan, self._specs.get(plan.event_id or ""), response_onset_ms))

    def due(self, t: int, floor: FloorMeter, *, agent_busy: bool) -> list[UserPlan]:
        """Plans whose moment has come: inside the agent's speech, or at once if it is over."""
        ready: list[UserPlan] = []
        for item in list(self._waiting):
            if floor.speaking:
                onset = item.response_onset_ms if item.response_onset_ms is not None else floor.onset_ms
                if onset is not None and t < onset + _window_start(item.spec):
                    continue
            elif agent_busy:
                continue  # the agent is about to speak: wait for its audio
            self._waiting.remove(item)
            ready.append(item.plan)
            break  # one at a time: the user channel plays one utterance
        return ready

    def started(self, plan: UserPlan | None, *, onset_ms: int, duration_ms: int, floor: FloorMeter,
                speech: bool = True) -> None:
        """The user's overlapping utterance began over the agent's floor as it is now; ``speech``
        says whether the agent audio playing is speech."""
        if plan is None:
            return
        spec = self._specs.get(plan.event_id or "")
        segment = floor.segment
        if not floor.speaking or segment is None:
            self._emit(plan, spec, onset_ms, speaking=False, t=onset_ms,
                       no_opportunity="agent_silent" if segment is None else "agent_paused")
        elif not speech:
            self._emit(plan, spec, onset_ms, speaking=True, t=onset_ms, no_opportunity="agent_not_speech")
        else:
            self._watching.append(_Watch(plan, spec, onset_ms, onset_ms + duration_ms, segment))

    def agent_cleared(self, t: int, *, dropped_samples: int) -> None:
        """The adapter cleared its playout at ``t`` (its claim, a diagnostic) and the channel dropped
        ``dropped_samples`` of its queued audio (what the agent's audio really lost)."""
        for watch in self._watching:
            if watch.signalled_ms is None:
                watch.signalled_ms = t
            if dropped_samples and watch.cut_ms is None:
                watch.cut_ms = t

    def observe_frame(self, t: int) -> None:
        for watch in list(self._watching):
            if watch.segment.closed:
                self._watching.remove(watch)
                self._measured(watch, watch.segment.last_voiced_end_ms, t)
            elif t - watch.onset_ms > _max_stop(watch.spec) + WATCH_EXTRA_MS:
                self._watching.remove(watch)
                self._measured(watch, None, t, unmeasured="still_speaking")

    def finish(self, t: int) -> None:
        """Close every open measurement at session end (the agent never stopped)."""
        for watch in self._watching:
            self._measured(watch, None, t, unmeasured="session_ended")
        self._watching.clear()
        self._waiting.clear()

    def _measured(self, watch: _Watch, stop_ms: int | None, t: int, *, unmeasured: str | None = None) -> None:
        heard_until = stop_ms if stop_ms is not None else t
        latency = None if stop_ms is None else stop_ms - watch.onset_ms
        if latency is None or latency > _max_stop(watch.spec):
            outcome = "kept_talking"
        else:
            outcome = "yielded" if watch.cut_ms is not None else "finished"
        self._emit(
            watch.plan,
            watch.spec,
            watch.onset_ms,
            speaking=True,
            t=t,
            stop_latency_ms=latency,
            overlap_ms=max(0, min(heard_until, watch.user_end_ms) - watch.onset_ms),
            signalled_ms=None if watch.signalled_ms is None else watch.signalled_ms - watch.onset_ms,
            outcome=outcome,
            unmeasured=unmeasured,
        )

    def _emit(
        self,
        plan: UserPlan,
        spec: EventSpec | None,
        onset_ms: int,
        *,
        speaking: bool,
        t: int,
        stop_latency_ms: int | None = None,
        overlap_ms: int = 0,
        signalled_ms: int | None = None,
        no_opportunity: str | None = None,
        outcome: str | None = None,
        unmeasured: str | None = None,
    ) -> None:
        action = plan.floor_action
        max_stop = _max_stop(spec)
        # Nothing to stop: no latency and no yield (listed, not scored).
        yielded = None if no_opportunity else outcome == "yielded"
        self._log.emit(
            EventType.DUPLEX_EVENT,
            "user",
            t,
            {
                "event_id": plan.event_id or (spec.id if spec else None),
                "type": spec.type if spec else action,
                "delivery": action,
                "plan_id": plan.id,
                "onset_ms": onset_ms,
                "expected_floor_action": "YIELD" if action in YIELD_ACTIONS else "CONTINUE",
                "agent_speaking_at_onset": speaking,
                "stop_latency_ms": stop_latency_ms,
                "isl_ms": stop_latency_ms,
                "max_stop_latency_ms": max_stop,
                "agent_yielded": yielded,
                "overlap_ms": overlap_ms,
                "agent_signalled_stop_ms": signalled_ms,
                "yield_opportunity": no_opportunity is None,
                **({"no_opportunity": no_opportunity} if no_opportunity else {}),
                **({"floor_outcome": outcome} if outcome else {}),
                **({"unmeasured": unmeasured} if unmeasured else {}),
            },
        )


def _window_start(spec: EventSpec | None) -> int:
    if spec is not None and spec.start_window_ms:
        return int(spec.start_window_ms[0])
    return DEFAULT_WINDOW_MS


def _max_stop(spec: EventSpec | None) -> int:
    if spec is not None and spec.max_stop_latency_ms is not None:
        return int(spec.max_stop_latency_ms)
    return DEFAULT_MAX_STOP_LATENCY_MS
