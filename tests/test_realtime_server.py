"""The OpenAI-Realtime server that hosts an in-process agent, on loopback (no docker).

The client is the harness's own container-agent adapter (the OpenAI adapter), or a raw websocket
whose every received event is validated against the official ``openai`` realtime server types.
"""

from __future__ import annotations

import asyncio
import base64
import json

import numpy as np
import pytest
from openai.types.realtime import RealtimeServerEvent
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from harness.agents.container_agent import ContainerAgentAdapter
from harness.agents.native_oracle import NativeOracleAgent
from harness.agents.realtime import (
    AdapterError,
    AudioDelta,
    CallEnded,
    McpCallReported,
    McpEndpoint,
    ResponseDone,
    SessionConfig,
    TranscriptDelta,
)
from harness.agents.realtime_server import RealtimeAgentServer, SessionUpdateIn, session_config
from harness.blame.codes import AdapterErrorCode
from harness.tasks.models import PolicyToolCall, PolicyTurn, ReferencePolicy
from tests.fakes.driver import drive, user_speech
from tests.fakes.loopback import discriminated
from tests.fakes.openai_realtime_fake import OpenAIRealtimeFake
from tests.waiting import eventually

SERVER_EVENTS = discriminated(RealtimeServerEvent)
POLICY = ReferencePolicy(
    turns=[
        PolicyTurn(text="Let me look that up.", tool_calls=[PolicyToolCall(name="lookup_claim", args={"id": 7})]),
        PolicyTurn(text="All done. Goodbye.", end_call=True),
    ]
)
MCP = McpEndpoint(url="http://10.213.0.2:8080/mcp", headers={"Authorization": "Bearer s3cret"},
                  allowed_tools=("lookup_claim",))


def _ga_session_update(policy: ReferencePolicy | None = POLICY) -> dict:
    """``session.update`` as the harness sends it to a container agent (GA shape, MCP tool)."""
    update = {
        "type": "session.update",
        "session": {
            "type": "realtime",
            "instructions": "Help the caller.",
            "audio": {"input": {"format": {"type": "audio/pcm", "rate": 24000},
                                "turn_detection": {"type": "server_vad", "silence_duration_ms": 500}},
                      "output": {"format": {"type": "audio/pcm", "rate": 24000}, "voice": "marin"}},
            "tools": [{"type": "mcp", "server_label": "task", "server_url": MCP.url, "headers": dict(MCP.headers),
                       "require_approval": "never", "allowed_tools": list(MCP.allowed_tools)}],
        },
    }
    if policy is not None:
        update["apex_voice"] = {"reference_policy": policy.model_dump(mode="json")}
    return update


class _Calls:
    """The hosted oracle's tool calls (instead of a real MCP client)."""

    def __init__(self, fail: bool = False) -> None:
        self.made: list[tuple[str, object]] = []
        self.fail = fail

    async def __call__(self, name: str, args: object) -> tuple[object, bool]:
        self.made.append((name, args))
        if self.fail:
            raise RuntimeError("the agent's process broke")
        return {"claim": 7, "status": "open"}, False


def test_session_update_gives_the_mcp_endpoint_and_the_reference_policy():
    config = session_config(SessionUpdateIn.model_validate(_ga_session_update()))
    assert config.mcp == MCP and config.tool_mode == "native"
    assert config.reference_policy == POLICY
    assert config.voice == "marin" and config.turn_detection.silence_duration_ms == 500
    assert session_config(SessionUpdateIn.model_validate(_ga_session_update(None))).reference_policy is None


def test_the_reference_policy_is_sent_only_when_the_session_carries_it():
    adapter = ContainerAgentAdapter(endpoint="ws://agent:8765/v1/realtime")
    privileged = adapter._session(SessionConfig(instructions="", tools=[], reference_policy=POLICY))
    plain = adapter._session(SessionConfig(instructions="", tools=[]))
    assert json.loads(privileged.model_dump_json())["apex_voice"]["reference_policy"] == POLICY.model_dump(mode="json")
    assert "apex_voice" not in json.loads(plain.model_dump_json())


async def test_the_hosted_oracle_calls_its_tools_speaks_and_hangs_up_through_the_protocol():
    calls = _Calls()
    async with RealtimeAgentServer(lambda: NativeOracleAgent(calls), agent_name="native-oracle", port=0) as server:
        client = ContainerAgentAdapter(endpoint=server.url)
        await client.connect(SessionConfig(instructions="", tools=[], tool_mode="native", mcp=MCP,
                                           reference_policy=POLICY))
        log = await drive(client, await user_speech("Can you look up my claim?", "Thanks, that is all."))
        await client.close()
    assert calls.made == [("lookup_claim", {"id": 7})]
    assert [(e.name, e.status) for e in log.of(McpCallReported)] == [("lookup_claim", "started"),
                                                                     ("lookup_claim", "completed")]
    assert [e.text for e in log.of(TranscriptDelta)] == ["Let me look that up.", "All done. Goodbye."]
    assert sum(len(e.pcm) for e in log.of(AudioDelta)) > 24_000  # over half a second of speech
    assert len(log.of(ResponseDone)) == 2 and len(log.of(CallEnded)) == 1
    assert not log.of(AdapterError)  # a close with 1000 is the agent hanging up, not a failure


