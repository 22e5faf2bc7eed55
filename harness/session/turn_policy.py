"""When the simulated user takes its turn: a strategy per kind of turn-taking, picked by the condition.

Each frame the session builds one read-only :class:`FrameState` at the frame's end boundary and
asks the condition's policy for a :class:`TurnMove`. A policy also says which duplex events are
spoken over the agent and which of the user's plans make a turn, so no other part of the session
branches on the condition. Which policy a condition gets is part of its one registration
(``ConditionDef.turn_taking`` in :mod:`harness.conditions`, read by :func:`turn_policy`), so an
installed voice condition has its policy wherever it is installed (``docs/architecture.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple, Protocol

from harness.conditions import ConditionDef, TurnTaking, UnknownConditionError, conditions, get_condition
from harness.tasks.models import FlowSpec
from harness.user.flow_engine import UserPlan

from .duplex_delivery import CONTINUE_ACTIONS, overlay_events

__all__ = ["IDLE_TIMEOUT_MS", "TURN_GAP_MS", "FrameState", "FullDuplex", "TurnBased", "TurnLedger", "TurnMove",
           "TurnPolicy", "turn_policy"]

#: The user takes its turn once the agent has finished and been silent this long.
TURN_GAP_MS = 400
#: An agent that says nothing for this long after the user's turn gets a nudge.
IDLE_TIMEOUT_MS = 8000


class TurnMove(Enum):
    WAIT = "wait"
    TURN = "turn"  # the user speaks (its next plans, or a recovery line)
    END = "end"  # the agent ended the call


@dataclass
class TurnLedger:
    """Turn-taking facts the session writes as they happen (and only the session, through these)."""

    #: The agent spoke or called a tool since the user last held the floor.
    agent_acted: bool = False
    #: Since when the agent owes an answer (a tool result reached it, or it called a tool itself).
    answer_owed_since: int | None = None
    #: Media time of the end of the agent's last response that had audio.
    answered_at_ms: int = -1
    last_user_end_ms: int = 0
    agent_hung_up: bool = False

    def user_held_floor(self, t: int) -> None:
        self.last_user_end_ms = t
        self.agent_acted = False

    def owe_answer(self, t: int) -> None:
        self.answer_owed_since = t

    def answered(self, t: int) -> None:
        self.answer_owed_since = None
        self.answered_at_ms = t

    def give_up_waiting(self, t: int) -> None:
        """An answer owed for more than ``IDLE_TIMEOUT_MS`` at ``t`` is no longer awaited."""
        if self.answer_owed_since is not None and t - self.answer_owed_since > IDLE_TIMEOUT_MS:
            self.answer_owed_since = None


class FrameState(NamedTuple):
    """What the turn decision reads, built once at a frame boundary (a tuple: read-only, cheap)."""

    user_busy: bool
    overlays_waiting: bool
    #: Speaking, mid-response, running a tool, or owing the answer to a tool result.
    agent_busy: bool
    agent_hung_up: bool
    agent_acted: bool
    last_agent_audio_ms: int
    last_user_end_ms: int


class TurnPolicy(Protocol):
    """A condition's turn-taking: the move at ``t``, what is spoken over the agent, what makes a turn."""

    #: The user's audio reaches the agent through an acoustics chain (C3).
    degraded_audio: bool

    def decide(self, state: FrameState, t: int) -> TurnMove: ...

    def overlay_events(self, flow: FlowSpec) -> set[str]: ...

    def turn_plans(self, plans: Sequence[UserPlan]) -> list[UserPlan]: ...


class FullDuplex:
    """C2: the user takes a turn when the agent finished or stayed idle too long, and speaks its
    barge-ins and back-channels over the agent's speech (C3: the same, over degraded audio)."""

    def __init__(self, *, degraded_audio: bool = False) -> None:
        self.degraded_audio = degraded_audio

    def decide(self, state: FrameState, t: int) -> TurnMove:
        if state.user_busy or state.overlays_waiting or state.agent_busy:
            return TurnMove.WAIT
        if state.agent_hung_up:
            return TurnMove.END
        if state.agent_acted and t - state.last_agent_audio_ms >= TURN_GAP_MS:
            return TurnMove.TURN
        if not state.agent_acted and t - state.last_user_end_ms >= IDLE_TIMEOUT_MS:
            return TurnMove.TURN
        return TurnMove.WAIT

    def overlay_events(self, flow: FlowSpec) -> set[str]:
        """Events whose reaction is spoken over the agent (barge-ins, back-channels)."""
        return overlay_events(flow)

    def turn_plans(self, plans: Sequence[UserPlan]) -> list[UserPlan]:
        """The plans the user speaks as its turn."""
        return list(plans)


class TurnBased(FullDuplex):
    """C1: strict alternation. Nothing is spoken over the agent; a back-channel is not a turn."""

    def overlay_events(self, flow: FlowSpec) -> set[str]:
        return set()

    def turn_plans(self, plans: Sequence[UserPlan]) -> list[UserPlan]:
        return [p for p in plans if p.floor_action not in CONTINUE_ACTIONS]


#: The policy of each kind of turn-taking a condition may register.
_POLICIES: dict[TurnTaking, type[FullDuplex]] = {"full_duplex": FullDuplex, "turn_based": TurnBased}


def turn_policy(condition: str) -> TurnPolicy:
    """The turn policy of the voice condition called ``condition``, as its registration says
    (C1 turn-based; C2 full duplex; C3 full duplex over degraded audio; an installed one its own).

    Raises:
        ValueError: no voice condition has this name (the message lists the known ones).
    """
    try:
        definition: ConditionDef | None = get_condition(condition)
    except UnknownConditionError:
        definition = None
    if definition is None or definition.turn_taking is None:
        voice = [c.name for c in conditions().values() if c.turn_taking is not None]
        raise ValueError(f"unknown voice condition {condition!r}; expected one of {', '.join(voice)}")
    return _POLICIES[definition.turn_taking](degraded_audio=definition.acoustics)
