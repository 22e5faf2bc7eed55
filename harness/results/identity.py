"""What a campaign measured, and keeping apart campaigns that measured different things.

Two directories may share a model key (``runs/oracle`` and ``cond_C3`` both ran ``oracle``); keyed
by the model alone, one silently replaced the other. The identity is what ``campaign.json``
records — condition, acoustics (and its seed), user audio, tool mode, turn bound, repeats, task
set and versions — read field by field, since manifests of other versions (and the published
campaigns, which have none) record fewer. A field not recorded is unknown, and unknown never
equals a known value. Two directories are never merged whatever they record: the identity only
names them apart, and where it cannot, their directories do.
"""

from __future__ import annotations

from dataclasses import dataclass

from .run_tree import Campaign

__all__ = ["IDENTITY_FIELDS", "CampaignIdentity", "keep_apart"]

#: Compared in this order; the first ones that differ name the campaigns.
IDENTITY_FIELDS = ("condition", "acoustics", "acoustics_seed", "user_audio", "tool_mode", "max_turns", "repeats",
                   "tasks", "task_versions")


@dataclass(frozen=True)
class CampaignIdentity:
    """The identity fields of a campaign (``None``: not recorded, or recorded in a shape not understood).

    Each field is read on its own, so one odd field (a manifest from another version) leaves the
    others known. The condition comes from the records when they have one: manifests written
    before the condition was recorded right said ``C2`` for every condition.
    """

    values: dict[str, object]

    @classmethod
    def of(cls, campaign: Campaign) -> CampaignIdentity:
        manifest = campaign.manifest
        values: dict[str, object] = {name: _scalar(manifest.get(name)) for name in IDENTITY_FIELDS}
        if campaign.all_runs() or values["condition"] is not None:
            values["condition"] = campaign.condition
        task_ids = manifest.get("task_ids")
        values["tasks"] = (tuple(sorted(map(str, task_ids)))
                           if isinstance(task_ids, list) and task_ids else None)
        versions = manifest.get("task_versions")
        values["task_versions"] = (tuple(sorted((str(k), str(v)) for k, v in versions.items()))
                                   if isinstance(versions, dict) and versions else None)
        return cls(values)

    def field(self, name: str) -> object:
        """A field's value (``tasks``: the sorted task set), ``None`` when not recorded."""
        return self.values.get(name)

    def value(self, name: str) -> str:
        """A field as it names a campaign; ``tasks`` is the task set's size."""
        found = self.field(name)
        if found is None:
            return "unknown"
        if name == "tasks" and isinstance(found, tuple):
            return str(len(found))
        if name == "task_versions" and isinstance(found, tuple):
            return ";".join(f"{task}@{version}" for task, version in found) if len(found) <= 2 else f"{len(found)} versions"
        return str(found)


def _scalar(value: object) -> object:
    """A recorded scalar as it compares (``None`` for anything else)."""
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
