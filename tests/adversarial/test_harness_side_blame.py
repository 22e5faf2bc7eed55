"""Issue 19, part 1 (from the code review): what the harness runs is blamed where the harness
called it, never by an exception's type or message. One test per case; each failed before."""

from __future__ import annotations

import asyncio
import errno
import json
from pathlib import Path
from typing import Any, ClassVar

import httpx
import mcp.types as mcp_types
import pytest
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel
from test_env_public_bundle import fixture_bundle
from websockets.asyncio.server import serve

from harness.agents.chat_agent import ChatClient, ChatEndpoint
from harness.agents.providers.errors import classify_close
from harness.agents.providers.gpt_live import GptLiveAdapter
from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.agents.providers.ws_adapter import MalformedMessage, WebsocketAdapter
from harness.agents.realtime import AdapterError, SessionConfig
from harness.agents.registry import get_model
from harness.blame.codes import AdapterErrorCode
from harness.blame.errors import AgentFailure, HarnessBug, ProviderError
from harness.blame.origin_table import classify
from harness.campaign.campaign import CampaignCell, CampaignSettings, run_campaign
from harness.results.result_record import ResultRecord
from harness.session.environment_port import InProcessEnvironment
from harness.session.mcp_environment import McpEnvironment
from mcp_servers.mcp_app import call_result
from mcp_servers.server import TaskServer
from sandbox.backend import SandboxEnvironment
from sandbox.control_client import ControlClient
from sandbox.errors import ControlRequestError, SandboxUnavailableError
from tests.fakes.fake_chat_server import CONTEXT_LENGTH_EXCEEDED, FakeChatServer, serve_fake_chat
from tests.served_server import served_sandbox

_BROKEN_TOOL = {  # a commit whose effect our handler cannot apply: a bug of ours, not the caller's
    "name": "submit_broken",
    "handler": "commit",
    "effect": {"artifact_id": "expense_1", "set_fields": ["not", "a", "mapping"]},
    "params": [{"name": "target_id", "type": "string"}],
}


# -- 1. a bug in our tool handler is the server's fault, never a tool error the agent is scored on --


async def test_a_tool_handler_bug_is_a_harness_bug_in_process_and_bridged_and_a_json_rpc_fault_over_mcp(toy_form):
    bundle = fixture_bundle(toy_form, extra_tools=[_BROKEN_TOOL])
    with pytest.raises(HarnessBug, match="AttributeError"):
        await InProcessEnvironment(bundle).call_tool("submit_broken", {"target_id": "expense_1"}, 0)

    server = TaskServer(bundle)
    with pytest.raises(MCPError) as answered:
        await call_result(server, "submit_broken", {"target_id": "expense_1"})
    assert answered.value.code == mcp_types.INTERNAL_ERROR
    async with served_sandbox(server) as sandbox, McpEnvironment(sandbox) as env:
        with pytest.raises(HarnessBug, match="AttributeError"):
            await env.call_tool("submit_broken", {"target_id": "expense_1"}, 0)
    first, bridged = server.loaded_env().snapshot().call_log
    assert first.server_fault and "AttributeError" in first.server_fault
    assert bridged.server_fault and "AttributeError" in bridged.server_fault


async def test_hostile_arguments_stay_a_tool_error_the_agent_sees(toy_form):
    record = await InProcessEnvironment(fixture_bundle(toy_form)).call_tool("update_expense", {"fields": "x" * 10}, 0)
    assert not record.ok and record.server_fault is None and record.error


# -- 2. the bridge: no answer is the sandbox's, an answer that refused us is our bug ------------------


def _answering(handler) -> SandboxEnvironment:
    async def no_state() -> bytes:
        raise SandboxUnavailableError("no state file here")

    control = ControlClient("http://control", "t", transport=httpx.MockTransport(handler))
    return SandboxEnvironment("http://127.0.0.1:9/mcp", control, "test", no_state)


def _refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


