"""Per-frame voice activity on the harness's 20 ms 24 kHz frames: who holds the floor.

webrtcvad (mode 2) needs 8/16/32/48 kHz, so frames go through the streaming polyphase resampler
to 16 kHz. Raw decisions flicker inside words and between them, so they are smoothed: speech
starts after ``onset_frames`` consecutive voiced frames and ends after ``hangover_ms`` of unvoiced
frames. Everything is deterministic (no clocks, no randomness).
"""

from __future__ import annotations

import numpy as np
import webrtcvad

from .frames import FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE
from .pcm import PCM16_SCALE
from .resample import StreamingResampler

__all__ = ["FrameVad", "frame_dbfs", "is_silent"]

_VAD_RATE = 16_000
_SILENCE_DBFS = -45.0


def frame_dbfs(frame: np.ndarray) -> float:
    """RMS level of int16 samples in dBFS (−inf for digital silence)."""
    rms = float(np.sqrt(np.mean((np.asarray(frame, dtype=np.float64) / PCM16_SCALE) ** 2))) if len(frame) else 0.0
    return 20 * np.log10(rms) if rms > 0 else float("-inf")


def is_silent(frame: np.ndarray, threshold_dbfs: float = _SILENCE_DBFS) -> bool:
    """Energy check: the frame's RMS is below ``threshold_dbfs`` (cheap, no VAD state)."""
    return frame_dbfs(frame) < threshold_dbfs


class FrameVad:
    """Smoothed speaking/not-speaking state of one channel, updated once per 20 ms frame.

    ``onset_delay_ms`` tells a caller how far back the speech really began when ``speaking``
    turns true (the onset frames already heard).
    """

    def __init__(self, *, mode: int = 2, onset_frames: int = 2, hangover_ms: int = 200) -> None:
        if onset_frames < 1 or hangover_ms < FRAME_MS:
            raise ValueError(f"FrameVad wants onset_frames ≥ 1 and hangover_ms ≥ {FRAME_MS}, got {onset_frames}, {hangover_ms}")
        self._vad = webrtcvad.Vad(mode)
        self._resampler = StreamingResampler(SAMPLE_RATE, _VAD_RATE)
        # The 16 kHz PCM16 frame webrtcvad reads, reused; it takes any buffer of bytes.
        self._pcm16 = np.empty(FRAME_SAMPLES * _VAD_RATE // SAMPLE_RATE, dtype="<i2")
        self._pcm16_bytes = self._pcm16.view(np.uint8)
        self.onset_frames = onset_frames
        self.hangover_frames = -(-hangover_ms // FRAME_MS)
        self.speaking = False
        self._voiced_run = 0
        self._unvoiced_run = 0

    @property
    def onset_delay_ms(self) -> int:
        return (self.onset_frames - 1) * FRAME_MS

    def voiced(self, frame: np.ndarray) -> bool:
        """webrtcvad's raw decision for one 20 ms 24 kHz frame (advances the resampler)."""
        if len(frame) != FRAME_SAMPLES:
            raise ValueError(f"FrameVad wants {FRAME_SAMPLES}-sample frames, got {len(frame)}")
        if self._resampler.skip_silence(frame) is not None:
            return False
        resampled = self._resampler.filtered(frame)
        if not np.count_nonzero(resampled):
            return False
        # In place (the array is ours): round half to even as np.round does, then clip to int16.
        np.rint(resampled, out=resampled)
        np.minimum(np.maximum(resampled, -32768.0, out=resampled), 32767.0, out=resampled)
        np.copyto(self._pcm16, resampled, casting="unsafe")  # whole numbers in range: exact
        return self._vad.is_speech(self._pcm16_bytes, _VAD_RATE)

    def update(self, frame: np.ndarray) -> bool:
        """Feed the next frame; returns the smoothed state after it."""
        return self.smooth(self.voiced(frame))

    def smooth(self, voiced: bool) -> bool:
        """Advance the smoothed state by one frame whose raw decision is ``voiced``."""
        if voiced:
            self._voiced_run += 1
            self._unvoiced_run = 0
            if not self.speaking and self._voiced_run >= self.onset_frames:
                self.speaking = True
        else:
            self._unvoiced_run += 1
            self._voiced_run = 0
            if self.speaking and self._unvoiced_run >= self.hangover_frames:
                self.speaking = False
        return self.speaking

    def reset(self) -> None:
        self._resampler.reset()
        self.speaking = False
        self._voiced_run = self._unvoiced_run = 0
