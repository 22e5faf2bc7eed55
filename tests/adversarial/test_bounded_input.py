"""An agent cannot exhaust or freeze the harness: every path from it is bounded and linear.

A websocket agent that announces a 3 GiB frame is refused at the frame's header (nothing of it is
buffered); an agent that queues audio past the bound is the agent's failure; the audio queue costs
linear work however the audio is cut; SIGTERM ends the harness even when an agent has starved its
loop; and an agent that floods audio through the real CLI (``ws://``) is stopped at the bound
with its cell's ``result.json`` written. Issue 33's floods of what the harness keeps per thing the
agent names (MCP call names, items and errors, fresh responses, one-sample deltas, events on
every poll) are stopped the same way for ``ws://``, in-process and hosted agents, the CLI process
under 256 MiB throughout.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from harness.agents.container_agent import ContainerAgentAdapter
from harness.agents.limits import AGENT_LIMITS, AgentLimits
from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.agents.realtime import AdapterError, CallEnded, SessionConfig
from harness.audio.frames import FRAME_SAMPLES, ms_to_samples
from harness.blame.codes import AdapterErrorCode
from harness.blame.errors import AgentFailure
from harness.events import EventType
from harness.session.channels import AgentChannel, AgentResponse
from tests.conftest import REPO
from tests.event_builders import events
from tests.fakes.flooding_agent import FloodingAgent, FloodPlan, send_event, transcript_chunk
from tui.state import reduce_all
from tui.state.reducer import LINE_CHARS

TASK_ID = "demo_benefits_enrollment_001"
#: Generous bounds for conditions to become true (never a measured duration).
PATIENCE_S = 120.0


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


async def _until(condition, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + PATIENCE_S
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"not within {PATIENCE_S:.0f} s: {what}"
        await asyncio.sleep(0.01)


async def _events_until_error(adapter) -> list:
    seen: list = []
    await _until(lambda: seen.extend(adapter.poll_events()) or any(isinstance(e, AdapterError) for e in seen),
                 "an AdapterError from the adapter")
    await asyncio.sleep(0.05)
    return seen + adapter.poll_events()


# -- the websocket frame -----------------------------------------------------------------------


async def test_a_frame_announced_at_3_gib_is_refused_at_its_header_without_buffering_it():
    async with FloodingAgent(FloodPlan("huge_frame")) as agent:
        adapter = OpenAIRealtimeAdapter(endpoint=agent.url, model="", require_key=False)
        before = _rss_bytes()
        await adapter.connect(SessionConfig(instructions="", tools=[]))
        try:
            events = await _events_until_error(adapter)
            await _until(lambda: agent.close_code is not None, "the client's close frame")
        finally:
            await adapter.close()
        grown = _rss_bytes() - before
    errors = [e for e in events if isinstance(e, AdapterError)]
    assert [(e.kind, e.code) for e in errors] == [("bad_request", AdapterErrorCode.OVER_LIMIT)]
    assert agent.close_code == 1009
    # The peer wrote far more than the limit; none of it stayed in the harness.
    assert agent.sent > 8 * AGENT_LIMITS.ws_message_bytes or agent.flood_done.is_set()
    assert grown < 8 * AGENT_LIMITS.ws_message_bytes, f"RSS grew by {grown / 2**20:.0f} MiB"


async def test_an_agent_container_over_the_frame_limit_fails_as_over_limit_and_the_call_ends():
    async with FloodingAgent(FloodPlan("huge_frame", payload_bytes=16 * 1024**2)) as agent:
        adapter = ContainerAgentAdapter(endpoint=agent.url)
        await adapter.connect(SessionConfig(instructions="", tools=[]))
        try:
            events = await _events_until_error(adapter)
        finally:
            await adapter.close()
    errors = [e for e in events if isinstance(e, AdapterError)]
    assert [e.code for e in errors] == [AdapterErrorCode.OVER_LIMIT]
    assert isinstance(events[-1], CallEnded)


# -- the agent audio queue -----------------------------------------------------------------------


def _pcm(samples: int, start: int = 0) -> bytes:
    return (np.arange(start, start + samples) % 30000).astype("<i2").tobytes()


def test_queueing_audio_past_the_bound_is_the_agents_failure_and_queues_nothing():
    channel = AgentChannel(AgentLimits(queued_audio_ms=1000))
    response = AgentResponse("r1")
    channel.enqueue(response, "i1", _pcm(ms_to_samples(900)))
    with pytest.raises(AgentFailure) as failure:
        channel.enqueue(response, "i1", _pcm(ms_to_samples(200)))
    assert failure.value.kind == "over_limit"
    assert channel.queued_samples == response.queued_samples == ms_to_samples(900)
    channel.next_frame()  # a frame played: there is room for 20 ms more
    channel.enqueue(response, "i1", _pcm(FRAME_SAMPLES))
    assert channel.queued_samples == ms_to_samples(900)


def test_a_response_streamed_at_its_pace_is_counted_and_held_nowhere_but_the_queue():
    channel = AgentChannel(AgentLimits(queued_audio_ms=100))
    response = AgentResponse("r1")
    for _ in range(50):  # 50 × 100 ms streamed at the pace it plays: never over the queue bound
        channel.enqueue(response, "i1", _pcm(ms_to_samples(100)))
        while channel.queued_samples:
            channel.next_frame()
    assert response.queued_samples == response.played_samples == 50 * ms_to_samples(100)
    assert channel.queued_samples == 0 and channel.chunk_count == 0


def test_the_audio_queue_keeps_each_delta_once_and_plays_them_in_order():
    """Linear: a delta is stored as it came (never copied into a rebuilt buffer) and each frame
    walks only the deltas it plays; the output is the input, sample for sample."""
    channel = AgentChannel()
    response = AgentResponse("r1")
    deltas = [_pcm(7, start=7 * i) for i in range(5000)]  # 7-sample deltas: many per frame
    for delta in deltas:
        channel.enqueue(response, "i1", delta)
    assert channel.chunk_count == len(deltas)
    played = []
    while channel.queued_samples:
        before = channel.chunk_count
        frame, _ = channel.next_frame()
        played.append(frame)
        assert before - channel.chunk_count <= FRAME_SAMPLES // 7 + 1
    out = np.concatenate(played)[: 7 * len(deltas)]
    assert out.tobytes() == b"".join(deltas)
    assert channel.played_by_item[("r1", "i1")] == 7 * len(deltas)


# -- transcripts ------------------------------------------------------------------------------


def test_the_tui_keeps_a_bounded_line_however_long_the_agent_streams():
    """Each delta costs at most one line's worth of work: the line stops growing at its bound."""
    deltas = [(EventType.AGENT_TRANSCRIPT_PARTIAL, 100 + i, {"text": transcript_chunk(i, 1024), "response_id": "r1"})
              for i in range(1000)]
    view = reduce_all(events(*deltas))
    (line,) = view.transcript
    assert line.partial and len(line.text) == LINE_CHARS
    assert line.text == "".join(transcript_chunk(i, 1024) for i in range(8))[:LINE_CHARS]