@pytest.mark.parametrize(
    ("answer", "blamed"),
    [
        (_refused, SandboxUnavailableError),
        (lambda request: httpx.Response(503, json={"error": "gone"}), SandboxUnavailableError),
        (lambda request: httpx.Response(400, json={"error": "name: field required"}), ControlRequestError),
        (lambda request: httpx.Response(401, json={"error": "missing or wrong bearer token"}), ControlRequestError),
    ],
)
async def test_bridged_call_failures_are_blamed_where_they_failed(answer, blamed):
    async with McpEnvironment(_answering(answer)) as env:
        with pytest.raises(blamed):
            await env.call_tool("x", {}, 0)


# -- 3. a bare TimeoutError (our own wait_for) is never blamed on the provider ------------------------


def test_a_bare_timeout_is_a_harness_bug_and_a_full_disk_still_stops():
    assert classify(TimeoutError()).kind == "harness_bug"
    assert classify(HarnessBug("x")).kind == "harness_bug" and classify(AgentFailure("hung", "x")).kind == "harness_bug"
    assert classify(OSError(errno.ENOSPC, "full")).stops_campaign


# -- 4. one close-code table ---------------------------------------------------------------------------


def test_a_1010_close_is_a_refusal_in_the_one_table():
    assert classify_close("X", 1010, "").kind == "bad_request"


# -- 5. our _on_message failing is our bug; the provider's malformed message is the provider's ---------


class _Wire(BaseModel):
    type: str
    count: int


class _ToyAdapter(WebsocketAdapter):
    """A provider adapter whose session is ready on any message and whose handler has a bug."""

    provider: ClassVar[str] = "Toy"
    default_endpoint: ClassVar[str] = "ws://unused"
    model_id: ClassVar[str] = "toy"

    async def _open_session(self, config: SessionConfig) -> None:
        return None

    async def _on_message(self, message: dict[str, Any]) -> None:
        parsed = _Wire.model_validate(message)
        self._session_ready()
        if parsed.type == "buggy":
            raise KeyError("a bug of ours")

    async def _send_audio(self, frame) -> None:
        return None

    async def _send_tool_result(self, result) -> None:
        return None


