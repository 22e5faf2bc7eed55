"""Condition C3: the user channel through seeded, reproducible acoustic degradations.

A chain of small named processors (noise at a set SNR, room reverberation, telephone band and
μ-law codec, packet loss, jitter) is applied to each whole user clip before the session clock
starts. Every processor draws its randomness from a generator seeded by (session seed, clip text,
processor position and name), so a rerun sends exactly the same samples, and one clip's
degradation never depends on which other clips were rendered before it.

Every processor keeps the clip's length: the session's timeline (utterance durations, word
timings) is the same as in C2, only the samples differ. Processors work on float64 samples in
PCM16 units; the chain quantizes to int16 once, at the end. See ``docs/conditions.md``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .clip import Clip
from .frames import FRAME_MS, SAMPLE_RATE, ms_to_samples
from .resample import resample_clip

__all__ = [
    "PRESETS",
    "AcousticChain",
    "AcousticSpec",
    "AcousticsError",
    "BabbleSpec",
    "JitterSpec",
    "NoiseSpec",
    "PacketLossSpec",
    "ProcessorSpec",
    "ReverbSpec",
    "TelephoneSpec",
    "mulaw_decode",
    "mulaw_encode",
    "processor_seed",
]

#: Bump when any processor's output for the same spec and seed changes.
ACOUSTICS_VERSION = 1
_TELEPHONE_RATE = 8_000
_MU = 255.0
_MULAW_LEVELS = 127  # codes -127..127: G.711's 8 bits with one zero


class AcousticsError(ValueError):
    """An acoustics spec that cannot be used (unknown preset or processor, bad parameter)."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NoiseSpec(_Spec):
    """Stationary synthetic noise added at ``snr_db`` (clip power over noise power)."""

    name: Literal["white_noise", "pink_noise"]
    snr_db: float = Field(ge=-10, le=60)


class BabbleSpec(_Spec):
    """Crowd noise: ``talkers`` other clips of the same session, each at a random offset, looped."""

    name: Literal["babble"] = "babble"
    snr_db: float = Field(ge=-10, le=60)
    talkers: int = Field(default=4, ge=1, le=16)


class ReverbSpec(_Spec):
    """A room: direct path plus an exponentially decaying noise tail (RT60, direct-to-reverb ratio)."""

    name: Literal["reverb"] = "reverb"
    rt60_s: float = Field(default=0.4, gt=0, le=3)
    drr_db: float = Field(default=6.0, ge=-20, le=40)
    predelay_ms: float = Field(default=5.0, ge=0, le=100)


class TelephoneSpec(_Spec):
    """Narrowband telephone: 8 kHz, 300–3400 Hz, optionally through a μ-law (G.711-style) codec."""

    name: Literal["telephone"] = "telephone"
    codec: Literal["mulaw", "none"] = "mulaw"
    low_hz: float = Field(default=300.0, ge=0, lt=4000)
    high_hz: float = Field(default=3400.0, gt=0, lt=4000)


class PacketLossSpec(_Spec):
    """Dropped ``frame_ms`` packets (Gilbert model: ``mean_burst_frames`` 1 = independent losses).

    ``concealment``: ``zero`` plays silence for a lost packet; ``repeat`` replays the previous
    packet, halved in level for each further loss in a row (a simple packet-loss concealment).
    """

    name: Literal["packet_loss"] = "packet_loss"
    rate: float = Field(ge=0, lt=1)
    mean_burst_frames: float = Field(default=1.0, ge=1)
    frame_ms: int = Field(default=FRAME_MS, ge=5, le=120)
    concealment: Literal["zero", "repeat"] = "repeat"


class JitterSpec(_Spec):
    """Packet timing jitter as a back-to-back receiver hears it (see :func:`_jitter`)."""

    name: Literal["jitter"] = "jitter"
    std_ms: float = Field(gt=0, le=50)
    correlation: float = Field(default=0.9, ge=0, lt=1)
    frame_ms: int = Field(default=FRAME_MS, ge=5, le=120)
    fill: Literal["zero", "repeat"] = "repeat"


