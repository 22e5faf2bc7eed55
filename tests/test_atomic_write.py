"""Atomic writes: all or nothing, and readable by others like a plain write."""

from __future__ import annotations

import os
import stat

import pytest

from harness.atomic_write import atomic_path, atomic_write_text


def test_written_files_get_the_usual_permissions_not_mkstemp_private_ones(tmp_path):
    path = atomic_write_text(tmp_path / "index.jsonl", "{}\n")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    assert path.read_text() == "{}\n"


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path):
    target = tmp_path / "SHA256SUMS"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("crash mid-write")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["SHA256SUMS"]


def test_a_write_never_touches_the_process_umask(tmp_path, monkeypatch):
    """Setting the umask to read it gave files other threads created meanwhile mode 0666 (issue 34)."""
    def forbidden(mask):
        raise AssertionError(f"os.umask({mask:o}) called by a write")

    monkeypatch.setattr(os, "umask", forbidden)
    path = atomic_write_text(tmp_path / "result.json", "{}\n")
    assert path.read_text() == "{}\n"


def test_the_umask_is_read_from_proc_without_changing_it():
    from harness.atomic_write import _read_umask

    umask = os.umask(0o027)
    try:
        assert _read_umask() == 0o027
        assert os.umask(0o027) == 0o027  # still what it was set to
    finally:
        os.umask(umask)
