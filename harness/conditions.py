"""The benchmark's conditions, each one registration: what the agent gets, which runner runs it
(the text or the voice session), how the simulated user takes turns, and whether the user's audio
is degraded.

The CLI, the campaign, the voice session (its turn policy) and the user simulator ask this registry
instead of comparing condition names, so a condition's name appears in one place. Installed packages
add conditions under the ``apex_voice.conditions`` entry-point group, each entry point naming a
:class:`ConditionDef` (``docs/plugins.md``); such a condition runs wherever the package is
installed — in this process and on a Ray node alike.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from importlib.metadata import entry_points
from typing import Literal

__all__ = [
    "BUILTIN_CONDITIONS",
    "ENTRY_POINT_GROUP",
    "TURN_TAKING",
    "ConditionDef",
    "TurnTaking",
    "UnknownConditionError",
    "conditions",
    "get_condition",
]

#: Installed packages register conditions here: ``name = "package.module:CONDITION"``.
ENTRY_POINT_GROUP = "apex_voice.conditions"

#: How the simulated user of a voice session takes the floor (``harness.session.turn_policy`` has
#: one policy each): ``full_duplex`` speaks its barge-ins and back-channels over the agent and takes
#: its turn once the agent finished; ``turn_based`` waits for the agent, speaks nothing over it, and
#: drops back-channels.
TurnTaking = Literal["full_duplex", "turn_based"]
TURN_TAKING: tuple[TurnTaking, ...] = ("full_duplex", "turn_based")
_SESSIONS = ("text", "voice")


class UnknownConditionError(ValueError):
    """No condition has this name (a usage error: the message lists the known ones)."""


@dataclass(frozen=True)
class ConditionDef:
    name: str
    #: What the agent gets, in one line (``--help``, tables).
    title: str
    #: What comparing it with its neighbour measures.
    isolates: str
    #: The runner kind. ``text``: the C0 text session (a text agent, strictly alternating turns);
    #: ``voice``: the duplex session (a realtime agent, 20 ms frames both ways).
    session: Literal["text", "voice"]
    #: The user channel goes through an acoustic degradation chain (``run --acoustics``).
    acoustics: bool = False
    #: A voice condition's turn policy (:data:`TurnTaking`; default ``full_duplex``). A text
    #: session alternates strictly by construction and takes none.
    turn_taking: TurnTaking | None = None

    def __post_init__(self) -> None:
        where = f"condition {self.name!r}"
        if self.session not in _SESSIONS:
            raise ValueError(f"{where}: session must be text or voice, got {self.session!r}")
        if self.session == "text":
            if self.turn_taking is not None or self.acoustics:
                raise ValueError(f"{where}: a text condition takes no turn_taking and no acoustics "
                                 f"(got turn_taking={self.turn_taking!r}, acoustics={self.acoustics!r})")
            return
        if self.turn_taking is None:
            object.__setattr__(self, "turn_taking", "full_duplex")
        elif self.turn_taking not in TURN_TAKING:
            raise ValueError(f"{where}: turn_taking must be one of {', '.join(TURN_TAKING)}, got {self.turn_taking!r}")


BUILTIN_CONDITIONS: dict[str, ConditionDef] = {
    condition.name: condition
    for condition in (
        ConditionDef("C0", "text control: the user's words as text, strictly alternating turns",
                     "the task itself, without speech", session="text"),
        ConditionDef("C1", "turn-based voice: the user waits for the agent to finish, back-channels dropped",
                     "the cost of speech", session="voice", turn_taking="turn_based"),
        ConditionDef("C2", "full duplex, clean audio both ways", "the cost of full duplex", session="voice",
                     turn_taking="full_duplex"),
        ConditionDef("C3", "full duplex through realistic acoustics (--acoustics)", "the cost of the audio channel",
                     session="voice", acoustics=True, turn_taking="full_duplex"),
    )
}


@cache
def conditions() -> dict[str, ConditionDef]:
    """Every condition by name: the four of the published format, then the installed ones.

    Raises:
        ValueError: an installed condition reuses a built-in's name or is not a :class:`ConditionDef`.
    """
    found = dict(BUILTIN_CONDITIONS)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        origin = f"entry point {point.name!r} ({point.value}) of group {ENTRY_POINT_GROUP}"
        if point.name in BUILTIN_CONDITIONS:
            raise ValueError(f"{origin}: {point.name!r} is a built-in condition and cannot be replaced")
        target = point.load()
        if not isinstance(target, ConditionDef):
            raise ValueError(f"{origin}: {target!r} is not a ConditionDef")
        found[point.name] = replace(target, name=point.name)
    return found


def get_condition(name: str) -> ConditionDef:
    """The condition called ``name`` (``c0`` finds ``C0``: the case of a name never tells two apart
    unless two installed conditions differ only by it); unknown names are errors that list the known ones."""
    known = conditions()
    if name in known:
        return known[name]
    folded = [key for key in known if key.casefold() == name.casefold()]
    if len(folded) == 1:
        return known[folded[0]]
    raise UnknownConditionError(f"unknown condition {name!r}; known conditions: {', '.join(known)}")
