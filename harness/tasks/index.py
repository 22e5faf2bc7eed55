"""The dataset index ``data/tasks.jsonl``: one row per task, in the published key order (§1.21)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.atomic_write import atomic_write_text

from .bundle import TaskBundle
from .file_readers import PackageReader

__all__ = ["INDEX_FILE", "index_row", "write_index"]

INDEX_FILE = "data/tasks.jsonl"


def index_row(bundle: TaskBundle, rel_path: str) -> dict[str, Any]:
    """The published index row of one task; ``rel_path`` is ``tasks/<dir>``."""
    task, taxonomy = bundle.task, bundle.taxonomy
    work, interaction = taxonomy.professional_work, taxonomy.interaction
    return {
        "task_id": task.id,
        "version": task.version,
        "title": task.title,
        "profession": task.profession,
        "industry": work.industry_setting,
        "economic_function": work.economic_function,
        "archetype": work.primary_archetype.value,
        "delegation_patterns": [p.value for p in interaction.delegation_patterns],
        "user_profile": interaction.user_profile.value,
        "temporal_dynamics": interaction.temporal_dynamics.value,
        "primary_artifact": _value(taxonomy.workspace.primary_artifact),
        "autonomy_level": taxonomy.workspace.autonomy_level.value,
        "approval_required_for": list(task.autonomy.approval_required_for),
        "knowledge_burden": taxonomy.knowledge.burden.value,
        "tool_burden": taxonomy.knowledge.tool_burden.value,
        "risk_tier": taxonomy.risk_tier.value,
        "required_fact_count": taxonomy.difficulty.required_fact_count,
        "time_budget_s": task.time_budget_s,
        "tools": [t.name for t in bundle.tools.tools],
        "duplex_event_types": [e.type for e in bundle.events.events],
        "required_fields": [
            f"{expectation.artifact_id}.{field.field}"
            for expectation in bundle.gold.artifact_expectations
            for field in expectation.fields
            if field.required
        ],
        "oracle_tool_calls": bundle.policy.tool_call_count if bundle.policy else 0,
        "num_user_plans": _bank_lines(bundle),
        "path": rel_path,
    }


def write_index(root: Path, bundles: Iterable[TaskBundle]) -> Path:
    """Write ``root/data/tasks.jsonl`` (sorted by package directory name, UTF-8 unescaped)."""
    ordered = sorted(bundles, key=lambda b: b.task_dir.name)
    text = "".join(
        json.dumps(index_row(b, f"tasks/{b.task_dir.name}"), ensure_ascii=False) + "\n" for b in ordered
    )
    return atomic_write_text(root / INDEX_FILE, text)


def _value(member: Any) -> Any:
    return None if member is None else member.value


def _bank_lines(bundle: TaskBundle) -> int:
    """Non-blank lines of the bank file (published count; duplicates included)."""
    reader = PackageReader(bundle.task_dir, bundle.task_id)  # within the package and its limits
    rel = bundle.task.realization_bank
    return len(reader.jsonl(rel)) if reader.exists(rel) else 0
