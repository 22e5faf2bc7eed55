"""Files of a session directory that do not belong to one part: the workspace files."""

from __future__ import annotations

import json
from pathlib import Path

from harness.atomic_write import atomic_write_text
from mcp_servers.records import EnvironmentSnapshot

__all__ = ["write_workspace_files"]


def write_workspace_files(session_dir: Path, snapshot: EnvironmentSnapshot) -> None:
    """``workspace/final_workspace.json`` and ``workspace/versions.jsonl`` in the published layout."""
    final = {aid: art.model_dump(mode="json") for aid, art in snapshot.artifacts.items()}
    atomic_write_text(
        session_dir / "workspace" / "final_workspace.json", json.dumps(final, indent=2, default=str) + "\n"
    )
    lines = "".join(json.dumps(v.model_dump(mode="json"), default=str) + "\n" for v in snapshot.versions)
    atomic_write_text(session_dir / "workspace" / "versions.jsonl", lines)
