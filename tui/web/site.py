"""The viewer as files: the static pages, ``data/index.js``, one ``data/sessions/<id>.js`` per session
and the recordings under ``audio/``.

Data files are scripts (``apexViewer.receive(name, {...})``), not JSON fetched by the page: a page
opened from the disk (``file://``, a folder unzipped from an e-mail) may load scripts but not fetch
files. The same texts are what ``--serve`` answers with, so both ways show the same pages.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from harness.atomic_write import atomic_write_text

from .campaign_index import Site
from .session_page import STEREO_FILE, build_session_page

__all__ = ["MARKER_FILE", "STATIC_DIR", "ExportSummary", "OutDirError", "audio_url", "data_script", "export_site",
           "session_script"]

STATIC_DIR = Path(__file__).parent / "static"
#: Left in every written viewer folder, so writing again may replace it (and nothing else).
MARKER_FILE = ".apex-voice-view"


class OutDirError(ValueError):
    """``--out`` names something the viewer must not write over."""


@dataclass(frozen=True)
class ExportSummary:
    out: Path
    cells: int
    sessions: int
    recordings: int
    index_bytes: int


def data_script(name: str, data: BaseModel) -> str:
    """The script that hands ``data`` to the page under ``name``."""
    return f"apexViewer.receive({json.dumps(name)}, {data.model_dump_json()});\n"


def audio_url(page_id: str) -> str:
    return f"audio/{page_id}.wav"


def session_script(site: Site, page_id: str) -> str:
    source = site.sessions[page_id]
    page = build_session_page(page_id, source.session_dir, source.record, audio_url=audio_url(page_id))
    return data_script(page_id, page)


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise OutDirError(f"{out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER_FILE).exists():
        raise OutDirError(f"{out}: not empty and not a viewer folder written before (no {MARKER_FILE}); "
                          "give a new or empty directory")


def _place_recording(source: Path, target: Path) -> None:
    """A hard link where the file system allows (a campaign's audio is large), else a copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def export_site(site: Site, out: Path) -> ExportSummary:
    """Write the viewer of ``site`` into ``out`` (new, empty, or a viewer folder written before)."""
    out = Path(out)
    _check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / MARKER_FILE, "written by apex-voice view\n")
    for static in sorted(STATIC_DIR.iterdir()):
        if static.is_file():
            atomic_write_text(out / static.name, static.read_text(encoding="utf-8"))
    index_text = data_script("index", site.index)
    atomic_write_text(out / "data" / "index.js", index_text)
    recordings = 0
    for page_id, source in site.sessions.items():
        atomic_write_text(out / "data" / "sessions" / f"{page_id}.js", session_script(site, page_id))
        stereo = source.session_dir / STEREO_FILE
        if stereo.is_file():
            _place_recording(stereo, out / audio_url(page_id))
            recordings += 1
    return ExportSummary(out=out, cells=len(site.index.cells), sessions=len(site.sessions), recordings=recordings,
                         index_bytes=len(index_text.encode("utf-8")))
