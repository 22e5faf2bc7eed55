"""Band-limited resampling at the edges (providers or VADs that want another rate).

Whole clips use ``scipy.signal.resample_poly``. Per-frame edge use needs the same polyphase
filter without redesigning it on every call (214 µs per frame) and without discontinuities at
frame boundaries, so :class:`StreamingResampler` designs the filter once and keeps the input
history between frames. A frame shape's input windows are laid out once too (a plan of strided
views over one reused buffer), so a 24k→16k frame is a single matrix product (≈9 µs, was ≈35 µs).
A product depends only on the ratio, the input's phase, the history and the chunk, so resamplers
fed the same audio — a session runs several VADs over one channel — compute each chunk once and
share it (``_RecentProducts``). Linear interpolation aliases (−4 dB image) and is never used.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from math import gcd

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .lowpass_taps import KAISER_LOWPASS

__all__ = ["StreamingResampler", "resample_clip"]

_KAISER_BETA = 5.0  # scipy.signal.resample_poly's default window
_HALF_LEN_PER_RATE = 10  # ditto: half filter length = 10 × max(up, down)


@dataclass(frozen=True, slots=True)
class _Plan:
    """How one chunk shape is filtered: ``out[...] = windows @ taps`` per step, windows viewing ``buffer``."""

    buffer: np.ndarray  # history + chunk, refilled on every call
    out: np.ndarray
    steps: list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # (input windows, taps, output view)


class _RecentProducts:
    """The last few chunks filtered in this process, with everything their output depends on.

    An entry answers only a resampler of the same ratio at the same input phase whose history and
    chunk are byte for byte those it was computed from, so a hit is exactly the product that
    resampler would have computed. The VADs of one channel filter the same frame within one session
    frame, so a handful of entries is enough; they are compared as bytes (a hash of the chunk would
    cost more than the search).
    """

    def __init__(self, size: int = 4) -> None:
        self._size = size
        self._entries: list[tuple[tuple[int, int, int], np.dtype, bytes, bytes, np.ndarray, np.ndarray]] = []

    def get(self, ratio: tuple[int, int, int], dtype: np.dtype, chunk: bytes,
            history: bytes) -> tuple[np.ndarray, np.ndarray] | None:
        """(output, history after) of ``chunk`` at ``ratio`` = (up, down, phase) after ``history``, if recent."""
        for entry in self._entries:
            if entry[2] == chunk and entry[3] == history and entry[0] == ratio and entry[1] == dtype:
                return entry[4], entry[5]
        return None

    def put(self, ratio: tuple[int, int, int], dtype: np.dtype, chunk: bytes, history: bytes,
            out: np.ndarray, history_after: np.ndarray) -> None:
        """Keep ``out`` (copied) and ``history_after`` (never written: resamplers replace their history)."""
        if len(self._entries) >= self._size:
            self._entries.pop()
        self._entries.insert(0, (ratio, dtype, chunk, history, out.copy(), history_after))


_RECENT = _RecentProducts()


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
    from scipy.signal import resample_poly  # loaded on first use (a second of imports: C0 never needs it)

    return resample_poly(x, up, down)


@functools.lru_cache(maxsize=16)
def _phase_filters(up: int, down: int) -> np.ndarray:
    """The polyphase filter bank of one ratio, designed once per process (``firwin`` costs tens of
    ms, and every session makes several resamplers). Row p is phase p's filter h[p], h[p + up], ...
    reversed, to dot with an input window that ends at the newest sample."""
    max_rate = max(up, down)
    half_len = _HALF_LEN_PER_RATE * max_rate
    taps = _lowpass(max_rate, 2 * half_len + 1) * up
    taps_per_phase = -(-len(taps) // up)
    padded = np.zeros(taps_per_phase * up)
    padded[: len(taps)] = taps
    phases = padded.reshape(taps_per_phase, up).T[:, ::-1].copy()
    phases.setflags(write=False)
    return phases


def _lowpass(max_rate: int, numtaps: int) -> np.ndarray:
    """``firwin``'s Kaiser low-pass at 1/``max_rate``: shipped for the harness's own ratios."""
    shipped = KAISER_LOWPASS.get(max_rate)
    if shipped is not None and len(shipped) == numtaps:
        return np.array(shipped)
    from scipy.signal import firwin  # a second of imports, for a ratio the table does not hold

    return firwin(numtaps, 1.0 / max_rate, window=("kaiser", _KAISER_BETA))


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
        half_len = _HALF_LEN_PER_RATE * max(self.up, self.down)
        self._phases = _phase_filters(self.up, self.down)  # shared, never written
        taps_per_phase = self._taps_per_phase = self._phases.shape[1]
        self._history = np.zeros(taps_per_phase - 1)  # zeros = silence before the stream
        self._consumed = 0  # input samples seen so far
        self._emitted = 0  # output samples produced so far
        self._plan_key: tuple[int, int] | None = None
        self._plan: _Plan | None = None
        self.delay_samples = half_len / self.down

    def skip_silence(self, samples: np.ndarray) -> int | None:
        """Silence in, silence out: if ``samples`` and the history are all zeros, consume them without
        the filter and return how many (zero) outputs they make; otherwise consume nothing (``None``).

        The common case on an idle channel; a caller that only needs to know the output is silent
        (a VAD) is spared allocating it.
        """
        if np.count_nonzero(samples) or np.count_nonzero(self._history):  # cheaper than .any()
            return None
        self._consumed += len(samples)
        end = -(-self._consumed * self.up // self.down)
        count, self._emitted = end - self._emitted, end
        return count

    def process(self, samples: np.ndarray) -> np.ndarray:
        """Resample the next chunk of input (float64 out, same scale as the input)."""
        x = np.asarray(samples)
        silent = self.skip_silence(x)
        return np.zeros(silent) if silent is not None else self.filtered(x)

    def filtered(self, samples: np.ndarray) -> np.ndarray:
        """The next chunk through the filter: :meth:`process` once :meth:`skip_silence` declined it."""
        x = np.asarray(samples)
        residue = self._consumed % self.down
        ratio, chunk, history_bytes = (self.up, self.down, residue), x.tobytes(), self._history.tobytes()
        self._consumed += len(x)
        recent = _RECENT.get(ratio, x.dtype, chunk, history_bytes)
        if recent is not None:
            out, self._history = recent
            self._emitted += len(out)
            return out.copy()
        key = (len(x), residue)
        plan = self._plan
        if plan is None or key != self._plan_key:
            plan = self._plan = self._make_plan(*key)
            self._plan_key = key
        history = len(self._history)
        plan.buffer[:history] = self._history
        plan.buffer[history:] = x
        for windows, taps, target in plan.steps:
            np.matmul(windows, taps, out=target)
        self._history = plan.buffer[len(plan.buffer) - history :].copy()
        _RECENT.put(ratio, x.dtype, chunk, history_bytes, plan.out, self._history)
        self._emitted += len(plan.out)
        return plan.out.copy()

    def _make_plan(self, length: int, residue: int) -> _Plan:
        """Buffer, windows and filters for a ``length``-sample chunk after ``residue`` (mod ``down``) inputs.

        Where each output's window starts and which phase it uses depends only on that pair, so a
        stream of equal frames builds its plan once and refills the same buffer under the same views.
        """
        history, taps_per_phase = len(self._history), self._taps_per_phase
        buffer = np.zeros(history + length)
        step = self.down * buffer.itemsize
        emitted = -(-residue * self.up // self.down)
        out = np.empty(-(-(residue + length) * self.up // self.down) - emitted)
        buffer_start = residue - history  # input index of buffer[0], counting from ``residue``'s origin
        # Outputs j, j + up, j + 2·up, ... share a phase and step through the input by ``down``.
        firsts, phases = [], []
        for offset in range(min(self.up, len(out))):
            position = (emitted + offset) * self.down
            firsts.append(position // self.up - buffer_start - taps_per_phase + 1)
            phases.append(self._phases[position % self.up])
        if len(out) and len(out) % self.up == 0 and firsts[-1] - firsts[0] < taps_per_phase:
            # Every row of ``up`` outputs reads one window: a single product fills the frame (for
            # ratios like 3:2, where the phases' windows nearly coincide, so padding costs little).
            # Its sums run in another order than one product per phase: last-bit differences only.
            width = firsts[-1] - firsts[0] + taps_per_phase
            taps = np.zeros((width, self.up))
            for offset, (first, phase) in enumerate(zip(firsts, phases, strict=True)):
                taps[first - firsts[0] : first - firsts[0] + taps_per_phase, offset] = phase
            windows = as_strided(buffer[firsts[0] :], shape=(len(out) // self.up, width),
                                 strides=(step, buffer.itemsize), writeable=False)
            steps = [(windows, taps, out.reshape(-1, self.up))]
        else:
            steps = [
                (as_strided(buffer[first:], shape=(len(range(offset, len(out), self.up)), taps_per_phase),
                            strides=(step, buffer.itemsize), writeable=False), phase, out[offset :: self.up])
                for offset, (first, phase) in enumerate(zip(firsts, phases, strict=True))
            ]
        return _Plan(buffer, out, steps)

    def reset(self) -> None:
        self._history = np.zeros(self._taps_per_phase - 1)
        self._consumed = self._emitted = 0
