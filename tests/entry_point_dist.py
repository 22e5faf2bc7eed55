"""Install entry points the way a package does: a ``*.dist-info`` directory on ``sys.path``.

``importlib.metadata`` then finds them as it finds any installed distribution's, so a test of a
plugin point exercises the real discovery, not a patched lookup.
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["install_entry_points"]


def install_entry_points(
    root: Path, monkeypatch: pytest.MonkeyPatch, group: str, points: dict[str, str], *, dist: str = "apex-plugin-example"
) -> None:
    """Put a distribution ``dist`` on ``sys.path`` whose ``entry_points.txt`` has ``points`` under ``group``."""
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8")
    lines = [f"[{group}]", *(f"{name} = {target}" for name, target in points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))  # also invalidates importlib's path caches
