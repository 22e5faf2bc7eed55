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
