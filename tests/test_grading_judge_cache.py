"""The judge cache: published flat format, concurrent writers in several processes, corrupt files.

The store itself (first writer wins, one request per key, corrupt SQLite files): tests/test_judge_store.py.
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from harness.grading.judge_cache import JudgeCache, default_cache_path


def _write_keys(path: str, prefix: str, count: int) -> None:
    cache = JudgeCache(path)
    for i in range(count):
        cache.put(f"{prefix}-{i}", i % 2 == 0)


def test_two_processes_writing_concurrently_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "judge_cache.json"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_keys, args=(str(path), prefix, 200)) for prefix in ("a", "b")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert [worker.exitcode for worker in workers] == [0, 0]
    JudgeCache(path).export_json(tmp_path / "exported.json")
    entries = json.loads((tmp_path / "exported.json").read_text())
    assert len(entries) == 400
    assert entries["a-0"] is True and entries["b-199"] is False


def test_reads_the_published_flat_format(tmp_path: Path) -> None:
    path = tmp_path / "published.json"
    path.write_text(json.dumps({"506ff4ca35af092c2ca2155591df356f": True, "other": False, "junk": "yes"}))
    cache = JudgeCache(path)
    assert cache.get("506ff4ca35af092c2ca2155591df356f") is True
    assert cache.get("other") is False and cache.get("junk") is None and cache.get("missing") is None


def test_sees_entries_written_by_another_instance(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    reader, writer = JudgeCache(path), JudgeCache(path)
    assert reader.get("k") is None
    writer.put("k", True)
    assert reader.get("k") is True
    reader.put("j", False)
    assert writer.get("j") is False
    writer.export_json(tmp_path / "exported.json")
    assert json.loads((tmp_path / "exported.json").read_text()) == {"j": False, "k": True}


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
def test_corrupt_file_is_treated_as_empty_and_never_rewritten(tmp_path: Path, content: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(content)
    cache = JudgeCache(path)
    assert len(cache) == 0 and cache.get("k") is None
    cache.put("k", True)
    assert path.read_text() == content, "the cache must never rewrite a corrupt file"
    cache.export_json(tmp_path / "exported.json")
    assert json.loads((tmp_path / "exported.json").read_text()) == {"k": True}


def test_default_path_honours_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("APEX_VOICE_JUDGE_CACHE", str(tmp_path / "x.json"))
    assert default_cache_path() == tmp_path / "x.json"
    assert JudgeCache().path == tmp_path / "x.json"
    monkeypatch.delenv("APEX_VOICE_JUDGE_CACHE")
    assert default_cache_path() == Path.home() / ".cache" / "apex_voice" / "judge_cache.json"


def test_put_creates_missing_directories(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "deep" / "dir" / "c.json")
    cache.put("k", False)
    assert JudgeCache(tmp_path / "deep" / "dir" / "c.json").get("k") is False
