"""Registry entries of the provider adapters: URL models, options, and keys the adapters agree on."""

from __future__ import annotations

import pytest

from harness.agents import registry
from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.agents.providers.ws_adapter import WebsocketAdapter


@pytest.mark.parametrize("url", ["ws://127.0.0.1:9000/v1/realtime", "wss://agents.example/voice?x=1"])
def test_a_websocket_url_is_an_openai_compatible_agent_needing_no_key(url):
    spec = registry.get_model(url)
    assert spec.key == url and spec.required_env == () and spec.clock == "realtime"
    adapter = spec.create_adapter()
    assert isinstance(adapter, OpenAIRealtimeAdapter)
    assert adapter._url() == url  # no model query is added to someone else's server
    assert adapter.api_key() is None


def test_endpoint_and_provider_model_options_reach_the_adapter(monkeypatch):
    monkeypatch.setenv("OPENAI_REALTIME_URL", "wss://env.example/v1/realtime")
    spec = registry.get_model("gpt-realtime")
    assert spec.create_adapter().endpoint == "wss://env.example/v1/realtime"
    custom = spec.with_options(endpoint="wss://proxy.example/rt", model="gpt-realtime-mini")
    adapter = custom.create_adapter()
    assert adapter._url() == "wss://proxy.example/rt?model=gpt-realtime-mini"
    assert custom.provider_model == "gpt-realtime-mini"


@pytest.mark.parametrize("spec", [s for s in registry.MODELS.values() if s.clock == "realtime"], ids=lambda s: s.key)
def test_every_provider_entry_names_the_keys_its_adapter_reads(spec):
    adapter = spec.create_adapter()
    assert isinstance(adapter, WebsocketAdapter)
    assert spec.required_env == adapter.api_key_env
    assert spec.provider_model == adapter.provider_model
    assert spec.max_concurrent_sessions is not None


def test_voices_outside_the_allowlist_fall_back_to_the_default():
    adapter = OpenAIRealtimeAdapter()
    assert adapter.voice_for("cedar") == "cedar"
    assert adapter.voice_for("soft-spoken-gentleman") == "marin"
