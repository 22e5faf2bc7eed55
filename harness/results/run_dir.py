"""The files of one session directory, written once the session is over.

``events.jsonl`` is written live by the event bus; everything else is written here, atomically:
``workspace/final_workspace.json`` and ``workspace/versions.jsonl`` (published layout),
``grading_inputs.json`` (what ``apex-voice regrade`` grades from) and ``audio/`` (``stereo.wav``:
L user, R agent, plus the two mono files).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from harness.atomic_write import atomic_write_text
from harness.audio.stereo_recorder import StereoRecorder
from mcp_servers.records import EnvironmentSnapshot

from .grading_inputs import GradingInputs

__all__ = ["FinishedVoiceSession", "write_graded_files", "write_session_files", "write_workspace_files"]


class FinishedVoiceSession(Protocol):
    """What a voice session's files are written from: the runner's result has these (the run
    directory's format sits below the session, so it names what it reads instead of importing it)."""

    @property
    def snapshot(self) -> EnvironmentSnapshot: ...

    @property
    def observed_act_keys(self) -> list[str]: ...

    @property
    def recorder(self) -> StereoRecorder: ...


def write_workspace_files(session_dir: Path, snapshot: EnvironmentSnapshot) -> None:
    """``workspace/final_workspace.json`` and ``workspace/versions.jsonl`` in the published layout."""
    final = {aid: art.model_dump(mode="json") for aid, art in snapshot.artifacts.items()}
    atomic_write_text(
        session_dir / "workspace" / "final_workspace.json", json.dumps(final, indent=2, default=str) + "\n"
    )
    lines = "".join(json.dumps(v.model_dump(mode="json"), default=str) + "\n" for v in snapshot.versions)
    atomic_write_text(session_dir / "workspace" / "versions.jsonl", lines)


def write_graded_files(
    session_dir: Path, snapshot: EnvironmentSnapshot, observed_act_keys: Iterable[str], gold_doc_ids: list[str]
) -> None:
    """The files of any graded session (text or voice): the workspace, and what ``regrade`` grades from."""
    write_workspace_files(session_dir, snapshot)
    GradingInputs(
        snapshot=snapshot, observed_act_keys=sorted(observed_act_keys), gold_doc_ids=list(gold_doc_ids)
    ).write(session_dir)


async def write_session_files(session_dir: Path, session: FinishedVoiceSession, *, gold_doc_ids: list[str] | None = None) -> None:
    """Every file of a finished voice session but ``events.jsonl``, off the event loop."""

    def write() -> None:
        write_graded_files(session_dir, session.snapshot, session.observed_act_keys, gold_doc_ids or [])
        session.recorder.write(session_dir / "audio")

    await asyncio.to_thread(write)
