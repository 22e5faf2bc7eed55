"""C3 acoustics: determinism, measured SNR, μ-law error bound, packet-loss rate, spec parsing."""

from __future__ import annotations

import numpy as np
import pytest

from harness.audio.acoustics import (
    PRESETS,
    AcousticChain,
    AcousticsError,
    AcousticSpec,
    BabbleSpec,
    JitterSpec,
    NoiseSpec,
    PacketLossSpec,
    ReverbSpec,
    TelephoneSpec,
    loss_pattern,
    mulaw_decode,
    mulaw_encode,
    room_impulse_response,
)
from harness.audio.clip import Clip
from harness.audio.frames import FRAME_SAMPLES, SAMPLE_RATE


def _speechlike(seconds: float, seed: int) -> np.ndarray:
    """A vowel-ish harmonic signal with a syllable envelope (never zero for long)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    f0 = 110 + 30 * rng.random()
    voiced = sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, 12))
    envelope = 0.55 + 0.45 * np.sin(2 * np.pi * 4 * t) ** 2
    return np.round(voiced * envelope * 4000).astype(np.int16)


def _chain(*processors) -> AcousticChain:
    return AcousticChain(AcousticSpec(processors=list(processors)))


def _snr_db(clean: np.ndarray, degraded: np.ndarray) -> float:
    s = clean.astype(np.float64)
    noise = degraded.astype(np.float64) - s
    return 10 * np.log10(np.sum(s * s) / np.sum(noise * noise))


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_is_byte_identical_on_a_rerun_and_keeps_the_length(preset):
    clip = _speechlike(2.0, 1)
    pool = [_speechlike(1.5, 2), _speechlike(2.5, 3)]
    first = AcousticChain.from_preset(preset).apply(clip, seed=7, text="hello", babble_pool=pool)
    second = AcousticChain.from_preset(preset).apply(clip, seed=7, text="hello", babble_pool=pool)
    assert first.dtype == np.int16 and len(first) == len(clip)
    assert first.tobytes() == second.tobytes()
    if preset != "clean":
        assert not np.array_equal(first, clip)


def test_the_seed_and_the_clip_text_both_change_the_noise():
    clip = _speechlike(1.0, 1)
    chain = _chain(NoiseSpec(name="white_noise", snr_db=10))
    base = chain.apply(clip, seed=1, text="a")
    assert not np.array_equal(base, chain.apply(clip, seed=2, text="a"))
    assert not np.array_equal(base, chain.apply(clip, seed=1, text="b"))


@pytest.mark.parametrize("name", ["white_noise", "pink_noise"])
@pytest.mark.parametrize("snr_db", [0.0, 10.0, 20.0, 30.0])
def test_synthetic_noise_lands_within_half_a_db_of_the_target(name, snr_db):
    clip = _speechlike(2.0, 4)
    degraded = _chain(NoiseSpec(name=name, snr_db=snr_db)).apply(clip, seed=3, text="x")
    assert abs(_snr_db(clip, degraded) - snr_db) < 0.5


@pytest.mark.parametrize("snr_db", [5.0, 15.0])
def test_babble_lands_within_half_a_db_and_is_made_of_the_other_clips(snr_db):
    clip = _speechlike(2.0, 5)
    pool = [_speechlike(1.0, 6), _speechlike(3.0, 7)]
    chain = _chain(BabbleSpec(snr_db=snr_db, talkers=3))
    degraded = chain.apply(clip, seed=1, text="x", babble_pool=pool)
    assert abs(_snr_db(clip, degraded) - snr_db) < 0.5
    with pytest.raises(AcousticsError, match="babble needs other clips"):
        chain.apply(clip, seed=1, text="x")


def test_degrade_clips_mixes_other_clips_and_does_not_depend_on_their_order():
    texts = ["one", "two", "three"]
    clips = {t: Clip(_speechlike(1.0 + i / 4, i), t, "test") for i, t in enumerate(texts)}
    chain = AcousticChain.from_preset("moderate")
    forward = chain.degrade_clips(clips, seed=9)
    backward = chain.degrade_clips(dict(reversed(list(clips.items()))), seed=9)
    for text in texts:
        assert forward[text].pcm.tobytes() == backward[text].pcm.tobytes()
        assert forward[text].source == "test+acoustics:moderate"
        assert forward[text].text == text


def test_mulaw_round_trip_error_is_within_half_a_companded_step():
    x = np.linspace(-1.0, 1.0, 200_001)
    decoded = mulaw_decode(mulaw_encode(x))
    # dx/dy = ln(1+μ)/μ · (1+μ|x|) grows by at most 256^(1/254) over half a code step (1/254 in y).
    bound = 0.5 / 127 * np.log1p(255) / 255 * (1 + 255 * np.abs(x)) * 256 ** (0.5 / 127)
    assert np.all(np.abs(decoded - x) <= bound)
    assert mulaw_encode(np.array([0.0]))[0] == 0 and mulaw_decode(np.array([0], dtype=np.int8))[0] == 0.0
    assert mulaw_encode(np.array([-1.0, 1.0])).tolist() == [-127, 127]


def test_telephone_removes_the_band_above_4_khz_and_keeps_speech_band():
    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    low = np.sin(2 * np.pi * 1000 * t) * 8000
    high = np.sin(2 * np.pi * 6000 * t) * 8000
    out_low = _chain(TelephoneSpec(codec="none")).apply(np.round(low).astype(np.int16), seed=1)
    out_high = _chain(TelephoneSpec()).apply(np.round(high).astype(np.int16), seed=1)
    middle = slice(2400, -2400)
    assert np.std(out_low[middle]) / np.std(low[middle]) > 0.9
    assert np.std(out_high[middle].astype(np.float64)) / np.std(high[middle]) < 0.01


@pytest.mark.parametrize("burst", [1.0, 3.0])
def test_packet_loss_rate_measured_over_many_packets_matches_the_spec(burst):
    spec = PacketLossSpec(rate=0.1, mean_burst_frames=burst)
    lost = loss_pattern(spec, 50_000, np.random.default_rng(11))
    assert abs(lost.mean() - 0.1) < 0.01
    runs = np.diff(np.flatnonzero(np.diff(np.concatenate(([0], lost.astype(int), [0])))))[::2]
    assert abs(runs.mean() - burst) < 0.25


def test_lost_packets_are_silent_without_concealment_and_repeated_with_it():
    clip = _speechlike(20.0, 8)
    zeroed = _chain(PacketLossSpec(rate=0.2, concealment="zero")).apply(clip, seed=4, text="t")
    frames = zeroed[: len(clip) // FRAME_SAMPLES * FRAME_SAMPLES].reshape(-1, FRAME_SAMPLES)
    silent = ~frames.any(axis=1)
    assert abs(silent.mean() - 0.2) < 0.03
    kept = frames[~silent]
    original = clip[: len(frames) * FRAME_SAMPLES].reshape(-1, FRAME_SAMPLES)[~silent]
    assert np.array_equal(kept, original)  # received packets are untouched
    repeated = _chain(PacketLossSpec(rate=0.2, concealment="repeat")).apply(clip, seed=4, text="t")
    first_lost = int(np.flatnonzero(silent[1:])[0]) + 1
    span = slice(first_lost * FRAME_SAMPLES, (first_lost + 1) * FRAME_SAMPLES)
    before = slice((first_lost - 1) * FRAME_SAMPLES, first_lost * FRAME_SAMPLES)
    if not silent[first_lost - 1]:
        assert np.array_equal(repeated[span], np.round(clip[before] * 0.5).astype(np.int16))


def test_jitter_only_inserts_gaps_and_drops_samples_at_packet_boundaries():
    ramp = np.arange(1, SAMPLE_RATE + 1).astype(np.int16)  # every sample distinct, non-zero
    out = _chain(JitterSpec(std_ms=4.0, fill="zero")).apply(ramp, seed=2, text="j")
    assert len(out) == len(ramp)
    played = out[out != 0]
    assert len(played) < len(ramp) and len(played) > 0.8 * len(ramp)
    # What plays is the input in order, with pieces missing: strictly increasing within the ramp.
    assert np.all(np.diff(played.astype(int)) > 0)


def test_reverb_response_has_the_requested_direct_to_reverb_ratio_and_decay():
    spec = ReverbSpec(rt60_s=0.5, drr_db=3.0, predelay_ms=0)
    response = room_impulse_response(spec, np.random.default_rng(1))
    tail = response[1:]
    assert abs(10 * np.log10(1.0 / np.sum(tail**2)) - 3.0) < 1e-9
    quarter = len(tail) // 4
    early, late = np.sum(tail[:quarter] ** 2), np.sum(tail[-quarter:] ** 2)
    assert 10 * np.log10(early / late) > 30


def test_specs_parse_from_presets_compact_text_and_files(tmp_path):
    assert AcousticChain.parse("moderate").spec.preset == "moderate"
    chain = AcousticChain.parse("reverb:rt60_s=0.5+babble:snr_db=10,talkers=3+telephone:codec=none")
    assert [p.name for p in chain.spec.processors] == ["reverb", "babble", "telephone"]
    assert chain.spec.processors[1].talkers == 3 and chain.label() == "reverb+babble+telephone"
    spec_file = tmp_path / "room.yaml"
    spec_file.write_text("- {name: pink_noise, snr_db: 12}\n- {name: jitter, std_ms: 3}\n")
    from_file = AcousticChain.parse(str(spec_file))
    assert [p.name for p in from_file.spec.processors] == ["pink_noise", "jitter"]
    recorded = from_file.spec.model_dump(mode="json")
    assert AcousticSpec.model_validate(recorded) == from_file.spec


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("stormy", "unknown processor 'stormy'"),
        ("babble:snr_db=100", "snr_db"),
        ("reverb:rt60", "not key=value"),
        ("packet_loss:rate=0.1,colour=red", "colour"),
    ],
)
def test_bad_specs_give_one_clear_line(text, message):
    with pytest.raises(AcousticsError, match=message):
        AcousticChain.parse(text)
    with pytest.raises(AcousticsError, match="unknown acoustics preset 'stormy'"):
        AcousticChain.from_preset("stormy")
