"""G.711 μ-law bytes, as a telephone network carries them (Twilio's ``audio/x-mulaw``).

The C3 ``telephone`` preset companders with continuous μ=255 (``acoustics.mulaw_encode``): right
for degrading a clip, but not the byte format a peer decodes. A media-stream peer decodes with the
ITU-T G.711 segmented table (``audioop.ulaw2lin`` in Pipecat), so the wire needs that table's
bytes exactly: sign, 3-bit segment, 4-bit step, all inverted, PCM16 in and out.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ulaw_to_pcm16", "pcm16_to_ulaw"]

#: The reference encoder works on 14-bit samples: bias and clip at that scale.
_BIAS = 0x21
_CLIP = 8159
#: Upper end of each segment (biased 14-bit magnitude).
_SEGMENT_ENDS = np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF], dtype=np.int32)


def _decode_table() -> np.ndarray:
    codes = ~np.arange(256, dtype=np.int32) & 0xFF
    exponent = (codes >> 4) & 0x07
    magnitude = ((((codes & 0x0F) << 3) + 0x84) << exponent) - 0x84
    return np.where(codes & 0x80, -magnitude, magnitude).astype(np.int16)


#: Byte → PCM16 sample.
_DECODE = _decode_table()


def ulaw_to_pcm16(payload: bytes) -> np.ndarray:
    """μ-law bytes → int16 samples (one per byte)."""
    return _DECODE[np.frombuffer(payload, dtype=np.uint8)]


def pcm16_to_ulaw(samples: np.ndarray) -> bytes:
    """int16 samples → μ-law bytes, bit for bit as the G.711 reference encoder (and ``audioop``)."""
    x = np.asarray(samples, dtype=np.int32) >> 2
    negative = x < 0
    magnitude = np.minimum(np.where(negative, -x, x), _CLIP) + _BIAS
    segment = np.searchsorted(_SEGMENT_ENDS, magnitude)
    step = (magnitude >> (segment + 1)) & 0x0F
    mask = np.where(negative, 0x7F, 0xFF)
    code = np.where(segment < 8, (segment << 4) | step, 0x7F)  # past the last segment: the top code
    return (code ^ mask).astype(np.uint8).tobytes()
