"""PCM16 conversion as published, digests, and clip file I/O."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from harness.audio.audio_files import AudioFileError, read_pcm16, write_pcm16
from harness.audio.pcm import float_to_pcm16, pcm16_sha256, pcm16_to_float


def test_published_decoding_reproduces_every_int16_value() -> None:
    q = np.arange(-32767, 32768, dtype=np.int16)
    assert np.array_equal(float_to_pcm16(pcm16_to_float(q)), q)


def test_float_to_pcm16_clips_and_truncates_toward_zero() -> None:
    x = np.array([2.0, -2.0, 0.99999, -0.99999, 1.5 / 32767, -1.5 / 32767, 0.0])
    assert float_to_pcm16(x).tolist() == [32767, -32767, 32766, -32766, 1, -1, 0]


def test_pcm16_sha256_hashes_little_endian_sample_bytes() -> None:
    import hashlib

    pcm = np.array([1, -2, 300], dtype=np.int16)
    assert pcm16_sha256(pcm) == hashlib.sha256(b"\x01\x00\xfe\xff\x2c\x01").hexdigest()


@pytest.mark.parametrize("suffix", [".flac", ".wav"])
def test_clip_round_trip_is_lossless(tmp_path, suffix: str) -> None:
    pcm = np.random.default_rng(7).integers(-32768, 32767, 24_000, dtype=np.int16)
    path = write_pcm16(tmp_path / f"clip{suffix}", pcm)
    assert np.array_equal(read_pcm16(path), pcm)
    assert [p.name for p in tmp_path.iterdir()] == [f"clip{suffix}"]  # no temp file left behind


def test_stereo_round_trip_keeps_channels(tmp_path) -> None:
    pcm = np.stack([np.arange(100, dtype=np.int16), -np.arange(100, dtype=np.int16)], axis=1)
    assert np.array_equal(read_pcm16(write_pcm16(tmp_path / "s.wav", pcm)), pcm)


def test_wrong_sample_rate_is_an_error_naming_the_file(tmp_path) -> None:
    path = tmp_path / "sixteen.flac"
    sf.write(path, np.zeros(160, dtype=np.int16), 16_000, subtype="PCM_16")
    with pytest.raises(AudioFileError, match=r"sixteen\.flac.*16000 Hz"):
        read_pcm16(path)


def test_unsupported_suffix_and_dtype_are_rejected(tmp_path) -> None:
    with pytest.raises(AudioFileError, match=r"\.mp3"):
        write_pcm16(tmp_path / "x.mp3", np.zeros(10, dtype=np.int16))
    with pytest.raises(AudioFileError, match="int16"):
        write_pcm16(tmp_path / "x.wav", np.zeros(10, dtype=np.float32))