ProcessorSpec = Annotated[
    NoiseSpec | BabbleSpec | ReverbSpec | TelephoneSpec | PacketLossSpec | JitterSpec,
    Field(discriminator="name"),
]
_PROCESSOR = TypeAdapter(ProcessorSpec)


class AcousticSpec(_Spec):
    """What ``result.json`` records: the chain in order, the preset it came from, the version."""

    preset: str | None = None
    processors: list[ProcessorSpec] = Field(default_factory=list)
    version: int = ACOUSTICS_VERSION


PRESETS: dict[str, tuple[Any, ...]] = {
    "clean": (),
    "light": (ReverbSpec(rt60_s=0.3, drr_db=10.0), NoiseSpec(name="pink_noise", snr_db=25.0)),
    "moderate": (ReverbSpec(rt60_s=0.3, drr_db=8.0), BabbleSpec(snr_db=15.0), TelephoneSpec()),
    "telephone": (TelephoneSpec(),),
    "lossy": (TelephoneSpec(), PacketLossSpec(rate=0.05, mean_burst_frames=2.0), JitterSpec(std_ms=4.0)),
    "harsh": (
        ReverbSpec(rt60_s=0.7, drr_db=2.0),
        BabbleSpec(snr_db=5.0, talkers=6),
        TelephoneSpec(),
        PacketLossSpec(rate=0.03),
        JitterSpec(std_ms=5.0),
    ),
}


def processor_seed(session_seed: int, clip_text: str, position: int, name: str) -> int:
    """A 64-bit seed that depends only on the session seed, the clip's text and the processor."""
    key = json.dumps([session_seed, clip_text, position, name], ensure_ascii=False).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "little")


# -- processors (float64 in PCM16 units → same) ----------------------------------------------------


def _power(x: np.ndarray) -> float:
    return float(np.mean(x * x)) if len(x) else 0.0


