"""Native tool mode with a cloud provider: the session declares the task's MCP server, not functions.

The OpenAI fake validates ``session.update`` against ``openai.types.realtime`` (the GA ``Mcp`` tool);
the xAI fake against xAI's documented remote-MCP tool (no ``require_approval``); the GPT-Live fake
``session.start`` against ``openai.types.live`` (the Responses delegation's ``mcp`` tool).
"""

from __future__ import annotations

from harness.agents.providers.gpt_live import GptLiveAdapter
from harness.agents.providers.grok_voice import GrokVoiceAdapter
from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.agents.realtime import McpEndpoint, SessionConfig
from tests.fakes.gpt_live_fake import GptLiveFake
from tests.fakes.openai_realtime_fake import XAI, OpenAIRealtimeFake

TOOLS = [
    {"name": "update_expense", "description": "Edit.", "parameters": {"type": "object", "properties": {}}},
    {"name": "submit_expense", "description": "Submit.", "parameters": {"type": "object", "properties": {}}},
]
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
