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

from harness.agents.providers.errors import ProviderRefused, ProviderUnavailable
from harness.agents.providers.gemini_live import GeminiLiveAdapter
from harness.agents.providers.gpt_live import GptLiveAdapter
from harness.agents.providers.grok_voice import GrokVoiceAdapter
from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.agents.providers.step_audio import StepAudioAdapter
from harness.agents.realtime import (
    AdapterError,
    AdapterInfo,
    AudioDelta,
    RealtimeAdapter,
    ResponseDone,
    SessionConfig,
    ToolCallRequested,
)
from harness.blame.origin_table import classify
from harness.tasks.models import PolicyToolCall, PolicyTurn
from tests.fakes import gemini_live_fake, gpt_live_fake, openai_realtime_fake
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
    #: Call ids the fake received results for, in order.
    outputs: Callable[[object], list[str]]
    #: How many times the client asked the model to continue after tool results.
    continuations: Callable[[object], int]
    #: Quirks the provider's protocol can show (a generic name → the fake's name for it).
    quirks: dict[str, str]
    resumable: bool = False


def _openai_style(name, adapter_class, dialect, key_env):
    return Provider(
        name,
        lambda url: adapter_class(endpoint=url),
        partial(openai_realtime_fake.OpenAIRealtimeFake, dialect=dialect),
        key_env,
        outputs=lambda fake: [e["item"]["call_id"] for e in fake.of_type("conversation.item.create")],
        continuations=lambda fake: len(fake.of_type("response.create")),
        quirks={q: q for q in openai_realtime_fake.QUIRKS},
    )


GEMINI = Provider(
    "gemini",
    lambda url: GeminiLiveAdapter(endpoint=url),
    gemini_live_fake.GeminiLiveFake,
    "GEMINI_API_KEY",
    outputs=lambda fake: [r["id"] for m in fake.received_with("toolResponse") for r in m["toolResponse"]["functionResponses"]],
    continuations=lambda fake: len(fake.received_with("toolResponse")),
    quirks={
        "tool_call_mid_utterance": "tool_call_mid_utterance",
        "premature_turn_complete": "premature_turn_complete",
        "close_1011_after_turn": "close_1011_after_turn",
        "session_expired_after_turn": "go_away_after_turn",
        "rate_limited": "rate_limited",
    },
    resumable=True,
)
GPT_LIVE = Provider(
    "gpt-live",
    lambda url: GptLiveAdapter(endpoint=url),
    gpt_live_fake.GptLiveFake,
    "OPENAI_API_KEY",
    outputs=lambda fake: [e["item"]["call_id"] for e in fake.of_type("response.item.create")],
    continuations=lambda fake: len(fake.of_type("response.create")),
    quirks={q: q for q in gpt_live_fake.QUIRKS},
)
PROVIDERS = [
    _openai_style("openai", OpenAIRealtimeAdapter, openai_realtime_fake.OPENAI, "OPENAI_API_KEY"),
    _openai_style("xai", GrokVoiceAdapter, openai_realtime_fake.XAI, "XAI_API_KEY"),
    _openai_style("stepfun", StepAudioAdapter, openai_realtime_fake.STEPFUN, "STEPFUN_API_KEY"),
    GEMINI,
    GPT_LIVE,
]


def _providers(quirk: str | None = None, *, resumable: bool | None = None):
    """The providers whose protocol can show ``quirk`` (and that resume, or not)."""
    chosen = [p for p in PROVIDERS if (quirk is None or quirk in p.quirks) and (resumable is None or p.resumable == resumable)]
    return pytest.mark.parametrize("provider", chosen, ids=lambda p: p.name, indirect=True)


@pytest.fixture
def provider(request, monkeypatch) -> Provider:
    monkeypatch.setenv(request.param.key_env, KEY)
    return request.param


async def _run(provider: Provider, quirks: set[str], turns=TURNS, utterances=("Where is my order?", "Great, thanks.")):
    async with provider.fake(turns, api_key=KEY, quirks={provider.quirks[q] for q in quirks}) as fake:
        adapter = provider.adapter(fake.url)
        await adapter.connect(SessionConfig(instructions="Be brief.", tools=TOOLS))
        try:
            log = await drive(adapter, await user_speech(*utterances))
        finally:
            await adapter.close()
    return fake, log


def _errors(log) -> list[AdapterError]:
    return log.of(AdapterError)


@_providers("no_response_created")
async def test_no_response_created_is_not_needed_for_liveness(provider):
    fake, log = await _run(provider, {"no_response_created"})
    assert not fake.sent_of_type("response.created")
    assert [c.name for c in log.of(ToolCallRequested)] == ["lookup_order"]
    assert log.of(AudioDelta) and len(log.of(ResponseDone)) == 3
    assert len(fake.of_type("response.create")) == 1 and not fake.violations and not fake.invalid
    assert not _errors(log)


