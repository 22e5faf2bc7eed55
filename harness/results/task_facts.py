"""What the results tables need from the task packages: taxonomy labels, oracle effort, gold.

Only the slices, correction-uptake and tool-ratio tables need them; without ``--data`` those
tables are left out with a note and everything else is still computed from the run directories.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.tasks.bundle import TaskBundle
from harness.tasks.checksums import ChecksumManifest
from harness.tasks.errors import TaskLoadError
from harness.tasks.index import index_row
from harness.tasks.loader import load_task
from harness.tasks.models import GoldSpec

__all__ = ["TaskFacts", "load_task_facts"]


@dataclass(frozen=True)
class TaskFacts:
    task_id: str
    #: The published ``data/tasks.jsonl`` row (raw taxonomy values).
    row: dict[str, Any]
    gold: GoldSpec
    #: Required gold fields (``"<artifact>.<field>"``) that a correction event asks to repair.
    corrected_fields: frozenset[str]

    @property
    def oracle_tool_calls(self) -> int:
        return int(self.row.get("oracle_tool_calls") or 0)

    @property
    def required_fields(self) -> frozenset[str]:
        return frozenset(self.row.get("required_fields") or ())


def _corrected(bundle: TaskBundle, required: list[str]) -> frozenset[str]:
    """Published §7.8: last dot-segment of every repair path of a ``*CORRECTION*`` event, matched by field name."""
    names = {
        path.split(".")[-1]
        for event in bundle.events.events
        if "CORRECTION" in event.type
        for path in event.expected_repairs
    }
    return frozenset(key for key in required if key.split(".", 1)[1] in names)


def facts_of(bundle: TaskBundle) -> TaskFacts:
    row = index_row(bundle, f"tasks/{bundle.task_dir.name}")
    return TaskFacts(bundle.task_id, row, bundle.gold, _corrected(bundle, row["required_fields"]))


def load_task_facts(task_dirs: list[Path], checksums: ChecksumManifest | None) -> tuple[dict[str, TaskFacts], list[str]]:
    """Facts by task id, and one line per package that failed to load (it is then left out)."""
    facts: dict[str, TaskFacts] = {}
    problems: list[str] = []
    for task_dir in task_dirs:
        try:
            bundle = load_task(task_dir, checksums=checksums)
        except TaskLoadError as exc:
            problems.append(str(exc))
            continue
        facts[bundle.task_id] = facts_of(bundle)
    return facts, problems
