"""What a campaign measured, and keeping apart campaigns that measured different things.

Two directories may share a model key (``runs/oracle`` and ``cond_C3`` both ran ``oracle``); keyed
by the model alone, one silently replaced the other. The identity is what ``campaign.json``
records — model, condition, acoustics, user audio, tool mode, repeats and task set. A field a
manifest does not record is unknown, and unknown never equals a known value: such campaigns are
kept apart rather than risk merging two measurements into one row.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, ValidationError

from .run_tree import Campaign

__all__ = ["IDENTITY_FIELDS", "CampaignIdentity", "keep_apart"]

#: Compared in this order; the first ones that differ name the campaigns.
IDENTITY_FIELDS = ("condition", "acoustics", "user_audio", "tool_mode", "repeats", "tasks")


class CampaignIdentity(BaseModel):
    """The identity fields of a ``campaign.json`` (``None``: not recorded)."""

    model_config = ConfigDict(extra="ignore")

    condition: str | None = None
    acoustics: str | None = None
    user_audio: str | None = None
    tool_mode: str | None = None
    repeats: int | None = None
    task_ids: list[str] | None = None

    @classmethod
    def of(cls, campaign: Campaign) -> CampaignIdentity:
        try:
            return cls.model_validate(campaign.manifest)
        except ValidationError:
            return cls()

    def field(self, name: str) -> object:
        """A field's value (``tasks``: the sorted task set), ``None`` when not recorded."""
        if name == "tasks":
            return None if self.task_ids is None else tuple(sorted(self.task_ids))
        return getattr(self, name)

    def value(self, name: str) -> str:
        """A field as it names a campaign; ``tasks`` is the task set's size."""
        found = self.field(name)
        if found is None:
            return "unknown"
        return str(len(found)) if isinstance(found, tuple) else str(found)


def _differs(identities: list[CampaignIdentity], name: str) -> bool:
    """Known values that differ, or known beside unknown; a field nobody recorded tells nothing."""
    values = [identity.field(name) for identity in identities]
    if all(value is None for value in values):
        return False
    return None in values or len(set(values)) > 1


def _suffix(identity: CampaignIdentity, differing: list[str]) -> str:
    return ",".join(f"{name}={identity.value(name)}" for name in differing)


def keep_apart(campaigns: list[Campaign]) -> tuple[list[Campaign], list[str]]:
    """Campaigns sharing a key renamed ``key[what=differs]``; the same directory twice counted once.

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
        names = [_suffix(identity, differing) for identity in identities]
        if len(set(names)) < len(names):  # nothing recorded tells them apart: their directories do
            names = [f"{name},dir={c.path.name}" if name else f"dir={c.path.name}" for name, c in zip(names, group, strict=True)]
        for campaign, name in zip(group, names, strict=True):
            campaign.key = f"{key}[{name}]"
            campaign.display_name = f"{campaign.display_name} [{name}]"
        notes.append(f"{len(group)} campaigns of {key} differ ({', '.join(differing) or 'directory'}): kept apart as "
                     f"{', '.join(c.key for c in group)}; they are never merged.")
    return [c for group in groups.values() for c in group], notes
