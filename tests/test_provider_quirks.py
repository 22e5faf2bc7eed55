"""Provider misbehaviours every realtime adapter survives, each with the right blame.

Each case drives the adapter directly against its protocol fake with a quirk switched on. Blame:
a refused key is ``auth`` and raised at connect (no retry); a 429, a 1011 close or an expired
session is infrastructure (transient: retried, never scored); the model's own lapses (an empty
answer) are no error at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import pytest

from harness.agents.providers.errors import ProviderError, ProviderUnavailable
from harness.agents.providers.grok_voice import GrokVoiceAdapter
from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.agents.providers.step_audio import StepAudioAdapter
from harness.agents.realtime import (
    AdapterError,
    AudioDelta,
    RealtimeAdapter,
    ResponseDone,
    SessionConfig,
    ToolCallRequested,
)
from harness.tasks.models import PolicyToolCall, PolicyTurn
from tests.fakes import openai_realtime_fake
from tests.fakes.driver import drive, user_speech

KEY = "sk-test-key"
TOOLS = [{"name": "lookup_order", "description": "Find an order.", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}]
TURNS = [
    PolicyTurn(text="Let me check that order for you right now.", tool_calls=[PolicyToolCall(name="lookup_order", args={"order_id": "A1"})]),
    PolicyTurn(text="It ships tomorrow morning."),
]


@dataclass(frozen=True)
class Provider:
    name: str
    adapter: Callable[[str], RealtimeAdapter]
    fake: Callable[..., object]
    key_env: str


def _openai_style(dialect):
    return partial(openai_realtime_fake.OpenAIRealtimeFake, dialect=dialect)


PROVIDERS = [
    Provider("openai", lambda url: OpenAIRealtimeAdapter(endpoint=url), _openai_style(openai_realtime_fake.OPENAI), "OPENAI_API_KEY"),
    Provider("xai", lambda url: GrokVoiceAdapter(endpoint=url), _openai_style(openai_realtime_fake.XAI), "XAI_API_KEY"),
    Provider("stepfun", lambda url: StepAudioAdapter(endpoint=url), _openai_style(openai_realtime_fake.STEPFUN), "STEPFUN_API_KEY"),
]


@pytest.fixture(params=PROVIDERS, ids=lambda p: p.name)
def provider(request, monkeypatch) -> Provider:
    monkeypatch.setenv(request.param.key_env, KEY)
    return request.param


async def _run(provider: Provider, quirks: set[str], turns=TURNS, utterances=("Where is my order?", "Great, thanks.")):
    async with provider.fake(turns, api_key=KEY, quirks=quirks) as fake:
        adapter = provider.adapter(fake.url)
        await adapter.connect(SessionConfig(instructions="Be brief.", tools=TOOLS))
        try:
            log = await drive(adapter, await user_speech(*utterances))
        finally:
            await adapter.close()
    return fake, log


def _errors(log) -> list[AdapterError]:
    return log.of(AdapterError)


async def test_no_response_created_is_not_needed_for_liveness(provider):
    fake, log = await _run(provider, {"no_response_created"})
    assert not fake.sent_of_type("response.created")
    assert [c.name for c in log.of(ToolCallRequested)] == ["lookup_order"]
    assert log.of(AudioDelta) and len(log.of(ResponseDone)) == 3
    assert len(fake.of_type("response.create")) == 1 and not fake.violations and not fake.invalid
    assert not _errors(log)


async def test_an_automatic_response_after_the_tool_output_is_benign(provider):
    fake, log = await _run(provider, {"auto_response_after_tool_output"})
    assert len(fake.of_type("response.create")) == 1  # raced the server's own continuation...
    (race,) = fake.sent_of_type("error")  # ...and lost, harmlessly
    assert race["error"]["code"] == "conversation_already_has_active_response"
    assert log.of(AudioDelta) and not _errors(log)
    assert not fake.violations and not fake.invalid


async def test_a_tool_call_in_the_middle_of_an_utterance_is_answered_once(provider):
    fake, log = await _run(provider, {"tool_call_mid_utterance"})
    kinds = [type(e) for e in log.events if isinstance(e, AudioDelta | ToolCallRequested)]
    first_call = kinds.index(ToolCallRequested)
    assert AudioDelta in kinds[:first_call] and AudioDelta in kinds[first_call:]  # words on both sides
    (output,) = fake.of_type("conversation.item.create")
    assert output["item"]["call_id"] == log.of(ToolCallRequested)[0].call_id
    assert len(fake.of_type("response.create")) == 1 and not fake.violations
    assert not _errors(log)


async def test_a_premature_turn_complete_without_audio_is_the_model_s_silence_not_an_error(provider):
    fake, log = await _run(provider, {"premature_turn_complete"}, utterances=("Where is my order?", "Hello? Are you there?", "Great, thanks."))
    first_done = log.of(ResponseDone)[0]
    assert not [e for e in log.events[: log.events.index(first_done)] if isinstance(e, AudioDelta)]
    assert log.of(AudioDelta), "the session goes on and the next turn is answered"
    assert not _errors(log)


@pytest.mark.parametrize("quirk", ["close_1011_after_turn", "session_expired_after_turn"])
async def test_a_socket_lost_after_a_turn_is_infrastructure(provider, quirk):
    fake, log = await _run(provider, {quirk})
    (error,) = _errors(log)
    assert error.transient, error
    assert log.of(AudioDelta), "the turn before the loss was delivered"


async def test_a_429_at_the_handshake_is_rate_limited_with_its_retry_after(provider):
    async with provider.fake(TURNS, api_key=KEY, quirks={"rate_limited"}) as fake:
        with pytest.raises(ProviderUnavailable) as caught:
            await provider.adapter(fake.url).connect(SessionConfig(instructions="", tools=TOOLS))
    assert caught.value.error.kind == "rate_limited"
    assert caught.value.retry_after_s == openai_realtime_fake.RETRY_AFTER_S
    assert isinstance(caught.value, ConnectionError)  # the runner's transient path


async def test_an_invalid_key_is_a_clear_auth_error_and_is_not_retried(provider, monkeypatch):
    monkeypatch.setenv(provider.key_env, "sk-wrong")
    async with provider.fake(TURNS, api_key=KEY) as fake:
        with pytest.raises(ProviderError) as caught:
            await provider.adapter(fake.url).connect(SessionConfig(instructions="", tools=TOOLS))
    assert caught.value.kind == "auth"
    assert "401" in str(caught.value) and "API key" in str(caught.value)
    assert not isinstance(caught.value, ConnectionError)
    assert len(fake.handshakes) == 1


async def test_an_invalid_key_reported_after_the_socket_opened_is_an_auth_error(provider):
    async with provider.fake(TURNS, api_key=KEY, quirks={"invalid_key_after_open"}) as fake:
        with pytest.raises(ProviderError) as caught:
            await provider.adapter(fake.url).connect(SessionConfig(instructions="", tools=TOOLS))
    assert caught.value.kind == "auth" and "invalid_api_key" in str(caught.value)
    assert len(fake.handshakes) == 1
