"""Local speech recognition of the agent channel, for adapters that report no transcript.

The simulated user must know what the agent said to step its flow. Every provider adapter gives a
transcript; an agent that does not (a raw audio endpoint, a native-MCP agent) is transcribed here
with pocketsphinx (offline, en-US model shipped in its wheel, deterministic). Recognition of
synthetic voices is rough: keyword-level patterns in ``observer.yaml`` survive it best.
"""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

import numpy as np

from .frames import SAMPLE_RATE
from .resample import resample_clip

__all__ = ["AgentTranscriber", "asr_available"]

_ASR_RATE = 16_000


def asr_available() -> bool:
    return importlib.util.find_spec("pocketsphinx") is not None


class AgentTranscriber:
    """Transcribes whole agent responses (PCM16 mono 24 kHz) in a worker thread."""

    def __init__(self) -> None:
        self._decoder: Any = None
        self._lock = asyncio.Lock()

    def _transcribe_sync(self, pcm: np.ndarray) -> str:
        if self._decoder is None:
            from pocketsphinx import Decoder

            self._decoder = Decoder(samprate=_ASR_RATE, logfn="/dev/null")
        audio = resample_clip(pcm.astype(np.float64), SAMPLE_RATE, _ASR_RATE)
        pcm16 = np.clip(np.round(audio), -32768, 32767).astype("<i2")
        self._decoder.start_utt()
        self._decoder.process_raw(pcm16.tobytes(), full_utt=True)
        self._decoder.end_utt()
        hypothesis = self._decoder.hyp()
        return hypothesis.hypstr if hypothesis is not None else ""

    async def transcribe(self, pcm: np.ndarray) -> str:
        """The words in ``pcm``; ``""`` when nothing was recognized. One decode at a time."""
        async with self._lock:
            return await asyncio.to_thread(self._transcribe_sync, pcm)
