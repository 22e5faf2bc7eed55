"""AsrCache: what a recognizer heard is found again only for exactly the same samples and recognizer."""

from __future__ import annotations

import numpy as np

from harness.audio.agent_asr import AgentTranscriber, AsrCache


class CountingRecognizer:
    """Says how many samples it was given, and counts its decodes."""

    def __init__(self, name: str = "counting") -> None:
        self.name = name
        self.calls = 0

    def transcribe_sync(self, pcm: np.ndarray) -> str:
        self.calls += 1
        return f"{len(pcm)} samples"

    def describe(self) -> dict:
        return {"asr": self.name}


async def test_the_same_samples_are_decoded_once_and_found_again_from_disk(tmp_path):
    pcm = (np.arange(4800) % 300).astype(np.int16)
    recognizer = CountingRecognizer()
    transcriber = AgentTranscriber(recognizer, AsrCache(tmp_path))
    assert await transcriber.transcribe(pcm) == "4800 samples"
    assert await transcriber.transcribe(pcm.copy()) == "4800 samples"
    assert recognizer.calls == 1
    fresh = AgentTranscriber(recognizer, AsrCache(tmp_path))  # another process: only the disk is shared
    assert await fresh.transcribe(pcm) == "4800 samples" and recognizer.calls == 1
    assert fresh.cache is not None and fresh.cache.hits == 1


async def test_other_samples_or_another_recognizer_are_never_answered_from_the_cache(tmp_path):
    pcm = (np.arange(4800) % 300).astype(np.int16)
    recognizer = CountingRecognizer()
    transcriber = AgentTranscriber(recognizer, AsrCache(tmp_path))
    await transcriber.transcribe(pcm)
    changed = pcm.copy()
    changed[-1] += 1  # one sample different: another key
    await transcriber.transcribe(changed)
    assert recognizer.calls == 2
    other = CountingRecognizer("other")
    await AgentTranscriber(other, AsrCache(tmp_path)).transcribe(pcm)
    assert other.calls == 1
    assert AsrCache.key({"asr": "a"}, pcm) != AsrCache.key({"asr": "a"}, changed) != AsrCache.key({"asr": "b"}, changed)


async def test_an_unwritable_cache_directory_only_costs_a_decode(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    recognizer = CountingRecognizer()
    transcriber = AgentTranscriber(recognizer, AsrCache(blocker / "asr"))
    pcm = np.zeros(480, np.int16)
    assert await transcriber.transcribe(pcm) == "480 samples"
    assert await AgentTranscriber(recognizer, AsrCache(blocker / "asr")).transcribe(pcm) == "480 samples"
    assert recognizer.calls == 2
