"""Where "Save screenshot" puts its SVG, and writing it there.

``~/Downloads`` (as ``$XDG_DOWNLOAD_DIR`` names it) when it exists; else ``$XDG_PICTURES_DIR``
when set (created if missing); else the current directory. Never a directory that is not there
and never a silent failure: the caller says where the file went or why it could not be written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from harness.atomic_write import atomic_write_text

__all__ = ["save_screenshot", "screenshot_dir"]


def screenshot_dir(environ: Mapping[str, str] = os.environ) -> Path:
    downloads = Path(environ.get("XDG_DOWNLOAD_DIR") or "~/Downloads").expanduser()
    if downloads.is_dir():
        return downloads
    pictures = environ.get("XDG_PICTURES_DIR")
    if pictures:
        return Path(pictures).expanduser()
    return Path.cwd()


def save_screenshot(svg: str, directory: Path, title: str) -> Path:
    """Write ``<directory>/<title>_<time>.svg`` (the directory made if needed); raises ``OSError``."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now().strftime("%Y-%m-%dT%H_%M_%S_%f")
    path = directory / f"{title.replace(' ', '_')}_{stamp}.svg"
    atomic_write_text(path, svg)
    return path
