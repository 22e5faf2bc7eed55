"""What a campaign measures: one typed, frozen :class:`MeasurementIdentity`.

Everything that changes what a cell measures is one field here — the model and the provider model
it requests, the endpoint it is reached at, the condition, acoustics and seed, how the simulated
user speaks, the tool mode and latency, the act observer and the judge, the turn bound, the task
set (each task pinned by version and dataset checksums) with its repetitions, and the harness
version. The cell runner builds it (``SandboxedCellRunner.identity``); the campaign completes it
with the plan and stores it whole in ``campaign.json`` and every ``result.json``; a resume compares
it with ``==`` (:func:`harness.campaign.resume.check_identity`) and ``results`` keeps campaigns
apart by it (:mod:`.identity`). Backend, parallelism and executor are not part of it: they change
where a cell runs, not what it measures.

It lives below the campaign, beside the other files the campaign writes, so the reader never
imports the writer. Files written before it was recorded carry some of its fields under their
old keys: :func:`recorded_fields` reads those, and a field they lack is unknown, never equal to a
known value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness import __version__
from harness.grading.judge_prompt import JUDGE_VERSION

if TYPE_CHECKING:
    from harness.tasks.checksums import ChecksumManifest

__all__ = ["PLAN_FIELDS", "Difference", "MeasurementIdentity", "TaskPin", "public_endpoint", "recorded_fields"]

#: The fields that say how much is measured (the task set and its repetitions), not how: a start
#: may plan fewer cells than its campaign; planning more is growing it (``run --extend``).
PLAN_FIELDS = ("tasks", "repeats")


class TaskPin(BaseModel):
    """One planned task as measured: its ``task.yaml`` version and its files' dataset checksums."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str | None = None
    #: A digest of the dataset's ``SHA256SUMS`` lines for the task's files (``None``: the dataset
    #: publishes no checksums, so a changed file cannot be told apart).
    checksum: str | None = None

    @classmethod
    def of(cls, task_dir: Path, version: str | None, checksums: ChecksumManifest | None) -> TaskPin:
        if checksums is None:
            return cls(version=version)
        lines = "".join(f"{digest}  {rel}\n" for rel, digest in sorted(checksums.digests_under(task_dir).items()))
        return cls(version=version, checksum=hashlib.sha256(lines.encode()).hexdigest()[:16] if lines else None)

    def __str__(self) -> str:
        return f"{self.version or '?'}#{self.checksum}" if self.checksum else (self.version or "?")


@dataclass(frozen=True)
class Difference:
    """One field whose recorded value is not the requested one (``None``: none, e.g. no judge)."""

    field: str
    recorded: object
    requested: object

    def __str__(self) -> str:
        def shown(value: object) -> str:
            return "none" if value is None else repr(str(value) if isinstance(value, TaskPin) else value)

        return f"{self.field}: {shown(self.recorded)} → {shown(self.requested)}"


