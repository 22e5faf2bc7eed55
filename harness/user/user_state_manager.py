"""The simulated user's hidden facts and the rules deciding which of them may be spoken.

The reveal rules are what keep the user non-oracular: a fact is only expressed after the agent
asked for it, an event made it relevant, or the flow reached a state that licenses it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.tasks.models import RevealRule, UserFact, UserState

__all__ = ["RevealContext", "UserStateManager", "event_fact_id"]


def event_fact_id(fact_id: str, event_id: str) -> str:
    """Id of the fact an event's ``fact_updates`` entry creates (published convention)."""
    return f"{fact_id}__v_evt_{event_id}"


@dataclass
class RevealContext:
    """Everything that has happened so far that can license a reveal (all cumulative)."""

    observed_acts: set[str] = field(default_factory=set)
    fired_events: set[str] = field(default_factory=set)
    entered_states: set[str] = field(default_factory=set)


class UserStateManager:
    """Hidden user facts, what has been revealed, and which facts are superseded by corrections."""

    def __init__(self, state: UserState, *, context: RevealContext | None = None) -> None:
        self._facts: dict[str, UserFact] = {}
        self._newer: dict[str, str] = {}
        self.superseded: set[str] = set()
        self.revealed: set[str] = set()
        self.context = context if context is not None else RevealContext()
        for fact in state.facts:
            self._add(fact)

    @property
    def fact_ids(self) -> list[str]:
        return list(self._facts)

    def fact(self, fact_id: str) -> UserFact:
        try:
            return self._facts[fact_id]
        except KeyError:
            raise KeyError(f"user has no fact '{fact_id}' (known: {sorted(self._facts)})") from None

    def can_reveal(self, fact_id: str) -> bool:
        """Whether the fact exists and one of its reveal rules is satisfied by the context."""
        fact = self._facts.get(fact_id)
        if fact is None:
            return False
        rule, ctx = fact.reveal, self.context
        return (
            rule.may_volunteer
            or _meets(rule.agent_acts, ctx.observed_acts)
            or _meets(rule.events, ctx.fired_events)
            or _meets(rule.on_state, ctx.entered_states)
        )

    def mark_revealed(self, fact_ids: Iterable[str]) -> None:
        self.revealed.update(fact_ids)

    def add_event_fact(self, fact_id: str, event_id: str, value: Any) -> str:
        """Record an event's correction of ``fact_id`` as a new fact superseding it; returns its id."""
        if fact_id not in self._facts:
            raise ValueError(
                f"event '{event_id}' updates fact '{fact_id}', which the user state does not define"
            )
        new_id = event_fact_id(fact_id, event_id)
        self._add(UserFact(id=new_id, value=value, supersedes=fact_id, reveal=RevealRule(events=[event_id])))
        return new_id

    def current_value_for(self, fact_id: str) -> Any:
        """The value of the newest fact in the correction chain starting at ``fact_id``."""
        current = self.fact(fact_id).id
        seen = {current}
        while current in self._newer:
            current = self._newer[current]
            if current in seen:
                raise ValueError(f"fact '{fact_id}' has a cyclic 'supersedes' chain through '{current}'")
            seen.add(current)
        return self._facts[current].value

    def _add(self, fact: UserFact) -> None:
        self._facts[fact.id] = fact
        if fact.supersedes is not None:
            self.superseded.add(fact.supersedes)
            self._newer[fact.supersedes] = fact.id


def _meets(required: Iterable[str], happened: set[str]) -> bool:
    return any(item in happened for item in required)
