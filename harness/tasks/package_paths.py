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
    "TASK_PATH_FIELDS",
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

#: Every ``task.yaml`` key that names a file or folder of the package: all must stay inside it,
#: including those this harness does not read yet (a later reader must not inherit an escape).
TASK_PATH_FIELDS = (
    "taxonomy", "initial_state", "user_program", "user_state", "reveal_graph", "event_program", "persona",
    "realization_bank", "audio_manifest", "knowledge_dir", "tools", "latent_world", "initial_workspace",
    "artifact_schemas_dir", "gold_dir",
)


def gold_file(task: TaskSpec) -> str:
    """``<gold_dir>/gold.yaml`` (the directory is overridable, the file name is not)."""
    return str(PurePosixPath(task.gold_dir) / "gold.yaml")


def knowledge_manifest_file(task: TaskSpec) -> str:
    """``<knowledge_dir>/manifest.json`` (the directory is overridable, the file name is not)."""
    return str(PurePosixPath(task.knowledge_dir) / "manifest.json")
