"""Attach to a campaign another process is running: its ``campaign.json``, sessions and results.

Layout (``harness/campaign/campaign.py``): ``<runs>/campaign.json``,
``<runs>/<task>/rep<k>/<run_id>/events.jsonl`` and ``<runs>/<task>/rep<k>/result.json``. Each
:meth:`RunsDirWatcher.poll` reads what was appended since the previous one and hands it on as
updates; directories are rescanned every few polls, appended files every poll. Call it from a
worker thread: it blocks on the disk.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from harness.events import EVENTS_FILE
from harness.results.campaign_files import MANIFEST_FILE
from harness.results.result_record import RESULT_FILE

from ..state.campaign_view import CellKey, CellResult
from ..state.updates import CampaignSeen, EventsRead, ResultRead, SessionRestarted, Update
from .event_lines import parse_line
from .file_tail import FileTail

__all__ = ["RunsDirWatcher"]


class RunsDirWatcher:
    def __init__(self, runs_dir: Path, emit: Callable[[Update], None], *, rescan_every: int = 10) -> None:
        self.runs_dir = Path(runs_dir)
        self.emit = emit
        self.rescan_every = rescan_every
        self._polls = 0
        self._manifest_mtime: float | None = None
        self._tails: dict[CellKey, FileTail] = {}
        self._result_mtimes: dict[CellKey, float] = {}
        self._rep_dirs: dict[CellKey, Path] = {}

    def poll(self) -> int:
        """Read what changed; returns how many updates were emitted (0: nothing new)."""
        emitted = 0
        if self._polls % self.rescan_every == 0:
            emitted += self._read_manifest()
            self._scan_cells()
            emitted += self._follow_newest_sessions()
            emitted += self._read_results()
        self._polls += 1
        for key, tail in self._tails.items():
            events = tuple(e for line in tail.read_lines() if (e := parse_line(line)) is not None)
            if events:
                self.emit(EventsRead(key, events))
                emitted += 1
        return emitted

    def _read_manifest(self) -> int:
        path = self.runs_dir / MANIFEST_FILE
        try:
            mtime = path.stat().st_mtime
            if mtime == self._manifest_mtime:
                return 0
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return 0  # absent, or caught mid-write (it is written atomically, but be safe)
        self._manifest_mtime = mtime
        task_ids = [str(t) for t in data.get("task_ids") or []]
        repeats = int(data.get("repeats") or 1)
        self.emit(CampaignSeen(str(data.get("model", "")), tuple((t, r) for r in range(repeats) for t in task_ids)))
        return 1

    def _scan_cells(self) -> None:
        try:
            task_dirs = [entry for entry in os.scandir(self.runs_dir) if entry.is_dir() and not entry.name.startswith(".")]
        except OSError:
            return
        for task_dir in task_dirs:
            for rep_dir in Path(task_dir.path).glob("rep*"):
                rep = rep_dir.name[3:]
                if rep.isdigit():
                    self._rep_dirs[(task_dir.name, int(rep))] = rep_dir

    def _follow_newest_sessions(self) -> int:
        """Tail each cell's newest session (a retry writes a new one beside the failed one)."""
        emitted = 0
        for key, rep_dir in self._rep_dirs.items():
            sessions = list(rep_dir.glob(f"*/{EVENTS_FILE}"))
            if not sessions:
                continue
            newest = max(sessions, key=lambda p: _mtime(p) or 0.0)
            current = self._tails.get(key)
            if current is not None and current.path == newest:
                continue
            if current is not None:
                self.emit(SessionRestarted(key, newest.parent.name))
                emitted += 1
            self._tails[key] = FileTail(newest)
        return emitted

    def _read_results(self) -> int:
        emitted = 0
        for key, rep_dir in self._rep_dirs.items():
            path = rep_dir / RESULT_FILE
            mtime = _mtime(path)
            if mtime is None or self._result_mtimes.get(key) == mtime:
                continue
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            self._result_mtimes[key] = mtime
            self.emit(ResultRead(key, CellResult.from_record(record)))
            emitted += 1
        return emitted


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None
