"""The output directory a verb writes into, checked before any work starts.

``run --out``, ``results --out`` and every verb that writes a folder share this check, so a path that
is a file, or a folder that cannot be written, is one usage line (exit 2) and never a traceback half
way through the work.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer

__all__ = ["writable_dir_or_exit"]


def writable_dir_or_exit(path: Path, *, option: str = "--out", what: str = "the output directory") -> Path:
    """``path`` created now and proven writable; otherwise one line naming the option, and exit 2."""
    if path.exists() and not path.is_dir():
        typer.echo(f"error: {option} {path}: is a file; {what} must be a directory", err=True)
        raise typer.Exit(2)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=path, prefix=".write-probe-")
        probe.close()
    except OSError as exc:
        typer.echo(f"error: {option} {path}: cannot write {what}: {exc.strerror or exc}", err=True)
        raise typer.Exit(2) from None
    return path
