"""Read campaign directories — ours and the published runs' — into one in-memory shape.

Both layouts are ``<campaign>/<task_id>/rep<k>/result.json`` with the session directory
``<rep>/<run_id>/`` beside it (``events.jsonl``, ``workspace/final_workspace.json``, and for our
runs ``grading_inputs.json``). ``campaign.json`` names the model; a published campaign directory
without one is named by its directory (the registry key). A ``result.json`` that cannot be used is
reported in ``problems`` and skipped, never a crash; a run whose grade is pending is kept but
counts as not yet graded.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.results.campaign_files import MANIFEST_FILE
from harness.results.result_record import RESULT_FILE, ResultFileError, ResultRecord

__all__ = ["PUBLISHED_ORDER", "Campaign", "Run", "find_campaigns", "is_campaign", "load_campaign"]

#: ``--runs-root`` order of the published analysis (registry order), then anything else sorted.
PUBLISHED_ORDER = ("gpt-realtime", "grok-voice", "gemini-live", "gpt-live-1", "step-audio3")

_REP_DIR = re.compile(r"rep(\d+)$")


@dataclass
class Run:
    """One persisted run of a campaign cell."""

    task_id: str
    rep: int
    record: ResultRecord
    rep_dir: Path

    @property
    def pts(self) -> int | None:
        """0/1 as published (``int(bool(pts))``), ``None`` while judge verdicts are pending."""
        return None if self.record.pending else int(bool(self.record.pts))

    @property
    def session_dir(self) -> Path | None:
        """``rep_dir/<run_id>`` when it holds a final workspace, else the newest sub-directory that does."""
        if self.record.run_id and (self.rep_dir / self.record.run_id / "workspace" / "final_workspace.json").exists():
            return self.rep_dir / self.record.run_id
        candidates = [d for d in self.rep_dir.iterdir() if (d / "workspace" / "final_workspace.json").exists()]
        return max(candidates, key=lambda d: d.stat().st_mtime) if candidates else None


@dataclass
class Campaign:
    """One model's runs: ``runs[task_id][rep]``."""

    key: str
    display_name: str
    path: Path
    runs: dict[str, dict[int, Run]] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: Cells whose ``result.json`` exists but cannot be used, with the problem (they are unscored).
    unusable: dict[tuple[str, int], str] = field(default_factory=dict)

    @property
    def condition(self) -> str:
        """The condition its records name (``C2+C3`` if they differ), else ``campaign.json``'s, else C2.

        Records first: manifests written before the condition was recorded right said ``C2`` for
        every condition, while each ``result.json`` names its own."""
        recorded = sorted({run.record.condition for run in self.all_runs() if run.record.condition})
        if recorded:
            return "+".join(recorded)
        stated = self.manifest.get("condition")
        return stated if isinstance(stated, str) and stated else "C2"

    def all_runs(self) -> list[Run]:
        return [run for reps in self.runs.values() for run in reps.values()]


def _manifest(path: Path) -> dict[str, Any]:
    try:
        data = json.loads((path / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _registry_name(model: str) -> str:
    """The built-in model's display name (a published directory is named by its registry key), else the key."""
    from harness.agents.registry import MODELS

    spec = MODELS.get(model)
    return spec.display_name if spec is not None else model


def load_campaign(path: Path, key: str | None = None) -> Campaign:
    """Every usable run under ``path`` (``*/rep*/result.json``, sorted)."""
    path = Path(path)
    manifest = _manifest(path)
    model = str(manifest.get("model") or path.name)
    key = key or model
    # A campaign renamed with --run KEY=DIR is shown by that name, not the model's display name.
    display = str(manifest.get("display_name") or _registry_name(model)) if key == model else key
    campaign = Campaign(key=key, display_name=display, path=path, manifest=manifest)
    for result in sorted(path.glob(f"*/rep*/{RESULT_FILE}")):
        rep_dir = result.parent
        match = _REP_DIR.match(rep_dir.name)
        if match is None:
            continue
        task_id, rep = rep_dir.parent.name, int(match.group(1))
        try:
            record = ResultRecord.load(rep_dir)
        except ResultFileError as exc:
            campaign.problems.append(str(exc))
            campaign.unusable[(task_id, rep)] = exc.problem
            continue
        if record is None:
            continue
        if (record.task_id, record.rep) != (task_id, rep):
            campaign.problems.append(f"{result}: names {record.task_id} rep{record.rep}; skipped")
            campaign.unusable[(task_id, rep)] = f"names {record.task_id} rep{record.rep}"
            continue
        campaign.runs.setdefault(task_id, {})[rep] = Run(task_id, rep, record, rep_dir)
    return campaign


def is_campaign(path: Path) -> bool:
    """A campaign directory: its ``campaign.json``, or results as ``<task>/rep<k>/result.json``."""
    return (path / MANIFEST_FILE).is_file() or any(path.glob(f"*/rep*/{RESULT_FILE}"))


def find_campaigns(runs_root: Path) -> list[Path]:
    """Campaign directories directly below ``runs_root``: published keys first (in their order), then sorted."""
    found = {d.name: d for d in sorted(Path(runs_root).iterdir()) if d.is_dir() and is_campaign(d)}
    ordered = [found.pop(key) for key in PUBLISHED_ORDER if key in found]
    return ordered + list(found.values())
