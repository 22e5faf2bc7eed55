"""What a session cost, from normalized usage and a versioned price table.

Prices are USD per million tokens (or per minute for providers that bill audio time). A model
missing from the table, or usage missing a field its price needs, has cost ``None``: never 0, so an
unknown cost is never averaged in as free. ``PRICE_TABLE_VERSION`` is recorded beside every cost.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .realtime import Usage

__all__ = ["PRICES", "PRICE_TABLE_VERSION", "MinutePrices", "TokenPrices", "session_cost"]

#: Bump with any change to ``PRICES``.
PRICE_TABLE_VERSION = "2026-12-01"


@dataclass(frozen=True)
class TokenPrices:
    """USD per 1M tokens. Cached input is billed at ``cached_input`` and taken out of the audio
    input first (the usage gives one cached count; in voice sessions the context is mostly audio)."""

    text_input: float
    audio_input: float
    cached_input: float
    text_output: float
    audio_output: float

    def cost(self, usage: Usage) -> float | None:
        text_in, audio_in = usage.input_text_tokens, usage.input_audio_tokens
        text_out, audio_out = usage.output_text_tokens, usage.output_audio_tokens
        if text_in is None or audio_in is None or text_out is None or audio_out is None:
            return None
        cached = usage.cached_tokens or 0
        cached_audio = min(cached, audio_in)
        cached_text = min(cached - cached_audio, text_in)
        total = (
            (text_in - cached_text) * self.text_input
            + (audio_in - cached_audio) * self.audio_input
            + (cached_audio + cached_text) * self.cached_input
            + text_out * self.text_output
            + audio_out * self.audio_output
        )
        return total / 1_000_000


@dataclass(frozen=True)
class MinutePrices:
    """USD per minute of session (usage tokens are not billed)."""

    per_minute: float


#: Provider model id → prices (the provider's published list prices when the table was versioned).
PRICES: dict[str, TokenPrices | MinutePrices] = {
    "gpt-realtime": TokenPrices(text_input=4.0, audio_input=32.0, cached_input=0.4, text_output=16.0, audio_output=64.0),
    "gpt-realtime-mini": TokenPrices(text_input=0.6, audio_input=10.0, cached_input=0.3, text_output=2.4, audio_output=20.0),
    "grok-voice-think-fast-2.0": MinutePrices(per_minute=0.08),
}


def session_cost(model: str | None, usages: Iterable[Usage | None], *, session_minutes: float) -> float | None:
    """Cost of one session in USD, or ``None`` when the model or any response's usage is unpriced."""
    prices = PRICES.get(model or "")
    if prices is None:
        return None
    if isinstance(prices, MinutePrices):
        return round(prices.per_minute * session_minutes, 6)
    total = 0.0
    for usage in usages:
        cost = prices.cost(usage) if usage is not None else None
        if cost is None:
            return None
        total += cost
    return round(total, 6)