async def test_every_server_event_is_a_valid_ga_event_and_bad_client_events_get_errors():
    speech = (await user_speech("Can you look up my claim?"))[0]
    stream = np.concatenate([speech, np.zeros(24_000 * 3, dtype=np.int16)]).astype("<i2").tobytes()
    async with RealtimeAgentServer(lambda: NativeOracleAgent(_Calls()), agent_name="native-oracle", port=0) as server:
        async with connect(server.url) as ws:
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": "AAAA"}))
            await ws.send("not json")
            await ws.send(json.dumps({"type": "session.teleport"}))
            await ws.send(json.dumps({"type": "session.update", "session": {"tools": [{"type": "mcp"}]}}))
            await ws.send(json.dumps(_ga_session_update()))
            for start in range(0, len(stream), 4800):
                chunk = base64.b64encode(stream[start : start + 4800]).decode()
                await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
            await ws.send(json.dumps({"type": "conversation.item.truncate", "item_id": "item_x", "content_index": 0,
                                      "audio_end_ms": 640}))
            received = []
            while not any(e["type"] == "response.done" for e in received) or not any(
                e["type"] == "conversation.item.truncated" for e in received
            ):
                received.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
    for event in received:
        SERVER_EVENTS.validate_python(event)
    kinds = [e["type"] for e in received]
    assert kinds[0] == "session.created"
    errors = [e["error"] for e in received if e["type"] == "error"]
    assert [e.get("code") for e in errors] == ["session_not_configured", None, "unknown_event", "invalid_value"]
    assert "session.tools.0.mcp.server_label" in errors[3]["message"]
    updated = next(e for e in received if e["type"] == "session.updated")
    assert "headers" not in updated["session"]["tools"][0]  # the MCP token is never echoed
    assert kinds.index("response.created") < kinds.index("response.output_audio.delta") < kinds.index("response.done")
    assert kinds.index("response.mcp_call.in_progress") < kinds.index("response.mcp_call.completed")


async def test_a_path_other_than_the_realtime_one_is_refused():
    async with RealtimeAgentServer(NativeOracleAgent, agent_name="native-oracle", port=0) as server:
        with pytest.raises(InvalidStatus) as refused:
            async with connect(server.url.replace("/v1/realtime", "/admin")):
                pass
    assert refused.value.response.status_code == 404


async def test_an_agent_that_dies_mid_session_ends_the_call_as_its_own_failure():
    async with RealtimeAgentServer(lambda: NativeOracleAgent(_Calls(fail=True)), agent_name="native-oracle",
                                   port=0) as server:
        client = ContainerAgentAdapter(endpoint=server.url)
        await client.connect(SessionConfig(instructions="", tools=[], tool_mode="native", mcp=MCP,
                                           reference_policy=POLICY))
        log = await drive(client, await user_speech("Can you look up my claim?"))  # raises nothing
        await client.close()
    failures = log.of(AdapterError)
    assert [(f.kind, f.code) for f in failures] == [("provider", AdapterErrorCode.AGENT_FAILED)]
    assert "1011" in failures[0].message and log.events[-1] == CallEnded()


async def test_an_agent_that_refuses_its_session_ends_the_call_instead_of_raising():
    async with RealtimeAgentServer(NativeOracleAgent, agent_name="native-oracle", port=0) as server:
        client = ContainerAgentAdapter(endpoint=server.url.replace("/v1/realtime", "/elsewhere"))
        await client.connect(SessionConfig(instructions="", tools=[]))
        events = client.poll_events()
        await client.close()
    assert [type(e) for e in events] == [AdapterError, CallEnded]
    assert events[0].code == AdapterErrorCode.AGENT_FAILED and "404" in events[0].message


async def test_an_agent_claiming_a_bad_key_cannot_stop_the_campaign():
    """A provider saying ``invalid_api_key`` stops a campaign; an agent image saying it is only failing."""
    async with OpenAIRealtimeFake(quirks={"invalid_key_after_open"}) as fake:
        client = ContainerAgentAdapter(endpoint=fake.url)
        await client.connect(SessionConfig(instructions="", tools=[]))
        events: list = []
        await eventually(lambda: events.extend(client.poll_events()) or any(isinstance(e, CallEnded) for e in events))
        await client.close()
    assert [type(e) for e in events] == [AdapterError, CallEnded]
    assert events[0].kind == "provider" and "invalid_api_key" in events[0].message
