"""Duplex events delivered during agent speech, and the measurement of how the agent reacted.

A barge-in (expects the agent to yield) or a back-channel (expects it to continue) is scheduled
when its event fires and spoken at the agent's response onset plus ``start_window_ms[0]``. From the
user's onset on, the response the agent was playing is watched: its stop latency is the time from
the user's onset to the last sample of that response heard on the agent channel — early when the
agent cut itself short, late when it talked on. Nothing here touches the agent's audio.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.events import EventBus, EventType
from harness.tasks.models import EventProgram, EventSpec, FlowSpec
from harness.user.flow_engine import UserPlan

from .channels import AgentResponse

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
    response: AgentResponse


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

    def started(self, plan: UserPlan | None, *, onset_ms: int, playing: AgentResponse | None) -> None:
        """The user's overlapping utterance began; ``playing`` is the agent response it overlaps."""
        if plan is None:
            return
        spec = self._specs.get(plan.event_id or "")
        if playing is None:
            self._record(plan, spec, onset_ms, stop_latency_ms=0, speaking=False, t=onset_ms)
            return
        self._watching.append(_Watch(plan, spec, onset_ms, playing))

    def observe_frame(self, t: int) -> None:
        for watch in list(self._watching):
            end = watch.response.end_ms
            if end is not None:
                latency: int | None = max(0, end - watch.onset_ms)
            elif t - watch.onset_ms > _max_stop(watch.spec) + WATCH_EXTRA_MS:
                latency = None  # still talking long after it should have stopped
            else:
                continue
            self._watching.remove(watch)
            self._record(watch.plan, watch.spec, watch.onset_ms, stop_latency_ms=latency, speaking=True, t=t)

    def finish(self, t: int) -> None:
        """Close every open measurement at session end (the agent never stopped)."""
        for watch in self._watching:
            self._record(watch.plan, watch.spec, watch.onset_ms, stop_latency_ms=None, speaking=True, t=t)
        self._watching.clear()
        self._waiting.clear()

    def _record(
        self, plan: UserPlan, spec: EventSpec | None, onset_ms: int, *, stop_latency_ms: int | None, speaking: bool, t: int
    ) -> None:
        action = plan.floor_action
        max_stop = _max_stop(spec)
        yielded = stop_latency_ms is not None and stop_latency_ms <= max_stop
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
