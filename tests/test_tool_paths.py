"""Three tool paths on one whole demo task, through ``apex-voice run`` and a local sandbox.

- ``bridge``: the OpenAI adapter and the protocol fake playing the reference policy as function
  calls, executed by the harness;
- ``mcp-provider``: the same adapter and fake in native tool mode: the session declares the task's
  MCP server with its agent token, the fake (as the provider) connects with the MCP SDK client and
  calls the tools itself, and the harness only observes the calls at the server;
- ``mcp-agent``: the native oracle, its own MCP client.

The provider path grades exactly like the bridge run of the same scripted policy, its calls are in
``events.jsonl`` as observed at the server, and ``results --by tool-path`` puts the three side by side.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.fakes.openai_realtime_fake import OpenAIRealtimeFake
from tests.fakes.threaded import in_thread

# One worker runs the module: its three campaigns (``runs``) run once, not once per worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("tool_paths")]

#: The shortest demo task on the realtime clock (about 114 s of media time with the reference policy).
TASK = "demo_offsite_coordination_001"


def _run(out: Path, *args: str) -> None:
    result = CliRunner().invoke(
        app, ["run", *args, "--only", TASK, "--sandbox", "local", "--repeats", "1", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output


def _record(out: Path) -> dict:
    (path,) = out.glob(f"{TASK}/rep0/result.json")
    return json.loads(path.read_text(encoding="utf-8"))


def _events(out: Path) -> list[dict]:
    record = _record(out)
    path = out / TASK / "rep0" / record["run_id"] / "events.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The three campaigns (one session each), and the two fakes that played the provider."""
    root = tmp_path_factory.mktemp("tool-paths")
    turns = load_task(DEMO_DATA / "tasks" / TASK).policy.turns
    fakes = {}
    for path, mode in (("bridge", "bridge"), ("mcp-provider", "native")):
        with in_thread(OpenAIRealtimeFake(turns)) as fake:
            _run(root / path, "--model", fake.url, "--tool-mode", mode)
        fakes[path] = fake
    _run(root / "mcp-agent", "--model", "native-oracle", "--tool-mode", "native")
    return root, fakes


def test_the_provider_path_grades_like_the_bridge_and_its_calls_are_observed_at_the_server(runs):
    root, fakes = runs
    bridge, provider = _record(root / "bridge"), _record(root / "mcp-provider")
    assert (bridge["tool_path"], provider["tool_path"]) == ("bridge", "mcp-provider")
    assert provider["pts"] == bridge["pts"] == 1, provider["explain"]
    assert provider["components"] == bridge["components"]
    assert provider["failed_predicates"] == bridge["failed_predicates"] == []

    expected = [c.name for t in load_task(DEMO_DATA / "tasks" / TASK).policy.turns for c in t.tool_calls]
    calls = [e for e in _events(root / "mcp-provider") if e["type"] == "TOOL_CALL"]
    assert [c["payload"]["tool"] for c in calls] == expected
    assert {c["payload"]["source"] for c in calls} == {"server"}
    assert {c["payload"]["source"] for c in _events(root / "bridge") if c["type"] == "TOOL_CALL"} == {"bridge"}

    fake = fakes["mcp-provider"]
    assert not fake.invalid and not fake.violations and not fake.mcp_errors
    (tool,) = fake.of_type("session.update")[0]["session"]["tools"]
    assert tool["type"] == "mcp" and tool["require_approval"] == "never"
    assert tool["headers"]["Authorization"].startswith("Bearer ") and len(tool["headers"]["Authorization"]) > 40
    assert not fake.of_type("conversation.item.create"), "the harness sent no function output"
    assert [e["type"] for e in fake.sent_of_type("mcp_list_tools.completed")] == ["mcp_list_tools.completed"]
    assert len(fake.sent_of_type("response.mcp_call.completed")) + len(fake.sent_of_type("response.mcp_call.failed")) == len(expected)

    signals = [e["payload"]["signal"] for e in _events(root / "mcp-provider") if e["type"] == "AGENT_SIGNAL"]
    assert signals.count("mcp_call_started") == len(expected)
    run_start = next(e for e in _events(root / "mcp-provider") if e["type"] == "RUN_START")
    assert run_start["payload"]["tool_path"] == "mcp-provider" and run_start["payload"]["tool_mode"] == "native"


def test_results_by_tool_path_puts_the_three_paths_side_by_side(runs):
    root, _ = runs
    out = root / "report"
    result = CliRunner().invoke(
        app, ["results", str(root / "bridge"), str(root / "mcp-agent"), str(root / "mcp-provider"),
              "--by", "tool-path", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    report = json.loads((out / "tool_paths.json").read_text(encoding="utf-8"))
    print((out / "tool_paths.md").read_text(encoding="utf-8"))
    paths = {p["tool_path"]: p for p in report["paths"]}
    assert list(paths) == ["bridge", "mcp-agent", "mcp-provider"]
    calls = len([c for t in load_task(DEMO_DATA / "tasks" / TASK).policy.turns for c in t.tool_calls])
    for path in paths.values():
        assert path["sessions"] == 1 and path["pts_pct"] == 100.0
        assert path["calls"] == path["timed_calls"] == calls
    # Realtime runs have wall round trips; the virtual-clock agent's calls take no media time.
    assert paths["bridge"]["round_trip_wall_p50_ms"] > 0 and paths["mcp-provider"]["round_trip_wall_p50_ms"] > 0
    assert paths["mcp-agent"]["round_trip_media_p95_ms"] == 0 and paths["mcp-agent"]["round_trip_wall_p50_ms"] is None
    assert report["per_task"] == {TASK: {"bridge": [1], "mcp-agent": [1], "mcp-provider": [1]}}
    assert "| mcp-provider | 1 | 1 | 100.0 |" in result.output


def test_results_by_an_unknown_grouping_is_a_usage_error(runs):
    root, _ = runs
    result = CliRunner().invoke(app, ["results", str(root / "bridge"), "--by", "model"])
    assert result.exit_code == 2 and "--by 'model'" in result.output