# -- SIGTERM -----------------------------------------------------------------------------------


def _children(pid: int) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            found.append((int(entry.name), cmdline))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness.cli.main", *args]


@pytest.mark.slow
async def test_sigterm_ends_a_running_campaign_with_its_sandbox_torn_down(tmp_path):
    async with FloodingAgent(FloodPlan("transcript", transcript_deltas=0)) as agent:  # a silent agent
        process = await asyncio.create_subprocess_exec(
            *_cli("run", "--model", agent.url, "--sandbox", "local", "--only", TASK_ID, "--repeats", "1",
                  "--out", str(tmp_path / "runs")),
            cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"},
        )
        try:
            await _until(lambda: any("mcp_servers" in c for _, c in _children(process.pid)) or process.returncode is not None,
                         "the session's task server")
            assert process.returncode is None
            servers = [pid for pid, c in _children(process.pid) if "mcp_servers" in c]
            await _until(lambda: agent.flood_done.is_set(), "the agent's session opened")
            process.send_signal(signal.SIGTERM)
            _, stderr = await asyncio.wait_for(process.communicate(), PATIENCE_S)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert process.returncode == 143, stderr.decode()
    assert "terminated" in stderr.decode()
    await _until(lambda: not any(_alive(pid) for pid in servers), "the task server gone")


