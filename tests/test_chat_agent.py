"""Text agents over chat completions, driven by a fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import pytest

from harness.agents.chat_agent import (
    ChatClient,
    ChatEndpoint,
    ChatProviderError,
    ChatTextAgent,
    ChatTransientError,
)
from harness.agents.text_agents import AgentObservationView
from harness.blame.errors import AgentFailure, ProviderError, ProviderTransient
from harness.blame.origin_table import classify
from harness.events import EventType
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import run_text_session
from harness.tasks.dataset import resolve_data
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.fakes.fake_chat_server import API_KEY, CONTEXT_LENGTH_EXCEEDED, FakeChatServer, serve_fake_chat

DEMO_TASKS = resolve_data(DEMO_DATA).task_dirs


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("FAKE_CHAT_KEY", API_KEY)


def _agent(fake: FakeChatServer, **endpoint) -> ChatTextAgent:
    settings = {"api_key_env": "FAKE_CHAT_KEY", "backoff_s": 0.0, **endpoint}
    return ChatTextAgent("fake-model", client=ChatClient(ChatEndpoint("fake-model", fake.base_url, **settings)))


async def _c0(task_dir, fake: FakeChatServer):
    bundle = load_task(task_dir)
    fake.policy = bundle.policy
    agent = _agent(fake)
    try:
        return await run_text_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()))
    finally:
        await agent.aclose()


async def test_playing_the_policy_passes_every_demo_task_in_c0():
    failures = []
    async with serve_fake_chat(FakeChatServer()) as fake:
        for task_dir in DEMO_TASKS:
            fake.requests.clear()
            result = await _c0(task_dir, fake)
            if result.pts != 1:
                failures.append(f"{task_dir.name}: {result.outcome} {result.grade.explain()[:2]}")
    assert not failures


@pytest.mark.slow
async def test_a_silent_model_scores_zero_on_every_demo_task():
    async with serve_fake_chat(FakeChatServer(mode="silent")) as fake:
        for task_dir in DEMO_TASKS:
            result = await _c0(task_dir, fake)
            assert result.pts == 0, task_dir.name
            assert not [e for e in result.events.events if e.type == EventType.TOOL_CALL]


async def test_tools_go_out_as_functions_and_results_come_back_with_their_call_ids():
    async with serve_fake_chat(FakeChatServer()) as fake:
        result = await _c0(DEMO_TASKS[0], fake)
    first = fake.requests[0]
    names = [t["function"]["name"] for t in first["tools"]]
    assert names[-1] == "end_call" and len(names) > 1
    assert first["messages"][0]["role"] == "system" and "Task:" in first["messages"][0]["content"]
    last = fake.requests[-1]["messages"]
    asked = {c["id"] for m in last if m["role"] == "assistant" for c in m.get("tool_calls", [])}
    answered = {m["tool_call_id"] for m in last if m["role"] == "tool"}
    assert asked and asked == answered
    logged = [e.payload["call_id"] for e in result.events.events if e.type == EventType.TOOL_CALL]
    assert set(logged) == asked


async def test_a_bad_key_fails_at_once_naming_the_endpoint(monkeypatch):
    monkeypatch.setenv("FAKE_CHAT_KEY", "sk-wrong")
    async with serve_fake_chat(FakeChatServer()) as fake:
        client = ChatClient(ChatEndpoint("m", fake.base_url, "FAKE_CHAT_KEY", backoff_s=0))
        with pytest.raises(ChatProviderError, match="refused the request \\(401, invalid_api_key\\)") as caught:
            await client.complete([{"role": "user", "content": "hi"}], [])
        await client.aclose()
    assert caught.value.kind == "auth" and client.requests == 1 and fake.base_url in str(caught.value)
    # A refusal stops the campaign (it used to be an unmapped "HARNESS ERROR" and the campaign went on).
    assert isinstance(caught.value, ProviderError) and classify(caught.value).stops_campaign


async def test_a_bad_request_is_not_retried():
    async with serve_fake_chat(FakeChatServer(fail_with=[400])) as fake:
        client = ChatClient(ChatEndpoint("m", fake.base_url, "FAKE_CHAT_KEY", backoff_s=0))
        with pytest.raises(ChatProviderError) as caught:
            await client.complete([{"role": "user", "content": "hi"}], [])
        await client.aclose()
    assert caught.value.kind == "bad_request" and client.requests == 1


async def test_rate_limits_and_server_errors_are_retried_then_transient():
    async with serve_fake_chat(FakeChatServer(mode="silent", fail_with=[429, 503])) as fake:
        client = ChatClient(ChatEndpoint("m", fake.base_url, "FAKE_CHAT_KEY", backoff_s=0, max_retries=2))
        reply = await client.complete([{"role": "user", "content": "hi"}], [])
        assert reply.text == "" and client.requests == 3
        fake.fail_with = [500, 500, 500]
        with pytest.raises(ChatTransientError, match="HTTP 500.*after 3 attempts") as caught:
            await client.complete([{"role": "user", "content": "hi"}], [])
        await client.aclose()
    assert isinstance(caught.value, ProviderTransient) and caught.value.kind == "transient"
    assert caught.value.retry_after_s == 0.0 and classify(caught.value).kind == "provider_transient"


async def test_an_unreachable_endpoint_is_transient():
    client = ChatClient(ChatEndpoint("m", "http://127.0.0.1:9/v1", "FAKE_CHAT_KEY", backoff_s=0, max_retries=1))
    with pytest.raises(ChatTransientError, match="ConnectError") as caught:
        await client.complete([{"role": "user", "content": "hi"}], [])
    await client.aclose()
    assert classify(caught.value).kind == "provider_transient"


async def test_a_conversation_past_the_context_length_is_the_agents_own_failure():
    """OpenAI's 400 ``context_length_exceeded`` refuses what the model produced, not the harness:
    the chat agent raises AgentFailure (scored at the boundary), never a harness error."""
    async with serve_fake_chat(FakeChatServer(fail_with=[CONTEXT_LENGTH_EXCEEDED])) as fake:
        agent = _agent(fake)
        await agent.reset("You are an agent.", [])
        view = AgentObservationView(user_text="hello", tool_results=[], available_tools=[], turn_index=0)
        with pytest.raises(AgentFailure) as caught:
            await agent.act(view)
        await agent.aclose()
    assert caught.value.kind == "refused" and "context_length_exceeded" in caught.value.detail
    assert agent.client.requests == 1


async def test_an_answer_that_is_not_a_chat_completion_is_the_agents_malformed_event():
    async with serve_fake_chat(FakeChatServer(mode="silent")) as fake:
        fake.fail_with = [(200, {"object": "chat.completion", "choices": []})]
        client = ChatClient(ChatEndpoint("m", fake.base_url, "FAKE_CHAT_KEY", backoff_s=0))
        with pytest.raises(AgentFailure) as caught:
            await client.complete([{"role": "user", "content": "hi"}], [])
        await client.aclose()
    assert caught.value.kind == "malformed_event"


def test_chat_and_cascade_prefixes_name_any_model_with_its_endpoint():
    from harness.agents.registry import get_model

    chat = get_model("chat:gpt-x").with_options(endpoint="http://127.0.0.1:1/v1", api_key_env="FAKE_CHAT_KEY")
    assert chat.interface == "text" and not chat.deterministic
    agent = chat.create_adapter()
    assert agent.model_id == "chat:gpt-x" and agent.client.endpoint.url == "http://127.0.0.1:1/v1/chat/completions"
    cascade = get_model("cascade:gpt-x").with_options(endpoint="http://127.0.0.1:1/v1", api_key_env=None)
    adapter = cascade.create_adapter()
    assert adapter.model_id == "cascade:gpt-x" and adapter.clock_mode == "realtime"
    assert adapter.client.endpoint.api_key_env == "OPENAI_API_KEY"


async def test_the_fake_server_refuses_a_body_the_sdk_types_reject():
    import httpx

    bad = {"model": "m", "messages": [{"role": "tool", "content": "no call id"}]}
    async with serve_fake_chat(FakeChatServer(mode="silent")) as fake, httpx.AsyncClient() as http:
        refused = await http.post(f"{fake.base_url}/chat/completions", json=bad, headers={"Authorization": f"Bearer {API_KEY}"})
        good = {**bad, "messages": [{"role": "tool", "content": "x", "tool_call_id": "call_1"}]}
        accepted = await http.post(f"{fake.base_url}/chat/completions", json=good, headers={"Authorization": f"Bearer {API_KEY}"})
    assert refused.status_code == 500 and accepted.status_code == 200
