"""The user's deterministic dialogue state machine (published §4.3 semantics).

The engine emits wording-free plans; wording is chosen later from the frozen realization bank.
Facts a plan is not yet allowed to reveal are stripped and recorded as leakage violations, so a
badly authored flow can never make the user oracular.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.tasks.models import Action, FloorAction, FlowSpec, FlowState, Transition

from .observation import Observation
from .trigger_matching import trigger_matches
from .user_state_manager import UserStateManager

__all__ = ["DRAIN_LIMIT", "Observation", "UserFlowEngine", "UserPlan"]

DRAIN_LIMIT = 24
_BARGE_FLOOR_ACTIONS = frozenset({FloorAction.BARGE_IN, FloorAction.URGENT_OVERRIDE})
_EVENT_TOKEN = "evt:"
_APPROVAL_TOKEN = "appr:"


@dataclass
class UserPlan:
    """What the user will do next, without wording (the realization bank supplies the words)."""

    id: str
    speech_act: str
    fact_ids: list[str]
    floor_action: str
    urgency: str
    event_id: str | None
    style: dict[str, Any]
    state_id: str


@dataclass
class _EngineMemory:
    on_enter_emitted: set[str] = field(default_factory=set)
    consumed_tokens: set[str] = field(default_factory=set)


class UserFlowEngine:
    """Steps the flow on observations of the agent and emits :class:`UserPlan` objects."""

    def __init__(self, flow: FlowSpec, users: UserStateManager) -> None:
        _check_flow(flow)
        self._flow = flow
        self._users = users
        self._memory = _EngineMemory()
        self.current: str = flow.start
        self.observed_act_keys: set[str] = users.context.observed_acts
        self.leakage_violations: list[str] = []
        self.plan_log: list[UserPlan] = []
        users.context.entered_states.add(flow.start)

    @property
    def done(self) -> bool:
        return self._state(self.current).terminal

    def step(self, obs: Observation) -> UserPlan | None:
        """Advance by at most one plan (on-enter action or first matching transition)."""
        ctx = self._users.context
        ctx.observed_acts.update(obs.new_act_keys)
        ctx.fired_events.update(obs.fired_events)
        self._rearm_approvals(obs.approval_requests)

        state = self._state(self.current)
        if state.on_enter is not None and self.current not in self._memory.on_enter_emitted:
            self._memory.on_enter_emitted.add(self.current)
            return self._plan(state.on_enter, self.current)
        self._memory.on_enter_emitted.add(self.current)

        transition = self._first_match(state, obs)
        if transition is None:
            return None
        self.current = transition.next
        ctx.entered_states.add(transition.next)
        if transition.do is not None:
            return self._plan(transition.do, transition.next)
        entered = self._state(transition.next)
        if entered.on_enter is not None:
            self._memory.on_enter_emitted.add(transition.next)
            return self._plan(entered.on_enter, transition.next)
        return None

    def drain(self, obs: Observation, limit: int = DRAIN_LIMIT) -> list[UserPlan]:
        """Step repeatedly on one observation: stop at the first no-plan or after a state change."""
        plans: list[UserPlan] = []
        for _ in range(limit):
            before = self.current
            plan = self.step(obs)
            if plan is None:
                break
            plans.append(plan)
            if self.current != before:
                break
        return plans

    @property
    def agent_act_triggers(self) -> set[str]:
        """Every ``agent_act`` a transition of the flow waits for."""
        return {
            t.when.agent_act for state in self._flow.states.values() for t in state.transitions if t.when.agent_act
        }

    def barge_arming_events(self) -> set[str]:
        """Event ids whose flow transition answers with a barge-in or urgent override (§4.7)."""
        return {
            t.when.external_event
            for state in self._flow.states.values()
            for t in state.transitions
            if t.when.external_event is not None
            and t.do is not None
            and t.do.floor_action in _BARGE_FLOOR_ACTIONS
        }

    def _rearm_approvals(self, approval_requests: list[str]) -> None:
        # Approval tokens re-arm once the request disappears; event tokens never re-arm.
        self._memory.consumed_tokens = {
            token
            for token in self._memory.consumed_tokens
            if not token.startswith(_APPROVAL_TOKEN) or token[len(_APPROVAL_TOKEN) :] in approval_requests
        }

    def _first_match(self, state: FlowState, obs: Observation) -> Transition | None:
        for transition in state.transitions:
            if not trigger_matches(transition.when, obs, revealed=self._users.revealed):
                continue
            token = _one_shot_token(transition)
            if token is not None:
                if token in self._memory.consumed_tokens:
                    continue
                self._memory.consumed_tokens.add(token)
            return transition
        return None

    def _plan(self, action: Action, state_id: str) -> UserPlan:
        plan_id = action.plan_id or f"{state_id}:{action.act.value}"
        allowed: list[str] = []
        for fact_id in action.facts:
            if self._users.can_reveal(fact_id):
                allowed.append(fact_id)
            else:
                self.leakage_violations.append(f"{plan_id} attempted to reveal ineligible fact '{fact_id}'")
        self._users.mark_revealed(allowed)
        plan = UserPlan(
            id=plan_id,
            speech_act=action.act.value,
            fact_ids=allowed,
            floor_action=action.floor_action.value,
            urgency=action.urgency,
            event_id=action.event_id,
            style=dict(action.style),
            state_id=state_id,
        )
        self.plan_log.append(plan)
        return plan

    def _state(self, state_id: str) -> FlowState:
        return self._flow.states[state_id]


def _one_shot_token(transition: Transition) -> str | None:
    when = transition.when
    if when.external_event is not None:
        return _EVENT_TOKEN + when.external_event
    if when.approval_request is not None:
        return _APPROVAL_TOKEN + when.approval_request
    return None


def _check_flow(flow: FlowSpec) -> None:
    if flow.start not in flow.states:
        raise ValueError(f"flow start state '{flow.start}' is not among states {sorted(flow.states)}")
    for state_id, state in flow.states.items():
        for index, transition in enumerate(state.transitions):
            if transition.next not in flow.states:
                raise ValueError(
                    f"flow state '{state_id}' transition {index}: next '{transition.next}' is not a state"
                )
