"""Native tool mode with a cloud provider: the session declares the task's MCP server, not functions.

The OpenAI fake validates ``session.update`` against ``openai.types.realtime`` (the GA ``Mcp`` tool);
the xAI fake against xAI's documented remote-MCP tool (no ``require_approval``); the GPT-Live fake
``session.start`` against ``openai.types.live`` (the Responses delegation's ``mcp`` tool).
"""

from __future__ import annotations

import asyncio

import pytest

from harness.agents.providers.gpt_live import GptLiveAdapter
from harness.agents.providers.grok_voice import GrokVoiceAdapter
from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.agents.realtime import McpEndpoint, SessionConfig
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.campaign.sandboxed_cell import native_endpoint
from harness.events import EventType
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.mcp_environment import McpEnvironment
from harness.tasks.loader import load_task
from sandbox.backend import SandboxEnvironment
from sandbox.local import LocalBackend
from tests.conftest import DEMO_DATA
from tests.fakes.gpt_live_fake import GptLiveFake
from tests.fakes.openai_realtime_fake import OPENAI, XAI, OpenAIRealtimeFake

TOOLS = [
    {"name": "update_expense", "description": "Edit.", "parameters": {"type": "object", "properties": {}}},
    {"name": "submit_expense", "description": "Submit.", "parameters": {"type": "object", "properties": {}}},
]
SHORT_TASK = DEMO_DATA / "tasks" / "demo_offsite_coordination_001"
ENDPOINT = McpEndpoint(url="https://tasks.example/mcp", headers={"Authorization": "Bearer agent-token-1"})


def _native(endpoint: McpEndpoint = ENDPOINT) -> SessionConfig:
    return SessionConfig(instructions="Help.", tools=TOOLS, tool_mode="native", mcp=endpoint)


async def _declared_tools(adapter_class, fake: OpenAIRealtimeFake, config: SessionConfig) -> list[dict]:
    adapter = adapter_class(endpoint=fake.url, require_key=False)
    await adapter.connect(config)
    await adapter.close()
    assert not fake.invalid, fake.invalid
    return fake.of_type("session.update")[0]["session"]["tools"]


async def test_openai_declares_the_mcp_server_in_the_ga_shape():
    async with OpenAIRealtimeFake() as fake:
        tools = await _declared_tools(OpenAIRealtimeAdapter, fake, _native())
    assert tools == [
        {
            "type": "mcp",
            "server_label": "task",
            "server_url": "https://tasks.example/mcp",
            "headers": {"Authorization": "Bearer agent-token-1"},
            "require_approval": "never",
            "allowed_tools": ["update_expense", "submit_expense"],
        }
    ]


async def test_an_endpoints_own_allowed_tools_win_over_the_listing():
    endpoint = McpEndpoint(url="http://127.0.0.1:9/mcp", allowed_tools=("submit_expense",))
    async with OpenAIRealtimeFake() as fake:
        tools = await _declared_tools(OpenAIRealtimeAdapter, fake, _native(endpoint))
    assert tools[0]["allowed_tools"] == ["submit_expense"] and "headers" not in tools[0]


async def test_bridge_mode_still_declares_function_tools():
    async with OpenAIRealtimeFake() as fake:
        tools = await _declared_tools(OpenAIRealtimeAdapter, fake, SessionConfig(instructions="", tools=TOOLS))
    assert [t["type"] for t in tools] == ["function", "function"]


async def test_xai_declares_its_remote_mcp_tool_without_approval_settings():
    async with OpenAIRealtimeFake(dialect=XAI) as fake:
        tools = await _declared_tools(GrokVoiceAdapter, fake, _native())
    assert tools == [
        {
            "type": "mcp",
            "server_url": "https://tasks.example/mcp",
            "server_label": "task",
            "headers": {"Authorization": "Bearer agent-token-1"},
            "allowed_tools": ["update_expense", "submit_expense"],
        }
    ]


async def test_gpt_live_gives_its_responses_backend_the_mcp_server():
    async with GptLiveFake() as fake:
        adapter = GptLiveAdapter(endpoint=fake.url, require_key=False)
        await adapter.connect(_native())
        await adapter.close()
    assert not fake.invalid, fake.invalid
    backend = fake.of_type("session.start")[0]["session"]["delegation"]["responses"]
    assert backend["tools"] == [
        {
            "type": "mcp",
            "server_label": "task",
            "server_url": "https://tasks.example/mcp",
            "headers": {"Authorization": "Bearer agent-token-1"},
            "require_approval": "never",
            "allowed_tools": ["update_expense", "submit_expense"],
        }
    ]


