"""The public bundle directory as the ``{name: text}`` upload a pooled server loads its task from."""

from __future__ import annotations

from pathlib import Path

__all__ = ["read_public_files"]


def read_public_files(public_dir: Path) -> dict[str, str]:
    """Every top-level ``*.json`` file of ``public_dir`` (the server refuses anything else by name)."""
    files = {path.name: path.read_text(encoding="utf-8") for path in sorted(Path(public_dir).glob("*.json"))}
    if not files:
        raise FileNotFoundError(f"public bundle directory {public_dir} holds no *.json file")
    return files
