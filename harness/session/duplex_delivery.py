"""Duplex events delivered during agent speech, and the measurement of how the agent reacted.

A barge-in (expects the agent to yield) or a back-channel (expects it to continue) is scheduled
when its event fires and spoken at the agent's response onset plus ``start_window_ms[0]``. From the
user's onset on, the agent channel is watched: the agent has stopped once its channel stays silent
for ``SILENCE_CONFIRM_MS``; the stop latency is the time from the user's onset to the end of the
agent's last audio. Nothing here touches the agent's audio.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.tasks.models import EventProgram, EventSpec, FlowSpec
from harness.user.flow_engine import UserPlan

from .event_log import EventLog, EventType

__all__ = ["OVERLAY_FLOOR_ACTIONS", "DeliveryTracker", "overlay_events"]

YIELD_ACTIONS = frozenset({"BARGE_IN", "URGENT_OVERRIDE"})
CONTINUE_ACTIONS = frozenset({"BACKCHANNEL", "OVERLAP_WITHOUT_FLOOR_CLAIM"})
OVERLAY_FLOOR_ACTIONS = YIELD_ACTIONS | CONTINUE_ACTIONS

DEFAULT_WINDOW_MS = 700
DEFAULT_MAX_STOP_LATENCY_MS = 1500
SILENCE_CONFIRM_MS = 200
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
    agent_speaking_at_onset: bool
    last_audio_end_ms: int | None = None


class DeliveryTracker:
    def __init__(self, program: EventProgram, log: EventLog) -> None:
        self._specs = {e.id: e for e in program.events}
        self._log = log
        self._waiting: list[_Waiting] = []
        self._watching: list[_Watch] = []

    @property
    def has_waiting(self) -> bool:
        return bool(self._waiting) or bool(self._watching)

    def schedule(self, plan: UserPlan, *, response_onset_ms: int | None, now_ms: int) -> None:
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

    def started(self, plan: UserPlan | None, *, onset_ms: int, agent_speaking: bool) -> None:
        if plan is None:
            return
        watch = _Watch(plan, self._specs.get(plan.event_id or ""), onset_ms, agent_speaking)
        if not agent_speaking:
            self._record(watch, stop_latency_ms=0, t=onset_ms)
            return
        self._watching.append(watch)

    def observe_frame(self, t: int, *, agent_audio: bool) -> None:
        for watch in list(self._watching):
            if t < watch.onset_ms:
                continue
            if agent_audio:
                watch.last_audio_end_ms = t + 20
                continue
            quiet_from = watch.last_audio_end_ms if watch.last_audio_end_ms is not None else watch.onset_ms
            if t + 20 - quiet_from >= SILENCE_CONFIRM_MS:
                self._watching.remove(watch)
                self._record(watch, stop_latency_ms=max(0, quiet_from - watch.onset_ms), t=t)
            elif t - watch.onset_ms > _max_stop(watch.spec) + WATCH_EXTRA_MS:
                self._watching.remove(watch)
                self._record(watch, stop_latency_ms=None, t=t)

    def finish(self, t: int) -> None:
        """Close every open measurement at session end (the agent never stopped)."""
        for watch in self._watching:
            self._record(watch, stop_latency_ms=None, t=t)
        self._watching.clear()
        self._waiting.clear()

    def _record(self, watch: _Watch, *, stop_latency_ms: int | None, t: int) -> None:
        action = watch.plan.floor_action
        max_stop = _max_stop(watch.spec)
        yielded = stop_latency_ms is not None and stop_latency_ms <= max_stop
        self._log.emit(
            EventType.DUPLEX_EVENT,
            "user",
            t,
            {
                "event_id": watch.plan.event_id or (watch.spec.id if watch.spec else None),
                "type": watch.spec.type if watch.spec else action,
                "delivery": action,
                "plan_id": watch.plan.id,
                "onset_ms": watch.onset_ms,
                "expected_floor_action": "YIELD" if action in YIELD_ACTIONS else "CONTINUE",
                "agent_speaking_at_onset": watch.agent_speaking_at_onset,
                "stop_latency_ms": stop_latency_ms,
                "max_stop_latency_ms": max_stop,
                "agent_yielded": yielded,
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