async def _adapter_hearing(*messages: str) -> tuple[_ToyAdapter, asyncio.Event]:
    done = asyncio.Event()

    async def handler(connection) -> None:
        for message in messages:
            await connection.send(message)
        done.set()
        await connection.wait_closed()

    server = await serve(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    adapter = _ToyAdapter(endpoint=f"ws://127.0.0.1:{port}", require_key=False)
    adapter.server = server  # type: ignore[attr-defined]
    return adapter, done


async def test_a_bug_in_our_on_message_raises_harness_bug_from_the_next_call():
    adapter, _ = await _adapter_hearing(json.dumps({"type": "ready", "count": 1}), json.dumps({"type": "buggy", "count": 2}))
    try:
        await adapter.connect(SessionConfig(instructions="", tools=[]))
        await asyncio.wait_for(adapter._reader, 10)
        with pytest.raises(HarnessBug, match="buggy") as caught:
            adapter.poll_events()
        assert isinstance(caught.value.__cause__, KeyError)
        with pytest.raises(HarnessBug):
            await adapter.send_tool_result(None)  # type: ignore[arg-type]
    finally:
        await adapter.close()
        adapter.server.close()  # type: ignore[attr-defined]


async def test_a_malformed_provider_message_is_a_provider_error_not_a_bug():
    adapter, done = await _adapter_hearing(
        json.dumps({"type": "ready", "count": 1}), json.dumps({"type": "x", "count": "many"}), "[1, 2]", "not json"
    )
    try:
        await adapter.connect(SessionConfig(instructions="", tools=[]))
        await done.wait()
        errors: list[AdapterError] = []
        while len(errors) < 3:
            errors += [e for e in adapter.poll_events() if isinstance(e, AdapterError)]
            await asyncio.sleep(0)
        assert [(e.kind, e.code) for e in errors] == [("provider", AdapterErrorCode.MALFORMED)] * 3
    finally:
        await adapter.close()
        adapter.server.close()  # type: ignore[attr-defined]


@pytest.mark.parametrize("adapter_class", [OpenAIRealtimeAdapter, GptLiveAdapter])
@pytest.mark.parametrize("kind", [["session.created"], {"a": 1}, 7, None])
async def test_a_message_whose_type_is_not_a_string_is_malformed_not_our_bug(adapter_class, kind):
    """A ``ws://`` agent sending ``{"type": [...]}`` once made our handler lookup raise ``TypeError``
    (unhashable): a harness bug the agent could cause at will, and an unscored cell."""
    adapter = adapter_class(endpoint="ws://unused", require_key=False)
    with pytest.raises(MalformedMessage, match="type"):
        await adapter._on_message({"type": kind})


# -- 6. C0 chat: a refusal stops the campaign, a conversation too long is the agent's own failure -----


async def test_chat_refusals_are_blamed_by_the_servers_status_and_code(monkeypatch):
    monkeypatch.setenv("FAKE_CHAT_KEY", "sk-wrong")
    async with serve_fake_chat(FakeChatServer(mode="silent")) as fake:
        client = ChatClient(ChatEndpoint("m", fake.base_url, "FAKE_CHAT_KEY", backoff_s=0))
        with pytest.raises(ProviderError) as refused:
            await client.complete([{"role": "user", "content": "hi"}], [])
        monkeypatch.setenv("FAKE_CHAT_KEY", "sk-fake-chat")
        fake.fail_with = [CONTEXT_LENGTH_EXCEEDED]
        with pytest.raises(AgentFailure) as too_long:
            await client.complete([{"role": "user", "content": "hi"}], [])
        await client.aclose()
    assert refused.value.kind == "auth" and classify(refused.value).stops_campaign
    assert too_long.value.kind == "refused"


def _run_c0_chat(fake_url: str, out: Path):
    from typer.testing import CliRunner

    from harness.cli.main import app
    from tests.conftest import DEMO_DATA

    return CliRunner().invoke(app, [
        "run", "--condition", "C0", "--model", "chat:fake-model", "--endpoint", fake_url, "--api-key-env", "FAKE_CHAT_KEY",
        "--data", str(DEMO_DATA), "--only", "demo_benefits_enrollment_001", "--sandbox", "local", "--repeats", "1",
        "--out", str(out),
    ])


@pytest.mark.slow
def test_a_chat_model_past_its_context_length_is_scored_through_the_cli_and_a_bad_key_stops(tmp_path, monkeypatch):
    """Through ``run --condition C0 --model chat:``: the 400 is that model's scored ``refused``
    (it was a HARNESS ERROR with ``harness_error.txt``); the 401 stops the campaign, its cell listed."""
    from tests.fakes.fake_chat_server import API_KEY, serve_fake_chat_in_thread

    monkeypatch.setenv("FAKE_CHAT_KEY", API_KEY)
    with serve_fake_chat_in_thread(FakeChatServer(fail_with=[CONTEXT_LENGTH_EXCEEDED])) as fake:
        result = _run_c0_chat(fake.base_url, tmp_path / "too_long")
    rep_dir = tmp_path / "too_long" / "demo_benefits_enrollment_001" / "rep0"
    assert not (rep_dir / "harness_error.txt").exists(), result.output
    record = json.loads((rep_dir / "result.json").read_text())
    assert record["error"] is None and record["pts"] == 0 and record["outcome"] == "FAILURE"
    assert record["agent_failure"]["kind"] == "refused" and "context_length_exceeded" in record["agent_failure"]["detail"]
    assert result.exit_code == 0, result.output

    monkeypatch.setenv("FAKE_CHAT_KEY", "sk-wrong")
    with serve_fake_chat_in_thread(FakeChatServer()) as fake:
        refused = _run_c0_chat(fake.base_url, tmp_path / "bad_key")
    assert refused.exit_code != 0, refused.output
    manifest = json.loads((tmp_path / "bad_key" / "campaign.json").read_text())
    assert [c["reason"] for c in manifest["unscored_cells"]] == ["provider refused"], manifest


# -- 7. a SystemExit from session code is that cell's harness error, not a silent rc 0 -----------------


async def test_a_system_exit_from_a_cell_is_recorded_as_a_harness_error(tmp_path: Path):
    async def run_cell(cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        raise SystemExit(0)

    settings = CampaignSettings(model=get_model("oracle"), out_dir=tmp_path, repeats=1, retry_backoff_s=0.0)
    result = await run_campaign(settings, ["task_a"], run_cell)
    assert [o.status for o in result.outcomes] == ["harness_error"]
