"""The judge's verdict store (issue 20, item 4): first writer wins in every process, one request per
key in flight, the published JSON imported and exported unchanged, corrupt files moved aside."""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.blame.errors import JudgeUnavailable
from harness.first_writer_store import FirstWriterStore
from harness.grading.judge import JUDGE_ATTEMPTS, CachedVerdicts, SemanticJudge
from harness.grading.judge_cache import JudgeCache, judge_cache_key, store_path_for

PUBLISHED = {"506ff4ca35af092c2ca2155591df356f": True, "0f" * 16: False, "junk": "yes", "one": 1}


class GatedJudge(SemanticJudge):
    """A judge whose endpoint answers ``verdict`` only once ``gate`` opens; it counts the requests."""

    def __init__(self, cache: JudgeCache | None, verdict: str = '{"pass": true}') -> None:
        super().__init__(base_url="http://127.0.0.1:9/v1", api_key="k", cache=cache, retry_wait_s=0)
        self.gate = asyncio.Event()
        self.reply = verdict
        self.prompts: list[str] = []
        self.before_answer: Any = None

    async def _complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        await self.gate.wait()
        if self.before_answer is not None:
            self.before_answer()
        if self.reply == "down":
            raise ValueError("endpoint down")
        return self.reply


def _racing_writer(path: str, worker: int, keys: int, results: Any) -> None:
    """Each worker offers its own verdict (worker parity) for the same keys; reports what stood."""
    cache = JudgeCache(path)
    results.put((worker, [cache.put(f"k{i}", worker % 2 == 0) for i in range(keys)]))


def test_first_writer_wins_across_instances(tmp_path: Path) -> None:
    first, second = JudgeCache(tmp_path / "c.json"), JudgeCache(tmp_path / "c.json")
    assert first.put("k", True) is True
    assert second.put("k", False) is True, "a later writer learns the verdict that stands"
    assert second.get("k") is True and JudgeCache(tmp_path / "c.json").get("k") is True


def test_racing_processes_all_see_the_first_verdict(tmp_path: Path) -> None:
    path = str(tmp_path / "judge_cache.json")
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [context.Process(target=_racing_writer, args=(path, n, 300, results)) for n in range(4)]
    for worker in workers:
        worker.start()
    reported = dict(results.get(timeout=120) for _ in workers)
    for worker in workers:
        worker.join()
    assert [worker.exitcode for worker in workers] == [0, 0, 0, 0]
    stored = JudgeCache(path)
    standing = [stored.get(f"k{i}") for i in range(300)]
    assert None not in standing and len(stored) == 300
    assert all(verdicts == standing for verdicts in reported.values()), "every writer used the same verdicts"


def test_published_json_is_imported_on_first_use_and_exported_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "judge_cache.json"
    path.write_text(json.dumps(PUBLISHED))
    cache = JudgeCache(path)
    assert cache.store_path == tmp_path / "judge_cache.sqlite3"
    assert cache.get("506ff4ca35af092c2ca2155591df356f") is True and cache.get("0f" * 16) is False
    assert cache.get("junk") is None and cache.get("one") is None, "only booleans are verdicts, as published"
    cache.export_json(tmp_path / "exported.json")
    exported = json.loads((tmp_path / "exported.json").read_text())
    assert exported == {k: v for k, v in PUBLISHED.items() if isinstance(v, bool)}
    assert path.read_text() == json.dumps(PUBLISHED), "the published file is never rewritten"


def test_a_changed_json_file_is_imported_again_and_stored_verdicts_stand(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "judge_cache.json"
    path.write_text(json.dumps({"a": True}))
    assert JudgeCache(path).get("a") is True
    path.write_text(json.dumps({"a": False, "b": False}))
    with caplog.at_level(logging.WARNING):
        again = JudgeCache(path)
        assert again.get("b") is False
    assert again.get("a") is True, "a verdict already used never changes"
    assert "1 of its verdicts disagree" in caplog.text


def test_import_json_counts_added_and_disagreeing(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "c.json")
    cache.put("a", True)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"a": False, "b": True, "c": "x"}))
    added = cache.import_json(other)
    assert (added.offered, added.added, added.disagreeing) == (2, 1, 1)
    assert (cache.get("a"), cache.get("b"), len(cache)) == (True, True, 2)


def test_a_store_path_is_used_as_is(tmp_path: Path) -> None:
    assert store_path_for(tmp_path / "verdicts.sqlite3") == tmp_path / "verdicts.sqlite3"
    cache = JudgeCache(tmp_path / "verdicts.sqlite3")
    cache.put("k", False)
    assert JudgeCache(tmp_path / "verdicts.sqlite3").get("k") is False