class MeasurementIdentity(BaseModel):
    """Everything that changes what a cell measures; two cells compare only when these are equal."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: The registry key of the agent under test.
    model: str
    #: The model id requested from the provider (``None``: the agent has none, e.g. the oracle).
    provider_model: str | None = None
    #: Where the model is served (``None``: in the harness); credentials in the URL are never kept.
    endpoint: str | None = None
    condition: str = "C2"
    #: The C3 chain: a preset's name, or every processor with every parameter; ``none`` elsewhere.
    acoustics: str = "none"
    #: Seeds the simulated user and the acoustics of every session.
    seed: int = 1
    user_audio: str = "auto"
    tool_mode: str = "bridge"
    tool_latency_ms: int = Field(default=0, ge=0)
    #: How the simulated user hears the agent's acts: ``deterministic`` (the task's patterns) or ``llm``.
    observer: str = "deterministic"
    observer_model: str | None = None
    #: The semantic judge's model (``None``: no judge, semantic fields graded deterministically).
    judge_model: str | None = None
    judge_version: str = JUDGE_VERSION
    max_turns: int = Field(default=44, ge=1)
    #: Every planned task, by id.
    tasks: dict[str, TaskPin] = Field(default_factory=dict)
    repeats: int = Field(default=1, ge=1)
    harness_version: str = __version__

    def __hash__(self) -> int:
        return hash(self.model_dump_json())

    @classmethod
    def read(cls, data: object) -> MeasurementIdentity | None:
        """The identity a file stored (its ``identity`` key), ``None`` when absent or not one."""
        if not isinstance(data, Mapping) or "identity" not in data:
            return None
        try:
            return cls.model_validate(data["identity"])
        except ValidationError:
            return None

    def differences(self, requested: MeasurementIdentity) -> list[Difference]:
        """Every field of ``requested`` that differs from this (recorded) identity, in field order.

        The plan is not among them: tasks compare by their pins, for the tasks both plan; which
        tasks and how many repetitions are planned is :meth:`grows` (a start may plan fewer cells
        than its campaign, and more only on purpose).
        """
        found = []
        for name in type(self).model_fields:
            if name == "tasks":
                found += [Difference(f"tasks[{task}]", pin, requested.tasks[task])
                          for task, pin in sorted(self.tasks.items())
                          if task in requested.tasks and requested.tasks[task] != pin]
            elif name not in PLAN_FIELDS and getattr(self, name) != getattr(requested, name):
                found.append(Difference(name, getattr(self, name), getattr(requested, name)))
        return found

    def grows(self, requested: MeasurementIdentity) -> list[Difference]:
        """What ``requested`` plans beyond this identity: new tasks, more repetitions."""
        found = []
        new = sorted(set(requested.tasks) - set(self.tasks))
        if new:
            named = ", ".join(new[:3]) + (f" and {len(new) - 3} more" if len(new) > 3 else "")
            found.append(Difference("tasks", f"{len(self.tasks)} tasks",
                                    f"{len(set(self.tasks) | set(new))} tasks (new: {named})"))
        if requested.repeats > self.repeats:
            found.append(Difference("repeats", self.repeats, requested.repeats))
        return found

    def extended_by(self, requested: MeasurementIdentity) -> MeasurementIdentity:
        """``requested`` over the union of both plans: the campaign after a start that grew it."""
        return requested.model_copy(update={"tasks": dict(sorted({**self.tasks, **requested.tasks}.items())),
                                            "repeats": max(self.repeats, requested.repeats)})


def public_endpoint(url: str | None) -> str | None:
    """``url`` without what must not be written to disk: a user and password, key-like query values."""
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    query = urlencode([(k, "***" if any(s in k.lower() for s in ("key", "token", "secret", "sig", "auth")) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


#: Keys of files written before the identity was recorded whole, and the field each one holds.
_OLD_KEYS = {"model": "model", "condition": "condition", "acoustics": "acoustics", "seed": "seed",
             "user_audio": "user_audio", "tool_mode": "tool_mode", "max_turns": "max_turns", "repeats": "repeats",
             "apex_voice_version": "harness_version", "judge_version": "judge_version"}


def recorded_fields(manifest: Mapping[str, Any]) -> dict[str, object]:
    """The identity fields a ``campaign.json`` records, by field name (a field it lacks is absent).

    A whole identity gives every field. An older manifest gives those it kept under their old keys,
    each read on its own (one of an odd shape is left out, not the others); ``tasks`` then maps each
    task to a pin holding only its version. Its ``condition`` counts only beside the acoustics or
    tool mode: harnesses before those were recorded wrote ``C2`` whatever the condition.
    """
    whole = MeasurementIdentity.read(manifest)
    if whole is not None:
        return {name: getattr(whole, name) for name in MeasurementIdentity.model_fields}
    found: dict[str, object] = {}
    for key, name in _OLD_KEYS.items():
        value = manifest.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            found[name] = value
    if manifest.get("acoustics") is None and manifest.get("tool_mode") is None:
        found.pop("condition", None)
    task_ids, versions = manifest.get("task_ids"), manifest.get("task_versions")
    versions = versions if isinstance(versions, dict) else {}
    if isinstance(task_ids, list) and task_ids:
        found["tasks"] = {str(task): TaskPin(version=str(versions[task]) if task in versions else None)
                          for task in sorted(map(str, task_ids))}
    return found