async def test_the_fake_provider_is_refused_without_the_token_and_the_adapter_records_it(toy_form, tmp_path):
    """The provider's MCP client meets the same 401 as anyone: its listing fails, visibly."""
    public = tmp_path / "public"
    load_task(toy_form).public_bundle().write(public)
    async with LocalBackend(pool_size=0).start(public, "t-provider-401", task_id="toy_form_001") as sandbox:
        endpoint = McpEndpoint(url=sandbox.mcp_url, headers={"Authorization": "Bearer not-the-token"})
        async with OpenAIRealtimeFake() as fake:
            adapter = OpenAIRealtimeAdapter(endpoint=fake.url, require_key=False)
            await adapter.connect(_native(endpoint))
            await asyncio.wait_for(_metadata_has(adapter, "mcp_list_tools_failed"), 60)  # a guard, not a measurement
            await adapter.close()
    assert len(fake.mcp_errors) == 1 and sandbox.mcp_url in fake.mcp_errors[0]  # the SDK hides the 401 itself
    assert [e["type"] for e in fake.sent if e["type"].startswith("mcp_list_tools")] == [
        "mcp_list_tools.in_progress", "mcp_list_tools.failed"
    ]
    assert adapter.metadata()["mcp_list_tools_failed"] is True


@pytest.mark.parametrize(("adapter_class", "dialect"), [(OpenAIRealtimeAdapter, OPENAI), (GrokVoiceAdapter, XAI)])
async def test_the_fake_provider_lists_the_tasks_tools_with_the_token(adapter_class, dialect, toy_form, tmp_path):
    public = tmp_path / "public"
    load_task(toy_form).public_bundle().write(public)
    async with LocalBackend(pool_size=0).start(public, "t-provider-list", task_id="toy_form_001") as sandbox:
        tools = [{"name": n, "parameters": {"type": "object"}} for n in ("update_expense", "submit_expense")]
        config = SessionConfig(instructions="", tools=tools, tool_mode="native", mcp=native_endpoint(sandbox))
        async with OpenAIRealtimeFake(dialect=dialect) as fake:
            adapter = adapter_class(endpoint=fake.url, require_key=False)
            await adapter.connect(config)
            await asyncio.wait_for(_metadata_has(adapter, "mcp_tools_listed"), 60)  # a guard, not a measurement
            await adapter.close()
    assert not fake.mcp_errors and not fake.invalid
    # allowed_tools: only the task's tools reach the model, whatever else the server lists.
    assert adapter.metadata()["mcp_tools_listed"] == ["update_expense", "submit_expense"]


async def _metadata_has(adapter: OpenAIRealtimeAdapter, key: str) -> None:
    while key not in adapter.metadata():
        await asyncio.sleep(0.01)


def test_a_public_url_replaces_the_address_and_keeps_the_token():
    sandbox = SandboxEnvironment("http://10.213.0.2:8080/mcp", None, "docker", None, agent_token="tok-1")  # type: ignore[arg-type]
    endpoint = native_endpoint(sandbox, "https://tunnel.example/mcp")
    assert endpoint.url == "https://tunnel.example/mcp"
    assert endpoint.headers == {"Authorization": "Bearer tok-1"}
    assert native_endpoint(sandbox).url == "http://10.213.0.2:8080/mcp"


async def test_an_xai_session_in_native_mode_has_its_calls_made_by_the_provider_and_observed_at_the_server(tmp_path):
    """Grok Voice through the xAI dialect: the provider's MCP client calls, the server records."""
    bundle = load_task(SHORT_TASK)
    bundle.task.time_budget_s = 30
    public = tmp_path / "public" / bundle.task_id
    bundle.public_bundle().write(public)
    speech = open_speech_source(SHORT_TASK, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    async with OpenAIRealtimeFake(bundle.policy.turns, dialect=XAI) as fake:
        async with LocalBackend(pool_size=0).start(public, "t-xai-native", task_id=bundle.task_id) as sandbox:
            async with McpEnvironment(sandbox) as env:
                adapter = GrokVoiceAdapter(endpoint=fake.url, require_key=False)
                result = await run_duplex_session(bundle, adapter, env, DuplexConfig(speech=speech, session_dir=None,
                                                  tool_mode="native", mcp_endpoint=native_endpoint(sandbox)))
    assert not fake.invalid and not fake.violations and not fake.mcp_errors
    calls = [e for e in result.events.events if e.type == EventType.TOOL_CALL]
    expected = [c.name for t in bundle.policy.turns for c in t.tool_calls]
    assert len(calls) >= 3 and [c.payload["tool"] for c in calls] == expected[: len(calls)]
    assert {c.payload["source"] for c in calls} == {"server"}
    assert not fake.of_type("conversation.item.create")
    assert result.adapter_meta["tool_path"] == "mcp-provider"
