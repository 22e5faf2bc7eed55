"""``result.json``: one per (task, repetition) of a campaign.

The published keys come first and keep their published meaning, so published tooling reads our
runs; the keys after them say *why* a run failed (AFA, failed predicates, per-field verdicts, the
explanation lines) and where it ran (sandbox, adapter), so nobody has to re-grade to find out.
An error row (published runs whose session raised; we leave such cells empty instead) has
``error`` set, ``pts`` 0 and no components.

A run whose grade waits on a judge that did not answer has ``pts`` ``None``, ``pending: true`` and
the waiting fields in ``pending_verdicts``: it is neither a pass nor a fail until ``regrade`` (or a
resumed campaign) fills them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.atomic_write import atomic_write_json
from harness.grading.report import FailedPredicate, FieldRow

from .measurement_identity import MeasurementIdentity

__all__ = ["RESULT_FILE", "ResultFileError", "ResultRecord", "error_text"]

RESULT_FILE = "result.json"


def error_text(exc: BaseException) -> str:
    """``"<Type>: <message>"``, the published error format."""
    return f"{type(exc).__name__}: {exc}"


class ResultFileError(Exception):
    """A ``result.json`` that exists but cannot be used (a directory, unreadable, not a record)."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class ResultRecord(BaseModel):
    """One persisted run (or error row) of a campaign cell."""

    model_config = ConfigDict(extra="ignore")

    # Published keys.
    task_id: str
    rep: int
    model: str
    run_id: str | None = None
    condition: str = "C2"
    #: 0/1, or ``None`` while the grade waits on pending judge verdicts.
    pts: int | None = 0
    components: dict[str, bool] = Field(default_factory=dict)
    turns: int | None = None
    outcome: str | None = None
    duplex: dict[str, Any] | None = None
    latency: dict[str, Any] | None = None
    wall_s: float = 0.0
    error: str | None = None
    provider_model: str | None = None
    transient: bool | None = None
    attempt: int | None = None
    # Ours: why it failed and where it ran.
    task_version: str | None = None
    pending: bool = False
    #: ``"<artifact>.<field>"`` of every field whose judge verdict is still to come.
    pending_verdicts: list[str] = Field(default_factory=list)
    afa: float | None = None
    failed_predicates: list[FailedPredicate] = Field(default_factory=list)
    fields: list[FieldRow] = Field(default_factory=list)
    reason: str | None = None
    sandbox: dict[str, Any] = Field(default_factory=dict)
    adapter: dict[str, Any] = Field(default_factory=dict)
    #: The harness's failed attempts at this cell before the one scored (its sandbox, its judge...).
    infra_errors: list[str] = Field(default_factory=list)
    #: The agent's own error events during the scored session (its provider's, its socket's).
    agent_errors: list[str] = Field(default_factory=list)
    explain: list[str] = Field(default_factory=list)
    # Filled by the runner: how the agent reached the tools, whether it saw the reference policy,
    # what the provider billed, and the measurements of the simulated user's hearing.
    tool_path: str | None = None
    privileged: bool | None = None
    usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    observer: str | None = None
    acoustics: dict[str, Any] | None = None
    #: How the agent under test failed at its boundary, when it did: ``{"kind", "detail", "media_ms"}``
    #: (kinds in :data:`harness.blame.codes.AgentFailureKind`). The run is scored all the same.
    agent_failure: dict[str, Any] | None = None
    #: Where the agent's code ran: ``builtin`` (the harness's own adapters), ``process`` or
    #: ``container`` (an out-of-tree adapter or agent, isolated), ``in-process`` (``--trust-adapter``).
    agent_isolation: str | None = None
    #: Whether the agent's words had audio that played as speech: per-verdict response counts and
    #: heard/unheard characters (``harness/metrics/speech_agreement.py``; ``None`` in C0).
    speech_agreement: dict[str, Any] | None = None
    #: What the cell measured, whole, as the campaign that wrote it recorded it (``None``: written
    #: before it was recorded, or outside a campaign).
    identity: MeasurementIdentity | None = None

    @model_validator(mode="after")
    def _derive_pending(self) -> ResultRecord:
        """Pending verdicts follow from the field rows, so every writer of a record gets them right."""
        if not self.pending_verdicts:
            derived = [row.key for row in self.fields if row.tier == "pending"]
            if derived:
                self.pending_verdicts = derived
        pending = self.error is None and self.pts is None
        if pending != self.pending:
            self.pending = pending
        return self

    @property
    def passed(self) -> bool:
        return self.error is None and self.pts == 1 and not self.pending

    def write(self, rep_dir: Path) -> Path:
        """Write ``<rep_dir>/result.json`` atomically (a reader never sees half a record)."""
        path = Path(rep_dir) / RESULT_FILE
        atomic_write_json(path, self.model_dump(mode="json"), indent=2)
        return path

    @classmethod
    def read(cls, rep_dir: Path) -> ResultRecord | None:
        """The record in ``rep_dir``, or ``None`` when there is none or it does not parse."""
        try:
            return cls.load(rep_dir)
        except ResultFileError:
            return None

    @classmethod
    def load(cls, rep_dir: Path) -> ResultRecord | None:
        """The record in ``rep_dir``; ``None`` when there is none, :class:`ResultFileError` when unusable."""
        path = Path(rep_dir) / RESULT_FILE
        if not path.exists() and not path.is_symlink():
            return None
        if path.is_dir():
            raise ResultFileError(path, "is a directory, not a file")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ResultFileError(path, f"unreadable ({exc.__class__.__name__}: {exc})") from None
        except json.JSONDecodeError as exc:
            raise ResultFileError(path, f"not JSON ({exc})") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise ResultFileError(path, f"not a result record ({where}: {first['msg']})") from None
