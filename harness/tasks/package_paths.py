"""Package-relative paths of the files whose location is fixed or derived (reference §1.1).

One place for them so the loader, the lint and the index name files identically in messages.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from .models import TaskSpec

__all__ = [
    "AUDIO_DIR",
    "AUDIO_INDEX_FILE",
    "AUDIO_META_FILE",
    "OBSERVER_FILE",
    "POLICY_FILE",
    "SOURCE_MANIFEST_FILE",
    "TASK_FILE",
    "gold_file",
    "knowledge_manifest_file",
]

TASK_FILE = "task.yaml"
POLICY_FILE = "reference/policy.yaml"
OBSERVER_FILE = "user/observer.yaml"
AUDIO_DIR = "user/audio"
AUDIO_INDEX_FILE = f"{AUDIO_DIR}/index.jsonl"
AUDIO_META_FILE = "user/audio/meta.json"
SOURCE_MANIFEST_FILE = "assets/inputs/artifact_source_manifest.yaml"


def gold_file(task: TaskSpec) -> str:
    """``<gold_dir>/gold.yaml`` (the directory is overridable, the file name is not)."""
    return str(PurePosixPath(task.gold_dir) / "gold.yaml")


def knowledge_manifest_file(task: TaskSpec) -> str:
    """``<knowledge_dir>/manifest.json`` (the directory is overridable, the file name is not)."""
    return str(PurePosixPath(task.knowledge_dir) / "manifest.json")
