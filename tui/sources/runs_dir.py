"""Attach to a campaign another process is running: its ``campaign.json``, sessions and results.

Layout (``harness/campaign/campaign.py``): ``<runs>/campaign.json``,
``<runs>/<task>/rep<k>/<run_id>/events.jsonl`` and ``<runs>/<task>/rep<k>/result.json``. Each
:meth:`RunsDirWatcher.poll` reads what was appended since the previous one and hands it on as
updates; directories are rescanned every few polls, appended files every poll. Call it from a
worker thread: it blocks on the disk.

``watch`` may also be pointed at one cell: a rep directory (its newest session is followed) or a
session directory (that session): :func:`watch_target` tells which it was given.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.events import EVENTS_FILE
from harness.results.campaign_files import MANIFEST_FILE
from harness.results.result_record import RESULT_FILE

from ..state.campaign_view import CellKey, CellResult
from ..state.updates import CampaignSeen, EventsRead, ResultRead, SessionRestarted, Update
from .event_lines import parse_line
from .file_tail import FileTail

__all__ = ["RunsDirWatcher", "WatchTarget", "watch_target"]

_REP_DIR = re.compile(r"^rep(\d+)$")


@dataclass(frozen=True)
class WatchTarget:
    """What ``watch`` follows: a whole campaign directory, or one of its cells."""

    #: Where ``campaign.json`` is (or will be), for the model and the plan.
    runs_dir: Path
    #: The one cell followed (a rep or session directory was given), else ``None``: every cell.
    cell: CellKey | None = None
    rep_dir: Path | None = None
    #: The one session followed (a session directory was given): not the rep's newest.
    session: Path | None = None

    def describe(self) -> str:
        if self.session is not None:
            return f"session {self.session.parent}"
        if self.rep_dir is not None:
            return f"rep directory {self.rep_dir}"
        return f"campaign directory {self.runs_dir}"


def _cell_of(rep_dir: Path) -> CellKey:
    match = _REP_DIR.match(rep_dir.name)
    return (rep_dir.parent.name, int(match.group(1))) if match else (rep_dir.name, 0)


def watch_target(path: Path) -> WatchTarget:
    """A campaign directory (``campaign.json``, or nothing yet), a rep directory (``rep<k>``,
    holding sessions) or a session directory (holding ``events.jsonl``)."""
    path = Path(path)
    if (path / MANIFEST_FILE).is_file():
        return WatchTarget(path)
    if (path / EVENTS_FILE).is_file():
        rep_dir = path.parent
        return WatchTarget(rep_dir.parent.parent, _cell_of(rep_dir), rep_dir, path / EVENTS_FILE)
    if _REP_DIR.match(path.name) or any(path.glob(f"*/{EVENTS_FILE}")):
        return WatchTarget(path.parent.parent, _cell_of(path), path)
    return WatchTarget(path)


class RunsDirWatcher:
    def __init__(self, target: WatchTarget | Path, emit: Callable[[Update], None], *, rescan_every: int = 10) -> None:
        self.target = target if isinstance(target, WatchTarget) else WatchTarget(Path(target))
        self.runs_dir = self.target.runs_dir
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
        if not isinstance(data, dict):
            return 0
        cells, unscored = _planned(data), _unscored(data)
        if self.target.cell is not None:
            cells = tuple(key for key in cells if key == self.target.cell) or (self.target.cell,)
            unscored = tuple((key, result) for key, result in unscored if key == self.target.cell)
        self.emit(CampaignSeen(str(data.get("model", "")), cells, unscored))
        return 1

    def _scan_cells(self) -> None:
        if self.target.rep_dir is not None:
            assert self.target.cell is not None
            self._rep_dirs[self.target.cell] = self.target.rep_dir
            return
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
            pinned = self.target.session
            sessions = [pinned] if pinned is not None and pinned.is_file() else list(rep_dir.glob(f"*/{EVENTS_FILE}"))
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
            pinned = self.target.session
            if not isinstance(record, dict) or (pinned is not None and record.get("run_id") not in (None, pinned.parent.name)):
                continue  # not a record, or the result of another attempt than the session followed
            self.emit(ResultRead(key, CellResult.from_record(record)))
            emitted += 1
        return emitted


def _planned(data: dict[str, Any]) -> tuple[CellKey, ...]:
    """Every planned cell: ``planned_cells`` where the manifest has it, else tasks × repeats."""
    planned = data.get("planned_cells")
    if isinstance(planned, dict) and planned:
        return tuple((str(task), int(rep)) for task, reps in planned.items() for rep in reps or ())
    task_ids = [str(t) for t in data.get("task_ids") or []]
    repeats = int(data.get("repeats") or 1)
    return tuple((t, r) for r in range(repeats) for t in task_ids)


def _unscored(data: dict[str, Any]) -> tuple[tuple[CellKey, CellResult], ...]:
    entries = data.get("unscored_cells")
    return tuple(
        ((str(entry.get("task_id")), int(entry.get("rep") or 0)),
         CellResult.unscored_cell(str(entry.get("reason", "not run")), str(entry.get("detail") or "")))
        for entry in entries if isinstance(entry, dict)
    ) if isinstance(entries, list) else ()


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None