@_providers("auto_response_after_tool_output")
async def test_an_automatic_response_after_the_tool_output_is_benign(provider):
    fake, log = await _run(provider, {"auto_response_after_tool_output"})
    assert len(fake.of_type("response.create")) == 1  # raced the server's own continuation...
    (race,) = fake.sent_of_type("error")  # ...and lost, harmlessly
    assert race["error"]["code"] == "conversation_already_has_active_response"
    assert log.of(AudioDelta) and not _errors(log)
    assert not fake.violations and not fake.invalid


@_providers("tool_call_mid_utterance")
async def test_a_tool_call_in_the_middle_of_an_utterance_is_answered_once(provider):
    fake, log = await _run(provider, {"tool_call_mid_utterance"})
    kinds = [type(e) for e in log.events if isinstance(e, AudioDelta | ToolCallRequested)]
    first_call = kinds.index(ToolCallRequested)
    assert AudioDelta in kinds[:first_call] and AudioDelta in kinds[first_call:]  # words on both sides
    assert provider.outputs(fake) == [log.of(ToolCallRequested)[0].call_id]
    assert provider.continuations(fake) == 1 and not fake.violations
    assert not _errors(log)


@_providers("premature_turn_complete")
async def test_a_premature_turn_complete_without_audio_is_the_model_s_silence_not_an_error(provider):
    fake, log = await _run(provider, {"premature_turn_complete"}, utterances=("Where is my order?", "Hello? Are you there?", "Great, thanks."))
    first_done = log.of(ResponseDone)[0]
    assert not [e for e in log.events[: log.events.index(first_done)] if isinstance(e, AudioDelta)]
    assert log.of(AudioDelta), "the session goes on and the next turn is answered"
    assert not _errors(log)


def _lost_socket(*, resumable: bool):
    """(provider, quirk) for every way each provider can lose the socket after a turn."""
    cases = [
        pytest.param(p, q, id=f"{p.name}-{q}")
        for p in PROVIDERS
        if p.resumable == resumable
        for q in ("close_1011_after_turn", "session_expired_after_turn")
        if q in p.quirks
    ]
    return pytest.mark.parametrize(("provider", "quirk"), cases, indirect=["provider"])


@_lost_socket(resumable=False)
async def test_a_socket_lost_after_a_turn_is_infrastructure(provider, quirk):
    fake, log = await _run(provider, {quirk})
    (error,) = _errors(log)
    assert error.transient, error
    assert log.of(AudioDelta), "the turn before the loss was delivered"


@_lost_socket(resumable=True)
async def test_a_resumable_session_survives_a_lost_socket(provider, quirk):
    fake, log = await _run(provider, {quirk})
    (resumed,) = log.of(AdapterInfo)
    assert resumed.metadata["resumed_session"] == 1 and len(fake.handshakes) == 2
    after = log.events[log.events.index(resumed) :]
    assert [e for e in after if isinstance(e, AudioDelta)], "the next turn is answered on the resumed session"
    assert not _errors(log) and not fake.invalid


@_providers("rate_limited")
async def test_a_429_at_the_handshake_is_rate_limited_with_its_retry_after(provider):
    async with provider.fake(TURNS, api_key=KEY, quirks={"rate_limited"}) as fake:
        with pytest.raises(ProviderUnavailable) as caught:
            await provider.adapter(fake.url).connect(SessionConfig(instructions="", tools=TOOLS))
    assert caught.value.error.kind == "rate_limited"
    assert caught.value.retry_after_s == 7
    blame = classify(caught.value)
    assert blame.kind == "provider_transient" and blame.transient and blame.retry_after_s == 7


@_providers()
async def test_an_invalid_key_is_a_clear_auth_error_and_is_not_retried(provider, monkeypatch):
    monkeypatch.setenv(provider.key_env, "sk-wrong")
    async with provider.fake(TURNS, api_key=KEY) as fake:
        with pytest.raises(ProviderRefused) as caught:
            await provider.adapter(fake.url).connect(SessionConfig(instructions="", tools=TOOLS))
    assert caught.value.kind == "auth"
    assert "API key" in str(caught.value)
    blame = classify(caught.value)
    assert blame.kind == "provider_error" and blame.stops_campaign and not blame.transient
    assert len(fake.handshakes) == 1


@_providers("invalid_key_after_open")
async def test_an_invalid_key_reported_after_the_socket_opened_is_an_auth_error(provider):
    async with provider.fake(TURNS, api_key=KEY, quirks={"invalid_key_after_open"}) as fake:
        with pytest.raises(ProviderRefused) as caught:
            await provider.adapter(fake.url).connect(SessionConfig(instructions="", tools=TOOLS))
    assert caught.value.kind == "auth" and "invalid_api_key" in str(caught.value)
    assert len(fake.handshakes) == 1