def _at_snr(signal: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    """``signal + noise`` with the noise scaled so that P(signal)/P(noise) is ``snr_db``."""
    signal_power, noise_power = _power(signal), _power(noise)
    if signal_power == 0 or noise_power == 0:
        return signal.copy()
    return signal + noise * np.sqrt(signal_power / (noise_power * 10 ** (snr_db / 10)))


def _pink(n: int, rng: np.random.Generator) -> np.ndarray:
    """1/f noise by spectral shaping of white noise (exact slope, no filter state), made at a
    fast FFT length and cut to ``n`` (a clip length with a large prime factor is slow)."""
    from scipy.fft import next_fast_len  # scipy loads on first use: C0 and results never pay for it

    size = next_fast_len(max(n, 2), real=True)
    spectrum = np.fft.rfft(rng.standard_normal(size))
    freqs = np.fft.rfftfreq(size)
    freqs[0] = freqs[1]
    return np.fft.irfft(spectrum / np.sqrt(freqs), size)[:n]


def _noise(x: np.ndarray, spec: NoiseSpec, rng: np.random.Generator, pool: Sequence[np.ndarray]) -> np.ndarray:
    noise = rng.standard_normal(len(x)) if spec.name == "white_noise" else _pink(len(x), rng)
    return _at_snr(x, noise, spec.snr_db)


def _babble(x: np.ndarray, spec: BabbleSpec, rng: np.random.Generator, pool: Sequence[np.ndarray]) -> np.ndarray:
    voices = [p for p in pool if len(p)]
    if not voices:
        raise AcousticsError("babble needs other clips of the session to mix (none given)")
    noise = np.zeros(len(x))
    for _ in range(spec.talkers):
        voice = voices[int(rng.integers(len(voices)))]
        looped = np.resize(voice, len(x) + len(voice))
        start = int(rng.integers(len(voice)))
        talker = looped[start : start + len(x)]
        noise += talker / np.sqrt(_power(talker) or 1.0)  # every talker equally loud
    return _at_snr(x, noise, spec.snr_db)


def room_impulse_response(spec: ReverbSpec, rng: np.random.Generator) -> np.ndarray:
    """Unit direct path, then Gaussian noise decaying 60 dB over ``rt60_s``, scaled to ``drr_db``."""
    predelay = ms_to_samples(int(round(spec.predelay_ms)))
    tail_len = int(spec.rt60_s * SAMPLE_RATE)
    decay = np.exp(-6.9078 * np.arange(tail_len) / tail_len)  # ln(1000): −60 dB at rt60
    tail = rng.standard_normal(tail_len) * decay
    tail *= np.sqrt(10 ** (-spec.drr_db / 10) / np.sum(tail * tail))
    response = np.zeros(1 + predelay + tail_len)
    response[0] = 1.0
    response[1 + predelay :] = tail
    return response


def _reverb(x: np.ndarray, spec: ReverbSpec, rng: np.random.Generator, pool: Sequence[np.ndarray]) -> np.ndarray:
    from scipy.signal import oaconvolve

    wet = oaconvolve(x, room_impulse_response(spec, rng))[: len(x)]
    # Keep the clip's level: a room adds energy, a level change is not what C3 measures.
    return wet * np.sqrt(_power(x) / (_power(wet) or 1.0))


def mulaw_encode(x: np.ndarray) -> np.ndarray:
    """Samples in [-1, 1] → μ-law codes in -127..127 (continuous μ=255 companding, 8 bits)."""
    clipped = np.clip(x, -1.0, 1.0)
    companded = np.sign(clipped) * np.log1p(_MU * np.abs(clipped)) / np.log1p(_MU)
    return np.round(companded * _MULAW_LEVELS).astype(np.int8)


def mulaw_decode(codes: np.ndarray) -> np.ndarray:
    """μ-law codes → samples in [-1, 1]."""
    y = codes.astype(np.float64) / _MULAW_LEVELS
    return np.sign(y) * np.expm1(np.abs(y) * np.log1p(_MU)) / _MU


def _telephone(x: np.ndarray, spec: TelephoneSpec, rng: np.random.Generator, pool: Sequence[np.ndarray]) -> np.ndarray:
    if spec.low_hz >= spec.high_hz:
        raise AcousticsError(f"telephone: low_hz {spec.low_hz} must be below high_hz {spec.high_hz}")
    from scipy.signal import butter, sosfilt

    narrow = resample_clip(x, SAMPLE_RATE, _TELEPHONE_RATE)
    band = butter(4, [max(spec.low_hz, 1.0), spec.high_hz], btype="bandpass", fs=_TELEPHONE_RATE, output="sos")
    narrow = sosfilt(band, narrow)
    if spec.codec == "mulaw":
        narrow = mulaw_decode(mulaw_encode(narrow / 32768.0)) * 32768.0
    wide = resample_clip(narrow, _TELEPHONE_RATE, SAMPLE_RATE)
    out = np.zeros(len(x))
    out[: min(len(x), len(wide))] = wide[: len(x)]
    return out


def _frames(n: int, frame_ms: int) -> tuple[int, int]:
    size = ms_to_samples(frame_ms)
    return size, -(-n // size)


def loss_pattern(spec: PacketLossSpec, count: int, rng: np.random.Generator) -> np.ndarray:
    """Which of ``count`` packets are lost: a two-state Gilbert chain with the spec's mean rate."""
    if spec.rate == 0:
        return np.zeros(count, dtype=bool)
    leave_bad = 1.0 / spec.mean_burst_frames
    enter_bad = min(1.0, spec.rate * leave_bad / (1.0 - spec.rate))
    draws = rng.random(count)
    lost = np.zeros(count, dtype=bool)
    bad = bool(rng.random() < spec.rate)  # start in the stationary distribution
    for k in range(count):
        lost[k] = bad
        bad = draws[k] >= leave_bad if bad else draws[k] < enter_bad
    return lost


def _packet_loss(x: np.ndarray, spec: PacketLossSpec, rng: np.random.Generator, pool: Sequence[np.ndarray]) -> np.ndarray:
    size, count = _frames(len(x), spec.frame_ms)
    lost = loss_pattern(spec, count, rng)
    out = x.copy()
    previous = np.zeros(size)
    gain = 1.0
    for k in range(count):
        start, end = k * size, min(len(x), (k + 1) * size)
        if lost[k]:
            gain = gain * 0.5 if spec.concealment == "repeat" else 0.0
            out[start:end] = previous[: end - start] * gain
        else:
            gain = 1.0
            previous = np.zeros(size)
            previous[: end - start] = x[start:end]
    return out


def _jitter(x: np.ndarray, spec: JitterSpec, rng: np.random.Generator, pool: Sequence[np.ndarray]) -> np.ndarray:
    """Packets played back to back as they arrive, with an AR(1) network delay per packet.

    A delay that grows by Δ samples from one packet to the next leaves a Δ-sample gap before it
    (silence, or a repeat of the Δ samples just played); one that shrinks by Δ makes the packet's
    first Δ samples late, and they are dropped (the receiver catches up). The result is cut or
    padded to the clip's length.
    """
    size, count = _frames(len(x), spec.frame_ms)
    innovation = rng.standard_normal(count) * spec.std_ms * np.sqrt(1 - spec.correlation**2)
    delay_ms = np.empty(count)
    level = rng.standard_normal() * spec.std_ms
    for k in range(count):
        level = spec.correlation * level + innovation[k]
        delay_ms[k] = level
    delays = np.round(delay_ms * SAMPLE_RATE / 1000).astype(int)
    pieces: list[np.ndarray] = []
    played = np.zeros(0)
    previous_delay = delays[0]
    for k in range(count):
        packet = x[k * size : (k + 1) * size]
        change = delays[k] - previous_delay
        previous_delay = delays[k]
        if change > 0:
            gap = np.resize(played[-change:], change) if spec.fill == "repeat" and len(played) else np.zeros(change)
            pieces.append(gap)
        elif change < 0:
            packet = packet[-change:]
        pieces.append(packet)
        played = packet if len(packet) else played
    joined = np.concatenate(pieces) if pieces else np.zeros(0)
    out = np.zeros(len(x))
    out[: min(len(x), len(joined))] = joined[: len(x)]
    return out


#: Each processor takes the spec of its own name (the spec union's discriminator), hence ``Any``.
_PROCESSORS: dict[str, Callable[[np.ndarray, Any, np.random.Generator, Sequence[np.ndarray]], np.ndarray]] = {
    "white_noise": _noise,
    "pink_noise": _noise,
    "babble": _babble,
    "reverb": _reverb,
    "telephone": _telephone,
    "packet_loss": _packet_loss,
    "jitter": _jitter,
}


# -- the chain ------------------------------------------------------------------------------------


class AcousticChain:
    """An ordered list of processors; ``apply`` degrades one clip, ``degrade_clips`` a session's."""

    def __init__(self, spec: AcousticSpec) -> None:
        self.spec = spec

    @classmethod
    def from_preset(cls, name: str) -> AcousticChain:
        try:
            processors = PRESETS[name]
        except KeyError:
            raise AcousticsError(f"unknown acoustics preset {name!r}; use one of {', '.join(PRESETS)}") from None
        return cls(AcousticSpec(preset=name, processors=list(processors)))

    @classmethod
    def parse(cls, text: str) -> AcousticChain:
        """``--acoustics`` value: a preset name, a ``.json``/``.yaml`` spec file, or a compact chain
        such as ``reverb:rt60_s=0.5+babble:snr_db=10,talkers=3+telephone``."""
        text = text.strip()
        if text in PRESETS:
            return cls.from_preset(text)
        path = Path(text)
        if path.suffix.lower() in (".json", ".yaml", ".yml"):
            return cls.from_file(path)
        processors = [_parse_processor(part) for part in text.split("+") if part.strip()]
        if not processors:
            raise AcousticsError(f"--acoustics {text!r}: empty chain (use a preset: {', '.join(PRESETS)})")
        return cls(AcousticSpec(processors=processors))

    @classmethod
    def from_file(cls, path: Path) -> AcousticChain:
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise AcousticsError(f"{path}: cannot read acoustics spec: {exc}") from None
        if isinstance(data, list):
            data = {"processors": data}
        try:
            return cls(AcousticSpec.model_validate(data))
        except ValidationError as exc:
            raise AcousticsError(f"{path}: invalid acoustics spec: {_first_error(exc)}") from None

    @property
    def is_clean(self) -> bool:
        return not self.spec.processors

    def identity_text(self) -> str:
        """The chain as a campaign's identity names it: its preset, else every processor with every parameter."""
        preset = self.spec.preset
        if preset in PRESETS and list(PRESETS[preset]) == self.spec.processors:
            return preset
        return "+".join(f"{p.name}:" + ",".join(f"{k}={v}" for k, v in sorted(p.model_dump(exclude={"name"}).items()))
                        for p in self.spec.processors) or "clean"

    def label(self) -> str:
        """Short name for logs and clip sources: the preset, else the processor names."""
        return self.spec.preset or "+".join(p.name for p in self.spec.processors) or "clean"

    def apply(
        self, pcm: np.ndarray, *, seed: int, text: str = "", babble_pool: Sequence[np.ndarray] = ()
    ) -> np.ndarray:
        """The degraded clip (int16, same length). ``seed`` is the session seed; ``text`` the clip's
        text (part of every processor's seed); ``babble_pool`` the other clips babble may mix."""
        if self.is_clean:
            return pcm.copy()
        x = np.asarray(pcm, dtype=np.float64)
        pool = [np.asarray(p, dtype=np.float64) for p in babble_pool]
        for position, processor in enumerate(self.spec.processors):
            rng = np.random.default_rng(processor_seed(seed, text, position, processor.name))
            x = _PROCESSORS[processor.name](x, processor, rng, pool)
        return np.clip(np.round(x), -32768, 32767).astype(np.int16)

    def degrade_clips(self, clips: Mapping[str, Clip], *, seed: int) -> dict[str, Clip]:
        """Every clip of a session degraded; babble for a clip mixes the *other* clips (in text
        order, so the result does not depend on the mapping's order)."""
        if self.is_clean:
            return dict(clips)
        samples = {text: clips[text].pcm.astype(np.float64) for text in sorted(clips)}  # converted once
        degraded: dict[str, Clip] = {}
        for text, clip in clips.items():
            pool = [pcm for other, pcm in samples.items() if other != text]
            pcm = self.apply(clip.pcm, seed=seed, text=text, babble_pool=pool)
            degraded[text] = replace(clip, pcm=pcm, source=f"{clip.source}+acoustics:{self.label()}")
        return degraded


def _parse_processor(part: str) -> Any:
    name, _, params = part.strip().partition(":")
    fields: dict[str, Any] = {"name": name.strip()}
    for pair in filter(None, (p.strip() for p in params.split(","))):
        key, sep, value = pair.partition("=")
        if not sep:
            raise AcousticsError(f"--acoustics: {pair!r} in {part!r} is not key=value")
        fields[key.strip()] = yaml.safe_load(value.strip())
    if fields["name"] not in _PROCESSORS:
        raise AcousticsError(f"--acoustics: unknown processor {fields['name']!r}; use one of {', '.join(_PROCESSORS)}")
    try:
        return _PROCESSOR.validate_python(fields)
    except ValidationError as exc:
        raise AcousticsError(f"--acoustics: {part!r}: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']} (got {error.get('input')!r})"
