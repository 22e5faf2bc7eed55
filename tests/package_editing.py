"""Test helpers: writable copies of task packages, edited in place to break them on purpose."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["edit", "editable_copy"]


def editable_copy(package: Path, tmp_path: Path) -> Path:
    """A writable copy of a (possibly read-only) package."""
    target = tmp_path / package.name
    shutil.copytree(package, target)
    for path in [target, *target.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return target


def edit(task_dir: Path, rel: str, old: str, new: str) -> None:
    """Replace the first ``old`` in ``rel`` with ``new`` (which must be there)."""
    path = task_dir / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
