"""The benchmark's conditions, each described once: what the agent gets, which session runs it, and
whether the user's audio is degraded.

The CLI, the campaign and the user simulator ask this registry instead of comparing condition
names, so a condition's name appears in one place. Inside a voice session the condition picks the
session's turn policy (``harness.session``, keyed by the same name); this registry is the outer
description every other part reads. Installed packages add conditions under the
``apex_voice.conditions`` entry-point group, each entry point naming a :class:`ConditionDef`
(``docs/plugins.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from importlib.metadata import entry_points
from typing import Literal

__all__ = [
    "BUILTIN_CONDITIONS",
    "ENTRY_POINT_GROUP",
    "ConditionDef",
    "UnknownConditionError",
    "conditions",
    "get_condition",
]

#: Installed packages register conditions here: ``name = "package.module:CONDITION"``.
ENTRY_POINT_GROUP = "apex_voice.conditions"


class UnknownConditionError(ValueError):
    """No condition has this name (a usage error: the message lists the known ones)."""


@dataclass(frozen=True)
class ConditionDef:
    name: str
    #: What the agent gets, in one line (``--help``, tables).
    title: str
    #: What comparing it with its neighbour measures.
    isolates: str
    #: ``text``: the C0 text session (a text agent, strictly alternating turns); ``voice``: the
    #: duplex session (a realtime agent, 20 ms frames both ways).
    session: Literal["text", "voice"]
    #: The user channel goes through an acoustic degradation chain (``run --acoustics``).
    acoustics: bool = False


BUILTIN_CONDITIONS: dict[str, ConditionDef] = {
    condition.name: condition
    for condition in (
        ConditionDef("C0", "text control: the user's words as text, strictly alternating turns",
                     "the task itself, without speech", session="text"),
        ConditionDef("C1", "turn-based voice: the user waits for the agent to finish, back-channels dropped",
                     "the cost of speech", session="voice"),
        ConditionDef("C2", "full duplex, clean audio both ways", "the cost of full duplex", session="voice"),
        ConditionDef("C3", "full duplex through realistic acoustics (--acoustics)", "the cost of the audio channel",
                     session="voice", acoustics=True),
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
