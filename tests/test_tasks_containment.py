"""No reads outside the package: SHA256SUMS entries and audio-index clip paths (issue 14, defect 7).

A refusal must not depend on whether the outside file exists: otherwise a hostile dataset could
probe the machine it is validated on ("missing" vs "mismatch").
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from harness.audio.speech_bank import (
    ClipIntegrityError,
    PrerenderedBank,
    SpeechSourceError,
    open_speech_source,
)
from harness.tasks.checksums import CHECKSUM_FILE, ChecksumManifest
from harness.tasks.dataset import resolve_data
from harness.tasks.errors import TaskLoadError
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.package_editing import editable_copy

TASK_ID = "demo_hvac_inspection_001"


@pytest.fixture
def dataset(tmp_path) -> Path:
    root = tmp_path / "dataset"
    (root / "tasks").mkdir(parents=True)
    editable_copy(DEMO_DATA / "tasks" / TASK_ID, root / "tasks")
    ChecksumManifest.write(root)
    return root


def _append_entry(root: Path, rel: str, digest: str = "0" * 64) -> None:
    with (root / CHECKSUM_FILE).open("a", encoding="utf-8") as handle:
        handle.write(f"{digest}  {rel}\n")


def _verify_error(root: Path) -> str:
    source = resolve_data(root)
    with pytest.raises(TaskLoadError) as info:
        load_task(source.task_dirs[0], checksums=source.checksums)
    return str(info.value)


@pytest.mark.parametrize("rel", [f"tasks/{TASK_ID}/../../../secret", "/etc/hostname", "..", "tasks/./x"])
def test_checksum_entry_written_to_leave_is_refused_at_read(dataset, rel):
    _append_entry(dataset, rel)
    with pytest.raises(TaskLoadError) as info:
        ChecksumManifest.read(dataset)
    line = len((dataset / CHECKSUM_FILE).read_text(encoding="utf-8").splitlines())
    assert str(info.value).endswith(
        f"SHA256SUMS line {line}: path = {rel!r}: path must be a normalized path inside the dataset"
    )


def test_checksum_entry_through_a_symlink_out_says_the_same_whatever_is_outside(dataset, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, dataset / "tasks" / TASK_ID / "leak")
    clean = (dataset / CHECKSUM_FILE).read_text(encoding="utf-8")
    messages = []
    for case in ("missing", "mismatch", "match"):
        (outside / "secret").unlink(missing_ok=True)
        if case != "missing":
            (outside / "secret").write_text("guess", encoding="utf-8")
        digest = hashlib.sha256(b"guess").hexdigest() if case == "match" else "0" * 64
        (dataset / CHECKSUM_FILE).write_text(clean, encoding="utf-8")
        _append_entry(dataset, f"tasks/{TASK_ID}/leak/secret", digest)
        messages.append(_verify_error(dataset))
    assert len(set(messages)) == 1
    assert messages[0] == (
        f"task '{TASK_ID}': leak: SHA256SUMS lists tasks/{TASK_ID}/leak/secret: symlink points outside the dataset"
    )


def test_index_refuses_to_publish_a_symlink_out(dataset, tmp_path):
    (tmp_path / "host_file").write_text("not ours", encoding="utf-8")
    os.symlink(tmp_path / "host_file", dataset / "tasks" / TASK_ID / "borrowed.md")
    with pytest.raises(TaskLoadError, match="borrowed.md: SHA256SUMS lists .*symlink points outside the dataset"):
        ChecksumManifest.write(dataset)


def _point_first_clip_at(task_dir: Path, file: str) -> None:
    index = task_dir / "user" / "audio" / "index.jsonl"
    rows = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines()]
    rows[0]["file"] = file
    index.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.mark.parametrize("file", ["../../../../../../etc/passwd", "/etc/passwd", "../../grading/gold.yaml"])
def test_audio_index_file_outside_user_audio_is_refused_by_the_loader(tmp_path, file):
    task = editable_copy(DEMO_DATA / "tasks" / TASK_ID, tmp_path)
    _point_first_clip_at(task, file)
    with pytest.raises(TaskLoadError) as info:
        load_task(task)
    assert str(info.value) == (
        f"task '{TASK_ID}': user/audio/index.jsonl line 1: file = {file!r}: path leaves user/audio"
    )


def test_audio_index_symlink_out_is_refused_by_the_speech_source(tmp_path):
    """``run`` opens the bank itself: it refuses before any clip is read, as a one-line usage error."""
    task = editable_copy(DEMO_DATA / "tasks" / TASK_ID, tmp_path / "pkg")
    (tmp_path / "outside.flac").write_bytes(b"x")
    os.symlink(tmp_path / "outside.flac", task / "user" / "audio" / "linked.flac")
    _point_first_clip_at(task, "linked.flac")
    with pytest.raises(TaskLoadError, match="user/audio/linked.flac: symlink points outside user/audio"):
        load_task(task)
    with pytest.raises(ClipIntegrityError, match="line 1: file = 'linked.flac': symlink points outside user/audio"):
        PrerenderedBank(task, TASK_ID)
    for mode in ("auto", "prerendered"):
        with pytest.raises(SpeechSourceError, match="symlink points outside user/audio"):
            open_speech_source(task, mode, task_id=TASK_ID)


def test_audio_index_traversal_is_refused_by_the_speech_source(tmp_path):
    task = editable_copy(DEMO_DATA / "tasks" / TASK_ID, tmp_path)
    _point_first_clip_at(task, "../../../../etc/passwd")
    with pytest.raises(SpeechSourceError, match="file = '../../../../etc/passwd': path leaves user/audio"):
        open_speech_source(task, "prerendered", task_id=TASK_ID)
