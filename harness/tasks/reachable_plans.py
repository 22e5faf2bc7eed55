"""The user plans a flow can emit, with where each one is authored.

Plan id = ``action.plan_id`` or ``"<state>:<ACT>"`` where the state is the ``on_enter`` state or the
transition's ``next`` (reference §4.3). Only states reachable from ``start`` count.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .models import Action, FlowSpec

__all__ = ["PlannedAction", "reachable_plans"]


@dataclass(frozen=True)
class PlannedAction:
    plan_id: str
    action: Action
    #: Field path of the action in the flow file, e.g. ``states.S_CC.transitions[0].do``.
    field: str


def reachable_plans(flow: FlowSpec) -> list[PlannedAction]:
    """Every action of a reachable state (breadth-first from ``start``), in discovery order."""
    plans: list[PlannedAction] = []
    seen = {flow.start}
    queue = deque([flow.start])
    while queue:
        name = queue.popleft()
        state = flow.states.get(name)
        if state is None:
            continue
        if state.on_enter is not None:
            plans.append(_planned(state.on_enter, name, f"states.{name}.on_enter"))
        for index, transition in enumerate(state.transitions):
            if transition.do is not None:
                plans.append(_planned(transition.do, transition.next, f"states.{name}.transitions[{index}].do"))
            if transition.next not in seen:
                seen.add(transition.next)
                queue.append(transition.next)
    return plans


def _planned(action: Action, state: str, field: str) -> PlannedAction:
    return PlannedAction(action.plan_id or f"{state}:{action.act.value}", action, field)
