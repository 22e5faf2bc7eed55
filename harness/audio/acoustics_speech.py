"""A speech source whose clips come out of an acoustic chain (condition C3).

It is the task's ordinary speech source (pre-rendered bank, live espeak fallback) with one step
added: after every clip the session needs has been prepared, the whole set is degraded at once, so
babble can mix the session's other clips. Degrading runs in a worker thread before the session
clock starts; the session loop never waits for it.
"""

from __future__ import annotations

import asyncio

from .acoustics import AcousticChain
from .clip import Clip
from .speech_bank import SpeechSource

__all__ = ["DegradedSpeechSource"]


class DegradedSpeechSource(SpeechSource):
    """``source``'s clips through ``chain``, seeded by the session ``seed``."""

    def __init__(self, source: SpeechSource, chain: AcousticChain, seed: int) -> None:
        super().__init__(source.task_id, source.bank, source.live)
        self.fallback_texts = source.fallback_texts
        self.chain = chain
        self.seed = seed

    async def prepare(self, texts: list[str]) -> dict[str, Clip]:
        clean = await super().prepare(texts)
        return await asyncio.to_thread(self.chain.degrade_clips, clean, seed=self.seed)
