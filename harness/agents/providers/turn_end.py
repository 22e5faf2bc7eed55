"""End-of-turn detection on the client, for providers whose own turn detection is switched off."""

from __future__ import annotations

import numpy as np

from harness.audio.frames import FRAME_MS
from harness.audio.vad import FrameVad

__all__ = ["LocalTurnEnd"]


class LocalTurnEnd:
    """True once per user turn, when speech has been followed by ``silence_ms`` of silence."""

    def __init__(self, silence_ms: int = 500) -> None:
        self._vad = FrameVad()
        self._silence_ms = silence_ms
        self._heard = False
        self._quiet_ms = 0

    def update(self, frame: np.ndarray) -> bool:
        if self._vad.update(frame):
            self._heard, self._quiet_ms = True, 0
            return False
        self._quiet_ms += FRAME_MS
        if self._heard and self._quiet_ms >= self._silence_ms:
            self._heard = False
            return True
        return False
