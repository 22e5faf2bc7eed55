"""``result.json``: one per (task, repetition) of a campaign.

The published keys come first and keep their published meaning, so published tooling reads our
runs; the keys after them say *why* a run failed (AFA, failed predicates, per-field verdicts, the
explanation lines) and where it ran (sandbox, adapter), so nobody has to re-grade to find out.
An error row (the session raised a non-infrastructure error) has ``error`` set, ``pts`` 0 and no
components, as published.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.atomic_write import atomic_write_json
from harness.grading.report import FailedPredicate, FieldRow

__all__ = ["RESULT_FILE", "ResultRecord", "error_text"]

RESULT_FILE = "result.json"


def error_text(exc: BaseException) -> str:
    """``"<Type>: <message>"``, the published error format."""
    return f"{type(exc).__name__}: {exc}"


class ResultRecord(BaseModel):
    """One persisted run (or error row) of a campaign cell."""

    model_config = ConfigDict(extra="ignore")

    # Published keys.
    task_id: str
    rep: int
    model: str
    run_id: str | None = None
    condition: str = "C2"
    pts: int = 0
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
    afa: float | None = None
    failed_predicates: list[FailedPredicate] = Field(default_factory=list)
    fields: list[FieldRow] = Field(default_factory=list)
    reason: str | None = None
    sandbox: dict[str, Any] = Field(default_factory=dict)
    adapter: dict[str, Any] = Field(default_factory=dict)
    infra_errors: list[str] = Field(default_factory=list)
    explain: list[str] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.error is None and self.pts == 1

    @classmethod
    def for_error(
        cls, task_id: str, rep: int, model: str, exc: BaseException, *, attempt: int, wall_s: float
    ) -> ResultRecord:
        """The row persisted when a session raised an error that is not the infrastructure's."""
        return cls(
            task_id=task_id,
            rep=rep,
            model=model,
            error=error_text(exc),
            transient=False,
            attempt=attempt,
            wall_s=round(wall_s, 1),
            explain=[f"error: {error_text(exc)}"],
        )

    def write(self, rep_dir: Path) -> Path:
        """Write ``<rep_dir>/result.json`` atomically (a reader never sees half a record)."""
        path = Path(rep_dir) / RESULT_FILE
        atomic_write_json(path, self.model_dump(mode="json"), indent=2)
        return path

    @classmethod
    def read(cls, rep_dir: Path) -> ResultRecord | None:
        """The record in ``rep_dir``, or ``None`` when there is none or it does not parse."""
        path = Path(rep_dir) / RESULT_FILE
        try:
            return cls.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, ValidationError):
            return None
