"""Band-limited resampling: lengths, pass band, no aliasing, streaming continuity."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.signal import firwin, upfirdn

from harness.audio.lowpass_taps import KAISER_LOWPASS
from harness.audio.resample import StreamingResampler, resample_clip
from tests.conftest import REPO

RATE = 24_000


def _tone(freq: float, seconds: float = 1.0) -> np.ndarray:
    return np.sin(2 * np.pi * freq * np.arange(int(RATE * seconds)) / RATE)


def _rms(x: np.ndarray) -> float:
    core = x[len(x) // 10 : -len(x) // 10]  # ignore filter edges
    return float(np.sqrt(np.mean(core**2)))


def _stream(resampler: StreamingResampler, x: np.ndarray, sizes: list[int]) -> np.ndarray:
    out, start, turn = [], 0, 0
    while start < len(x):
        size = sizes[turn % len(sizes)]
        out.append(resampler.process(x[start : start + size]))
        start, turn = start + size, turn + 1
    return np.concatenate(out)


@pytest.mark.parametrize(("src", "dst"), [(24_000, 16_000), (22_050, 24_000), (16_000, 24_000)])
def test_whole_clip_length_follows_the_ratio(src: int, dst: int) -> None:
    assert len(resample_clip(np.zeros(src), src, dst)) == dst


def test_streaming_gives_two_thirds_of_each_frame() -> None:
    resampler = StreamingResampler(24_000, 16_000)
    assert [len(resampler.process(np.ones(480))) for _ in range(5)] == [320] * 5


@pytest.mark.parametrize("streaming", [False, True])
def test_in_band_tone_passes_and_10khz_is_attenuated_over_40db(streaming: bool) -> None:
    def convert(x: np.ndarray) -> np.ndarray:
        if streaming:
            return _stream(StreamingResampler(RATE, 16_000), x, [480])
        return resample_clip(x, RATE, 16_000)

    passband = _rms(convert(_tone(1_000))) / _rms(_tone(1_000))
    alias = _rms(convert(_tone(10_000))) / _rms(_tone(10_000))
    assert abs(20 * np.log10(passband)) < 0.1
    assert 20 * np.log10(alias) < -40


@pytest.mark.parametrize(("src", "dst"), [(24_000, 16_000), (22_050, 24_000)])
def test_streaming_is_continuous_across_uneven_chunks(src: int, dst: int) -> None:
    x = np.random.default_rng(3).standard_normal(src)
    resampler = StreamingResampler(src, dst)
    streamed = _stream(resampler, x, [480, 7, 333, 1, 1000])
    up, down = resampler.up, resampler.down
    width = max(up, down)
    reference = upfirdn(firwin(20 * width + 1, 1 / width, window=("kaiser", 5.0)) * up, x, up, down)
    assert len(streamed) == -(-len(x) * up // down)
    assert np.allclose(streamed, reference[: len(streamed)], atol=1e-9)


def test_reset_restarts_the_stream() -> None:
    resampler = StreamingResampler(24_000, 16_000)
    frame = np.random.default_rng(1).standard_normal(480)
    first = resampler.process(frame)
    resampler.process(frame)
    resampler.reset()
    assert np.array_equal(resampler.process(frame), first)


def test_frames_through_silence_and_odd_chunks_match_the_whole_stream_filter() -> None:
    """Silent frames skip the filter and frame shapes reuse their plans; the output is the same."""
    rng = np.random.default_rng(5)
    chunks = [np.zeros(480), np.zeros(480), rng.standard_normal(480), np.zeros(480), np.zeros(480),
              rng.standard_normal(7), rng.standard_normal(480), rng.standard_normal(480), np.zeros(1),
              np.zeros(480), rng.standard_normal(480)]
    resampler = StreamingResampler(24_000, 16_000)
    streamed = np.concatenate([resampler.process(chunk) for chunk in chunks])
    x = np.concatenate(chunks)
    reference = upfirdn(firwin(61, 1 / 3, window=("kaiser", 5.0)) * 2, x, 2, 3)
    assert len(streamed) == -(-len(x) * 2 // 3)
    assert np.allclose(streamed, reference[: len(streamed)], atol=1e-9)


def test_resamplers_fed_the_same_frames_share_products_only_where_their_history_agrees() -> None:
    """Two streams over the same frames, one with other audio before them: each equals its own
    whole-stream filter; from the second frame on (same history) they are the same bits."""
    rng = np.random.default_rng(7)
    frames = [rng.standard_normal(480) for _ in range(4)]
    lead = rng.standard_normal(480)
    first, second = StreamingResampler(24_000, 16_000), StreamingResampler(24_000, 16_000)
    out_first, out_second = [], [second.process(lead)]
    for frame in frames:
        out = first.process(frame)
        out_first.append(out.copy())
        out[:] = 0  # the caller's to keep: writing it changes nothing shared
        out_second.append(second.process(frame))
    assert not np.allclose(out_first[0], out_second[1])  # other history: its own product
    assert all(np.array_equal(a, b) for a, b in zip(out_first[1:], out_second[2:], strict=True))
    taps = firwin(61, 1 / 3, window=("kaiser", 5.0)) * 2
    for x, streamed in ((np.concatenate(frames), out_first), (np.concatenate([lead, *frames]), out_second)):
        assert np.allclose(np.concatenate(streamed), upfirdn(taps, x, 2, 3)[: 320 * len(streamed)], atol=1e-9)


def test_silence_is_skipped_only_where_the_output_is_silent_and_the_stream_goes_on() -> None:
    rng = np.random.default_rng(8)
    sound, silence = rng.standard_normal(480), np.zeros(480)
    skipping, processing = StreamingResampler(24_000, 16_000), StreamingResampler(24_000, 16_000)
    out = []
    for chunk in (silence, sound, silence, silence, sound):
        expected = processing.process(chunk)
        skipped = skipping.skip_silence(chunk)
        # Declined (nothing consumed) for sound, and for the silence right after it (its history rings on).
        assert (skipped is None) == bool(expected.any())
        out.append(np.zeros(skipped) if skipped is not None else skipping.filtered(chunk))
        assert np.array_equal(out[-1], expected)


def test_the_returned_frame_is_the_callers_to_keep() -> None:
    resampler = StreamingResampler(24_000, 16_000)
    frame = np.random.default_rng(2).standard_normal(480)
    first = resampler.process(frame)
    kept = first.copy()
    resampler.process(frame)
    assert np.array_equal(first, kept)  # not a view of the reused buffer


@pytest.mark.parametrize("max_rate", sorted(KAISER_LOWPASS))
def test_the_shipped_lowpass_prototypes_are_firwins_bit_for_bit(max_rate: int) -> None:
    designed = firwin(20 * max_rate + 1, 1 / max_rate, window=("kaiser", 5.0))
    shipped = np.array(KAISER_LOWPASS[max_rate])
    assert shipped.tobytes() == designed.tobytes(), f"regenerate harness/audio/lowpass_taps.py: {tuple(designed.tolist())}"


def test_a_voice_activity_detector_is_built_without_scipy() -> None:
    probe = "import sys\nfrom harness.audio.vad import FrameVad\nFrameVad()\nprint('scipy.signal' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