def test_a_corrupt_store_is_moved_aside_never_overwritten(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = tmp_path / "judge_cache.sqlite3"
    garbage = b"not a database " * 100
    store.write_bytes(garbage)
    with caplog.at_level(logging.WARNING):
        cache = JudgeCache(tmp_path / "judge_cache.json")
        assert cache.get("k") is None
    (aside,) = tmp_path.glob("judge_cache.sqlite3.corrupt-*")
    assert aside.read_bytes() == garbage
    assert "moved it to" in caplog.text
    cache.put("k", True)
    assert JudgeCache(tmp_path / "judge_cache.json").get("k") is True


def test_a_store_that_cannot_be_created_still_serves_the_published_json(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    with caplog.at_level(logging.WARNING):
        cache = JudgeCache(blocker / "judge_cache.json")
        assert cache.get("k") is None and cache.put("k", True) is True and cache.get("k") is True
    assert "kept in memory for this process only" in caplog.text
    # A read-only folder holding the published file (its .sqlite3 cannot be created there either).
    published = tmp_path / "published"
    published.mkdir()
    (published / "judge_cache.json").write_text(json.dumps(PUBLISHED))
    (published / "judge_cache.sqlite3").mkdir()  # stands in for a file the process may not create
    assert JudgeCache(published / "judge_cache.json").get("0f" * 16) is False


def test_a_busy_store_is_not_taken_for_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    FirstWriterStore(path).put("k", 1)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        store = FirstWriterStore(path)
        done = threading.Event()

        def release() -> None:
            holder.execute("COMMIT")
            done.set()

        threading.Timer(0.2, release).start()
        assert store.put("j", 2) == 2  # waited for the other writer instead of failing
        assert done.is_set()
    finally:
        holder.close()
    assert not list(tmp_path.glob("*.corrupt-*"))


async def test_async_reads_and_writes_leave_the_event_loop(tmp_path: Path) -> None:
    store = FirstWriterStore(tmp_path / "s.sqlite3")
    threads: list[str] = []
    real_get, real_put = store.get, store.put

    def get(key: str) -> Any:
        threads.append(threading.current_thread().name)
        return real_get(key)

    def put(key: str, value: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real_put(key, value)

    store.get, store.put = get, put  # type: ignore[method-assign]
    assert await store.aget("k") is None
    assert await store.aput("k", [1, 2]) == [1, 2]
    assert await store.aget("k") == [1, 2]  # seen before: from memory, no thread at all
    assert len(threads) == 2 and threading.main_thread().name not in threads


async def test_concurrent_sessions_asking_the_same_verdict_make_one_request(tmp_path: Path) -> None:
    judge = GatedJudge(JudgeCache(tmp_path / "c.json"))
    asks = [asyncio.create_task(judge("cost_center", "CC330", "CC-330", f"session {n}")) for n in range(8)]
    other = asyncio.create_task(judge("cost_center", "CC331", "CC-330", "session 9"))
    while len(judge.prompts) < 2:
        await asyncio.sleep(0)
    judge.gate.set()
    assert await asyncio.gather(*asks, other) == [True] * 9
    assert len(judge.prompts) == 2 and judge.calls == 2 and judge.errors == 0
    assert judge.cache is not None and judge.cache.get(judge_cache_key("cost_center", "CC330", "CC-330")) is True
    assert judge._in_flight == {}


async def test_a_failed_shared_request_leaves_every_asker_pending_and_is_asked_again(tmp_path: Path) -> None:
    judge = GatedJudge(JudgeCache(tmp_path / "c.json"), verdict="down")
    asks = [asyncio.create_task(judge("f", "a", "b", "ctx")) for _ in range(3)]
    while not judge.prompts:
        await asyncio.sleep(0)
    judge.gate.set()
    outcomes = await asyncio.gather(*asks, return_exceptions=True)
    assert all(isinstance(o, JudgeUnavailable) for o in outcomes)
    assert judge.errors == 1 and len(judge.prompts) == JUDGE_ATTEMPTS  # one shared request, tried in full
    judge.reply = '{"pass": false}'
    assert await judge("f", "a", "b", "ctx") is False and len(judge.prompts) == JUDGE_ATTEMPTS + 1


async def test_one_cancelled_asker_does_not_cancel_the_others(tmp_path: Path) -> None:
    judge = GatedJudge(JudgeCache(tmp_path / "c.json"))
    leaving, staying = (asyncio.create_task(judge("f", "a", "b", "ctx")) for _ in range(2))
    while not judge.prompts:
        await asyncio.sleep(0)
    leaving.cancel()
    judge.gate.set()
    assert await staying is True
    with pytest.raises(asyncio.CancelledError):
        await leaving


async def test_the_judge_returns_the_verdict_another_process_stored_first(tmp_path: Path) -> None:
    judge = GatedJudge(JudgeCache(tmp_path / "c.json"), verdict='{"pass": true}')
    key = judge_cache_key("f", "a", "b")
    judge.before_answer = lambda: JudgeCache(tmp_path / "c.json").put(key, False)  # wins the race
    judge.gate.set()
    assert await judge("f", "a", "b", "ctx") is False
    assert JudgeCache(tmp_path / "c.json").get(key) is False


async def test_cached_verdicts_read_the_store_and_leave_the_rest_pending(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "c.json")
    cache.put(judge_cache_key("f", "a", "b"), True)
    judge = CachedVerdicts(JudgeCache(tmp_path / "c.json"))
    assert await judge("f", "a", "b", "ctx") is True
    with pytest.raises(JudgeUnavailable):
        await judge("f", "other", "b", "ctx")
    assert (judge.cache_hits, judge.errors) == (1, 1)
