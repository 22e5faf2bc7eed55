"""Duplex events delivered during agent speech, and the measurement of how the agent reacted.

A barge-in (expects the agent to yield) or a back-channel (expects it to continue) is scheduled
when its event fires and spoken at the onset of the agent's current speech plus
``start_window_ms[0]``. From the user's onset on, the agent's speech segment that was playing is
watched on the played audio (``agent_speech.py``): the stop latency is the time from the user's
onset to the segment's last voiced sample. What the adapter says (a cleared playout) is recorded
beside it as a diagnostic, never as the measurement. Nothing here touches the agent's audio.

A delivery is a yield opportunity only when the agent was speaking at the onset: a speech
segment was open *and* the audio playing was speech (``heard_speech.py``). Otherwise — nothing
playing, or a tone, a sweep or noise — it is listed with the reason (``no_opportunity``), with no
stop latency and no yield, and scored by nothing: silence is no proof of yielding.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.events import EventBus, EventType
from harness.tasks.models import EventProgram, EventSpec, FlowSpec
from harness.user.flow_engine import UserPlan

from .agent_speech import SpeechSegment

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

    def due(self, t: int, *, agent_speaking: bool, agent_busy: bool, current_onset_ms: int | None = None) -> list[UserPlan]:
        """Plans whose moment has come: inside the agent's speech, or at once if it is over."""
        ready: list[UserPlan] = []
        for item in list(self._waiting):
            onset = item.response_onset_ms if item.response_onset_ms is not None else current_onset_ms
            if agent_speaking and onset is not None:
                if t < onset + _window_start(item.spec):
                    continue
            elif agent_busy:
                continue  # the agent is about to speak: wait for its audio
            self._waiting.remove(item)
            ready.append(item.plan)
            break  # one at a time: the user channel plays one utterance
        return ready

    def started(
        self, plan: UserPlan | None, *, onset_ms: int, duration_ms: int, segment: SpeechSegment | None,
        speech: bool = True,
    ) -> None:
        """The user's overlapping utterance began; ``segment`` is the agent audio it overlaps, if any,
        and ``speech`` whether that audio is speech."""
        if plan is None:
            return
        spec = self._specs.get(plan.event_id or "")
        if segment is None or not speech:
            self._emit(plan, spec, onset_ms, speaking=segment is not None, t=onset_ms,
                       no_opportunity="agent_silent" if segment is None else "agent_not_speech")
            return
        self._watching.append(_Watch(plan, spec, onset_ms, onset_ms + duration_ms, segment))

    def agent_signalled_stop(self, t: int) -> None:
        """The adapter reported clearing its playout (diagnostic beside the measured stop)."""
        for watch in self._watching:
            if watch.signalled_ms is None:
                watch.signalled_ms = t

    def observe_frame(self, t: int) -> None:
        for watch in list(self._watching):
            if watch.segment.closed:
                self._watching.remove(watch)
                self._measured(watch, watch.segment.last_voiced_end_ms, t)
            elif t - watch.onset_ms > _max_stop(watch.spec) + WATCH_EXTRA_MS:
                self._watching.remove(watch)
                self._measured(watch, None, t)  # still talking long after it should have stopped

    def finish(self, t: int) -> None:
        """Close every open measurement at session end (the agent never stopped)."""
        for watch in self._watching:
            self._measured(watch, None, t)
        self._watching.clear()
        self._waiting.clear()

    def _measured(self, watch: _Watch, stop_ms: int | None, t: int) -> None:
        heard_until = stop_ms if stop_ms is not None else t
        self._emit(
            watch.plan,
            watch.spec,
            watch.onset_ms,
            speaking=True,
            t=t,
            stop_latency_ms=None if stop_ms is None else max(0, stop_ms - watch.onset_ms),
            overlap_ms=max(0, min(heard_until, watch.user_end_ms) - watch.onset_ms),
            signalled_ms=None if watch.signalled_ms is None else watch.signalled_ms - watch.onset_ms,
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
    ) -> None:
        action = plan.floor_action
        max_stop = _max_stop(spec)
        # Nothing to stop: no latency and no yield (listed, not scored).
        yielded = None if no_opportunity else stop_latency_ms is not None and stop_latency_ms <= max_stop
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
