"""Keeping apart campaigns that measured different things, and saying how the compared ones differ.

Two directories may share a model key (``runs/oracle`` and ``cond_C3`` both ran ``oracle``); keyed
by the model alone, one silently replaced the other. What a campaign measured is its
:class:`~.measurement_identity.MeasurementIdentity`, read from ``campaign.json`` — whole where it is
stored, field by field from older manifests (the published campaigns have none): a field not
recorded is unknown, and unknown never equals a known value. Two directories are never merged
whatever they record: the identity only names them apart, and where it cannot, their directories do.

Campaigns of different models compared side by side should differ only in the model: every other
field that differs is said in the header (:func:`identity_note`), and so are task sets and
repetition counts that differ from the ``k`` the figures are computed at (:func:`plan_notes`) — a
campaign's repetitions beyond ``k`` are not counted, which must not go unsaid.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .measurement_identity import MeasurementIdentity, TaskPin, recorded_fields
from .run_tree import Campaign

__all__ = ["IDENTITY_FIELDS", "CampaignIdentity", "identity_note", "keep_apart", "plan_notes", "repetitions"]

#: Compared in this order; the first ones that differ name the campaigns.
IDENTITY_FIELDS = tuple(MeasurementIdentity.model_fields)
#: Fields that make the model what it is: expected to differ between the models compared.
_MODEL_FIELDS = ("model", "provider_model", "endpoint")


@dataclass(frozen=True)
class CampaignIdentity:
    """A campaign's identity fields as they compare (``None``: not recorded, or in a shape not understood;
    ``"none"``: recorded as none, e.g. no judge).

    The condition comes from the records when they have one: manifests written before the condition
    was recorded right said ``C2`` for every condition. ``tasks`` compares as the sorted pins.
    """

    values: dict[str, object]

    @classmethod
    def of(cls, campaign: Campaign) -> CampaignIdentity:
        recorded = recorded_fields(campaign.manifest)
        values: dict[str, object] = {name: "none" if name in recorded and recorded[name] is None
                                     else _comparable(recorded.get(name)) for name in IDENTITY_FIELDS}
        if campaign.all_runs() or values["condition"] is not None:
            values["condition"] = campaign.condition
        return cls(values)

    def field(self, name: str) -> object:
        return self.values.get(name)

    def value(self, name: str) -> str:
        """A field as it names a campaign; ``tasks`` is the task set's size."""
        found = self.field(name)
        if found is None:
            return "unknown"
        if name == "tasks" and isinstance(found, tuple):
            return str(len(found))
        return str(found)


def _comparable(value: object) -> object:
    """A recorded value as it compares: scalars as they are, the task pins as a sorted tuple."""
    if isinstance(value, dict):
        return tuple(sorted((str(task), str(pin) if isinstance(pin, TaskPin) else "?") for task, pin in value.items()))
    return value if isinstance(value, str | int | float) and not isinstance(value, bool) else None


def _differs(identities: list[CampaignIdentity], name: str) -> bool:
    """Known values that differ, or known beside unknown; a field nobody recorded tells nothing."""
    values = [identity.field(name) for identity in identities]
    if all(value is None for value in values):
        return False
    return None in values or len(set(values)) > 1


def _suffix(identity: CampaignIdentity, differing: list[str]) -> str:
    """``C3,acoustics=moderate``: the condition by its name alone (C0–C3 say what they are), the rest named."""
    return ",".join(identity.value(name) if name == "condition" else f"{name}={identity.value(name)}"
                    for name in differing)


def _naming(identities: list[CampaignIdentity], differing: list[str]) -> list[str]:
    """The fewest leading differing fields that tell the campaigns apart (all of them if none do):
    ``oracle[C3]`` rather than every field that differs; the note lists them all."""
    for count in range(1, len(differing) + 1):
        if len({_suffix(identity, differing[:count]) for identity in identities}) == len(identities):
            return differing[:count]
    return differing


