"""Band-limited resampling at the edges (providers or VADs that want another rate).

Whole clips use ``scipy.signal.resample_poly``. Per-frame edge use needs the same polyphase
filter without redesigning it on every call (214 µs per frame) and without discontinuities at
frame boundaries, so :class:`StreamingResampler` designs the filter once and keeps the input
history between frames. Linear interpolation aliases (−4 dB image) and is never used.
"""

from __future__ import annotations

from math import gcd

import numpy as np
from scipy.signal import firwin, resample_poly, upfirdn

__all__ = ["StreamingResampler", "resample_clip"]

_KAISER_BETA = 5.0  # scipy.signal.resample_poly's default window
_HALF_LEN_PER_RATE = 10  # ditto: half filter length = 10 × max(up, down)


def _ratio(from_rate: int, to_rate: int) -> tuple[int, int]:
    if from_rate <= 0 or to_rate <= 0:
        raise ValueError(f"sample rates must be positive, got {from_rate} → {to_rate}")
    divisor = gcd(from_rate, to_rate)
    return to_rate // divisor, from_rate // divisor


def resample_clip(samples: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """A whole clip resampled with a polyphase FIR (float64 out; int16 input is not rescaled)."""
    up, down = _ratio(from_rate, to_rate)
    x = np.asarray(samples, dtype=np.float64)
    if up == down:
        return x.copy()
    return resample_poly(x, up, down)


class StreamingResampler:
    """Frame-by-frame polyphase resampler with a filter designed once.

    The output is continuous across frames (the input history is kept) and delayed by the filter's
    group delay (``delay_samples`` at the output rate, under 1 ms for 24k→16k). Every call returns
    exactly the outputs whose newest input has arrived, so N input samples give N·up/down outputs
    on average, and whole frames give a fixed count when ``frame·up`` divides by ``down``.
    """

    def __init__(self, from_rate: int, to_rate: int) -> None:
        self.from_rate, self.to_rate = from_rate, to_rate
        self.up, self.down = _ratio(from_rate, to_rate)
        max_rate = max(self.up, self.down)
        half_len = _HALF_LEN_PER_RATE * max_rate
        taps = firwin(2 * half_len + 1, 1.0 / max_rate, window=("kaiser", _KAISER_BETA)) * self.up
        self._taps = taps
        #: History long enough for the filter plus alignment slack (zeros = silence before the stream).
        self._history_len = -(-len(taps) // self.up) + self.down
        self._history = np.zeros(self._history_len)
        self._consumed = 0  # input samples seen so far
        self._emitted = 0  # output samples produced so far
        self.delay_samples = half_len / self.down

    def process(self, samples: np.ndarray) -> np.ndarray:
        """Resample the next chunk of input (float64 out, same scale as the input)."""
        x = np.asarray(samples, dtype=np.float64)
        buffer = np.concatenate((self._history, x))
        buffer_start = self._consumed - self._history_len  # global input index of buffer[0]
        # upfirdn's output m sits at up-rate index (start·up + m·down): start ≡ 0 (mod down) aligns
        # it with output j = start·up/down + m (up and down are coprime).
        skip = (-buffer_start) % self.down
        start = buffer_start + skip
        self._consumed += len(x)
        end = -(-self._consumed * self.up // self.down)  # outputs whose newest input has arrived
        first = start * self.up // self.down
        out = upfirdn(self._taps, buffer[skip:], self.up, self.down)[self._emitted - first : end - first]
        self._emitted = end
        self._history = buffer[len(buffer) - self._history_len :]
        return out

    def reset(self) -> None:
        self._history = np.zeros(self._history_len)
        self._consumed = self._emitted = 0
