"""Session cost from normalized usage: versioned prices, and None (never 0) when unknown."""

from __future__ import annotations

import pytest

from harness.agents.pricing import PRICE_TABLE_VERSION, session_cost
from harness.agents.realtime import Usage

USAGE = Usage(input_tokens=1000, output_tokens=500, input_audio_tokens=800, output_audio_tokens=400,
              input_text_tokens=200, output_text_tokens=100, cached_tokens=300)


def test_token_priced_models_add_up_every_response():
    cost = session_cost("gpt-realtime", [USAGE, USAGE], session_minutes=2)
    # per response: 200 text + 500 uncached audio + 300 cached in; 100 text + 400 audio out (USD / 1M)
    one = (200 * 4.0 + 500 * 32.0 + 300 * 0.4 + 100 * 16.0 + 400 * 64.0) / 1e6
    assert cost == pytest.approx(2 * one)
    assert PRICE_TABLE_VERSION


def test_minute_priced_models_bill_the_session_time():
    assert session_cost("grok-voice-think-fast-2.0", [], session_minutes=2.5) == pytest.approx(0.2)


def test_an_unknown_model_or_missing_usage_costs_none_not_zero():
    assert session_cost("some-local-model", [USAGE], session_minutes=1) is None
    assert session_cost("gpt-realtime", [USAGE, None], session_minutes=1) is None
    assert session_cost("gpt-realtime", [Usage(input_tokens=10, output_tokens=2)], session_minutes=1) is None