@pytest.mark.slow
def test_sigterm_ends_a_command_whose_loop_an_agent_starved(tmp_path):
    """The loop never gets control back (a blocking adapter); the signal still ends the process."""
    script = tmp_path / "starved.py"
    script.write_text(textwrap.dedent("""
        import asyncio, sys, time
        from harness.cli import interrupts
        interrupts.FORCE_EXIT_AFTER_S = 1.0
        async def starve():
            await asyncio.sleep(0)
            print("starving", flush=True)
            while True:
                time.sleep(0.01)
        interrupts.run_interruptible(starve())
    """))

    process = subprocess.Popen([sys.executable, str(script)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "starving"
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=PATIENCE_S)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143, stderr
    assert "did not unwind" in stderr


# -- a flood through the real CLI ----------------------------------------------------------------


#: The harness's stated peak-RSS bound while an agent floods it (docs/security.md, Limits).
FLOOD_RSS_BOUND_MIB = 256


def _peak_rss_mib(pid: int) -> float:
    """The process's peak RSS so far (``VmHWM``), 0 once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    return next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM:")), 0.0)


async def _communicate_watching_peak(process) -> tuple[bytes, float]:
    """``communicate()``, sampling the CLI process's peak RSS until it exits (it only grows)."""
    communicating = asyncio.ensure_future(process.communicate())
    peak = 0.0
    while not communicating.done():
        peak = max(peak, _peak_rss_mib(process.pid))
        await asyncio.wait([communicating], timeout=0.05)
    _, stderr = communicating.result()
    return stderr, peak


async def _run_cli(model: str, out: Path, *extra: str, patience_s: float = PATIENCE_S) -> tuple[int, bytes, float]:
    """``apex-voice run --model MODEL`` on the task: its exit code, stderr and peak RSS (MiB)."""
    process = await asyncio.create_subprocess_exec(
        *_cli("run", "--model", model, "--sandbox", "local", "--only", TASK_ID, "--repeats", "1", "--out", str(out),
              *extra),
        cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        stderr, peak = await asyncio.wait_for(_communicate_watching_peak(process), patience_s)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, stderr, peak


async def _run_against(plan: FloodPlan, out: Path, patience_s: float = PATIENCE_S) -> tuple[FloodingAgent, bytes, float]:
    async with FloodingAgent(plan) as agent:
        _, stderr, peak = await _run_cli(agent.url, out, patience_s=patience_s)
    return agent, stderr, peak


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["audio", "huge_frame"])
async def test_a_ws_agent_flooding_is_stopped_at_the_bound_and_its_cell_is_scored(tmp_path, mode):
    out = tmp_path / "runs"
    agent, stderr, peak_mib = await _run_against(FloodPlan(mode), out)
    if mode == "audio":  # stopped at the queue bound, long before the agent ran out of audio to send
        assert agent.sent * agent.plan.delta_ms < agent.plan.audio_ms
    record = json.loads((out / TASK_ID / "rep0" / "result.json").read_text())
    assert record["agent_failure"]["kind"] == "over_limit", (record, stderr.decode()[-2000:])
    assert record["pts"] == 0 and record["error"] is None
    assert 0 < peak_mib < FLOOD_RSS_BOUND_MIB, f"the harness peaked at {peak_mib:.0f} MiB"  # was 2.7 GB / 1.8 GB


class _MisbehavingAgent(FloodingAgent):
    """A ws:// agent that, once it has seen the task, sends one bad thing instead of a flood."""

    def __init__(self, misdeed: str) -> None:
        super().__init__(FloodPlan("audio"))
        self.misdeed = misdeed

    async def _flood(self, ws) -> None:
        try:
            if self.misdeed == "odd_audio":  # 3 bytes: not PCM16
                await send_event(ws, "response.created", response={"id": "r1", "object": "realtime.response", "status": "in_progress"})
                await send_event(ws, "response.output_audio.delta", response_id="r1", item_id="i1", output_index=0,
                            content_index=0, delta=base64.b64encode(b"abc").decode())
            else:  # a server error close: retried 3x and left empty before
                await ws.close(1011, "internal error")
        finally:
            self.flood_done.set()


@pytest.mark.slow
@pytest.mark.parametrize(("misdeed", "kind"), [("odd_audio", "bad_audio"), ("close_1011", "closed")])
async def test_a_ws_agent_that_misbehaves_once_is_scored_never_retried_or_left_empty(tmp_path, misdeed, kind):
    out = tmp_path / "runs"
    agent = _MisbehavingAgent(misdeed)
    async with agent:
        process = await asyncio.create_subprocess_exec(
            *_cli("run", "--model", agent.url, "--sandbox", "local", "--only", TASK_ID, "--repeats", "1", "--out", str(out)),
            cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        _, stderr = await asyncio.wait_for(process.communicate(), PATIENCE_S)
    record = json.loads((out / TASK_ID / "rep0" / "result.json").read_text())
    assert record["agent_failure"]["kind"] == kind, (record, stderr.decode()[-2000:])
    assert record["pts"] == 0 and record["error"] is None and record["infra_errors"] == []
    assert process.returncode == 0


async def _container_client_session(agent: FloodingAgent):
    """One duplex session through the client ``container:IMAGE`` agents get, with their blame."""
    from harness.audio.espeak import user_voice
    from harness.audio.speech_bank import open_speech_source
    from harness.session.duplex_runner import DuplexConfig, run_duplex_session
    from harness.session.environment_port import InProcessEnvironment
    from harness.tasks.loader import load_task
    from tests.conftest import DEMO_DATA

    task_dir = DEMO_DATA / "tasks" / TASK_ID
    bundle = load_task(task_dir)
    bundle.task.time_budget_s = 20
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=TASK_ID)
    async with agent:
        return await run_duplex_session(bundle, ContainerAgentAdapter(endpoint=agent.url),
                                        InProcessEnvironment(bundle.public_bundle()),
                                        DuplexConfig(speech=speech, session_dir=None, agent_kind="remote_agent"))


@pytest.mark.slow
@pytest.mark.parametrize(("misdeed", "kind"), [("odd_audio", "bad_audio"), ("close_1011", "closed")])
async def test_an_agent_container_that_misbehaves_once_is_scored(misdeed, kind):
    """The same misdeeds from behind the ``container:`` client (ContainerAgentAdapter): scored, never raised."""
    result = await _container_client_session(_MisbehavingAgent(misdeed))
    assert result.agent_failure is not None and result.agent_failure["kind"] == kind, result.agent_failure
    assert result.pts == 0 and result.outcome == "FAILURE"
    assert not [e for e in result.events.events if e.type == EventType.HARNESS_ERROR]
    # The agent's own error event is logged (actor ``agent``) before it is blamed; none is the harness's.
    assert not [e for e in result.events.events if e.type == EventType.INFRA_FAILURE and e.actor != "agent"]
    assert len(result.agent_errors) <= 1


@pytest.mark.slow
async def test_a_ws_agent_streaming_1500_transcript_deltas_is_stopped_at_the_item_bound_and_scored(tmp_path):
    """The issue's 1,500 deltas of 1 KiB in one item (the loop froze: 1 s of media in 80 s): now over_limit."""
    out = tmp_path / "runs"
    agent, stderr, peak_mib = await _run_against(FloodPlan("transcript", transcript_deltas=1_500), out)
    record = json.loads((out / TASK_ID / "rep0" / "result.json").read_text())
    assert record["agent_failure"]["kind"] == "over_limit", (record, stderr.decode()[-2000:])
    assert "character" in record["agent_failure"]["detail"] or "transcript" in record["agent_failure"]["detail"]
    assert record["pts"] == 0 and record["error"] is None
    assert 0 < peak_mib < FLOOD_RSS_BOUND_MIB, f"the harness peaked at {peak_mib:.0f} MiB"


# -- every structure the agent keys or sizes, through the CLI, for every agent kind ----------------

#: A flood stopped by the session's event bound runs until 250,000 events have arrived.
FLOOD_PATIENCE_S = 600.0


def _scored_over_limit(out: Path, stderr: bytes) -> dict:
    record = json.loads((out / TASK_ID / "rep0" / "result.json").read_text())
    assert record["agent_failure"] is not None, (record, stderr.decode()[-2000:])
    assert record["agent_failure"]["kind"] == "over_limit", (record["agent_failure"], stderr.decode()[-2000:])
    assert record["pts"] == 0 and record["error"] is None and record["infra_errors"] == []
    return record


@pytest.mark.slow
@pytest.mark.parametrize(("plan", "bound"), [
    # 3 MB MCP call names, every one kept (1.5 GB RSS in ~22 s before).
    (FloodPlan("mcp_names"), "characters of a name"),
    # The same with short names: the MCP items the client keeps are counted, and their errors.
    (FloodPlan("mcp_names", name_chars=40, mcp_errors=False), "MCP call items"),
    (FloodPlan("mcp_names", name_chars=40), "MCP call errors"),
    # response.done with fresh ids (614 MB before: a record per response and a signal each in memory).
    (FloodPlan("responses"), "responses"),
    # One-sample audio deltas (318 MB before: a numpy array per sample within the 120 s queue bound).
    (FloodPlan("one_sample"), "events"),
], ids=["mcp_names_3mb", "mcp_items", "mcp_errors", "responses", "one_sample"])
async def test_a_ws_agent_flooding_what_the_harness_keeps_is_stopped_under_256_mib(tmp_path, plan, bound):
    out = tmp_path / "runs"
    # Events arrive at the realtime client's pace: 250,000 take ~40 s on a 2-core host.
    _, stderr, peak_mib = await _run_against(plan, out, patience_s=FLOOD_PATIENCE_S)
    record = _scored_over_limit(out, stderr)
    assert bound in record["agent_failure"]["detail"], record["agent_failure"]
    assert 0 < peak_mib < FLOOD_RSS_BOUND_MIB, f"the harness peaked at {peak_mib:.0f} MiB"


@pytest.mark.slow
@pytest.mark.parametrize(("adapter", "isolation", "bound"), [
    # poll_events always returns 2,000 events (1.5 GB in 40 s before: the bound was per poll).
    ("FloodsEveryPoll", "in-process", "in one 20 ms frame"),
    ("FloodsResponses", "in-process", "responses"),
    ("FloodsOneSampleDeltas", "in-process", "audio deltas"),
    # The same adapter hosted out of process (347 MB before): its events arrive over the socket.
    ("FloodsEveryPoll", "process", "events"),
])
async def test_an_adapter_flooding_what_the_harness_keeps_is_stopped_under_256_mib(tmp_path, adapter, isolation, bound):
    out = tmp_path / "runs"
    trust = ["--trust-adapter"] if isolation == "in-process" else []
    # A hosted adapter's events arrive over its socket: 250,000 take ~90 s on a 2-core host.
    _, stderr, peak_mib = await _run_cli(f"tests.adversarial.hostile_adapters:{adapter}", out, *trust,
                                         patience_s=FLOOD_PATIENCE_S)
    record = _scored_over_limit(out, stderr)
    assert record["agent_isolation"] == isolation
    assert bound in record["agent_failure"]["detail"], record["agent_failure"]
    assert 0 < peak_mib < FLOOD_RSS_BOUND_MIB, f"the harness peaked at {peak_mib:.0f} MiB"