def keep_apart(campaigns: list[Campaign]) -> tuple[list[Campaign], list[str]]:
    """Campaigns sharing a key renamed ``key[what differs]``; the same directory twice counted once.

    Returns the campaigns and one note per renamed group, saying what kept them apart.
    """
    groups: dict[str, list[Campaign]] = {}
    for campaign in campaigns:
        group = groups.setdefault(campaign.key, [])
        if all(c.path.resolve() != campaign.path.resolve() for c in group):
            group.append(campaign)
    notes = []
    for key, group in groups.items():
        if len(group) < 2:
            continue
        identities = [CampaignIdentity.of(c) for c in group]
        differing = [name for name in IDENTITY_FIELDS if _differs(identities, name)]
        names = [_suffix(identity, _naming(identities, differing)) for identity in identities]
        if len(set(names)) < len(names):  # nothing recorded tells them apart: their directories do
            names = [f"{name},dir={c.path.name}" if name else f"dir={c.path.name}" for name, c in zip(names, group, strict=True)]
        for campaign, name in zip(group, names, strict=True):
            campaign.key = f"{key}[{name}]"
            campaign.display_name = f"{campaign.display_name} [{name}]"
        notes.append(f"{len(group)} campaigns of {key} differ ({', '.join(differing) or 'directory'}): kept apart as "
                     f"{', '.join(c.key for c in group)}; they are never merged.")
    return [c for group in groups.values() for c in group], notes


def identity_note(campaigns: list[Campaign], *, beside: Iterable[str] = ()) -> str | None:
    """One line naming every identity field (but the model's own, the plan and ``beside``) in which
    the compared campaigns differ, with each campaign's value; ``None`` when they were measured alike."""
    if len(campaigns) < 2:
        return None
    identities = [CampaignIdentity.of(c) for c in campaigns]
    skipped = {*_MODEL_FIELDS, "tasks", "repeats", *beside}
    differing = [name for name in IDENTITY_FIELDS if name not in skipped and _differs(identities, name)]
    if not differing:
        return None
    parts = [f"{name} ({', '.join(f'{c.key}: {i.value(name)}' for c, i in zip(campaigns, identities, strict=True))})"
             for name in differing]
    return "the campaigns were not measured alike, so their figures do not compare as the model's alone: " \
           + "; ".join(parts) + "."


def repetitions(campaign: Campaign) -> int:
    """The repetitions a campaign planned: ``repeats`` of its ``campaign.json``, else the highest present plus one."""
    stated = campaign.manifest.get("repeats")
    if isinstance(stated, int) and not isinstance(stated, bool) and stated >= 1:
        return stated
    return 1 + max((rep for reps in campaign.runs.values() for rep in reps), default=0)


def plan_notes(campaigns: list[Campaign], k: int | None = None) -> list[str]:
    """What the compared campaigns planned differently: task sets (when ``k`` is ``None``: the
    caller's header does not say it already), and repetitions beside ``k``."""
    notes = []
    if k is None and len(campaigns) > 1 and len({frozenset(c.runs) for c in campaigns}) > 1:
        counts = ", ".join(f"{c.key} {len(c.runs)}" for c in campaigns)
        notes.append(f"the campaigns cover different tasks ({counts}): each figure is over its own campaigns' tasks, "
                     "not the same tasks side by side.")
    if k is not None:
        more = [(c.key, repetitions(c)) for c in campaigns if repetitions(c) > k]
        fewer = [(c.key, repetitions(c)) for c in campaigns if repetitions(c) < k]
        if more:
            named = ", ".join(f"{key} {n}" for key, n in more)
            notes.append(f"k = {k}, but some campaigns ran more repetitions ({named}): only repetitions 0–{k - 1} "
                         "are counted here, the others are left out (--repeats sets k).")
        if fewer:
            named = ", ".join(f"{key} {n}" for key, n in fewer)
            notes.append(f"k = {k}, but some campaigns ran fewer repetitions ({named}): their tasks lack repetitions "
                         "at this k.")
    return notes
