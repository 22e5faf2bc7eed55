"""Blame by origin at the agent boundary: whatever crosses it from the agent's side is the agent's
failure — the session ends, is graded as the agent left it, and is scored, never raised out of the
runner; our own adapters (``builtin``, ``provider``) keep today's typed blame.

Sessions run in-process on the virtual clock with the hostile adapters of ``hostile_adapters``;
the last tests go through the real CLI (``apex-voice run --model module:Class``).
"""

from __future__ import annotations

import asyncio
import errno
import json
import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.agents.limits import AgentLimits
from harness.agents.realtime import (
    AdapterError,
    AdapterInfo,
    AudioDelta,
    ResponseDone,
    SpeechStarted,
    ToolCallCancelled,
    ToolCallRequested,
    TranscriptDelta,
    TranscriptDone,
    Usage,
)
from harness.agents.text_agents import AgentTurn, ScriptedAgent
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.blame.errors import (
    HarnessBug,
    JudgeUnavailable,
    ProviderError,
    ProviderTransient,
    SandboxFailure,
)
from harness.campaign.sandboxed_cell import SandboxedCellRunner
from harness.cli.main import app
from harness.events import EventType
from harness.results.result_record import ResultRecord
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import run_text_session
from harness.tasks.loader import load_task
from sandbox.errors import AgentImageError, AgentStartFailed, SandboxUnavailableError
from sandbox.local import LocalBackend
from tests.adversarial.hostile_adapters import (
    DeafHangs,
    Hangs,
    Hostile,
    NeverStopsTalking,
    OracleThatFailsToClose,
    OracleThatWillNotClose,
)
from tests.conftest import DEMO_DATA

TASK_ID = "demo_benefits_enrollment_001"
BENEFITS = DEMO_DATA / "tasks" / TASK_ID
BUDGET_S = 3  # long enough for the mid-session misbehaviour, short enough for many sessions


@pytest.fixture
def sigint_handled_by_the_loop():
    """SIGINT as ``run_interruptible`` handles it (a cancellation, never a ``KeyboardInterrupt``), so
    a ``KeyboardInterrupt`` an adapter raises is the agent's, as in a real run."""
    previous = signal.signal(signal.SIGINT, lambda signum, frame: None)
    yield
    signal.signal(signal.SIGINT, previous)


async def _session(adapter, *, kind="external_code", budget_s=BUDGET_S, limits=None, privileged=False):
    bundle = load_task(BENEFITS)
    bundle.task.time_budget_s = budget_s
    speech = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=TASK_ID)
    options = {"limits": limits} if limits is not None else {}
    return await run_duplex_session(bundle, adapter, InProcessEnvironment(bundle.public_bundle()), DuplexConfig(speech=speech,
                                    session_dir=None, agent_kind=kind, privileged=privileged, **options))


def _assert_scored_as_agent_failure(result, kind):
    assert result.agent_failure is not None and result.agent_failure["kind"] == kind, result.agent_failure
    assert result.pts == 0 and result.outcome == "FAILURE"
    failures = [e for e in result.events.events if e.type == EventType.AGENT_FAILURE]
    assert failures and failures[0].payload["kind"] == kind
    assert not [e for e in result.events.events if e.type == EventType.HARNESS_ERROR]
    assert result.events.events[-1].type == EventType.RUN_END  # graded


ANYTHING_RAISED = {
    "ValueError": lambda: ValueError("bad"),
    "RuntimeError": lambda: RuntimeError("bad"),
    "MemoryError": lambda: MemoryError(),
    "OSError(ENOSPC)": lambda: OSError(errno.ENOSPC, "No space left on device"),  # a full disk stops a campaign: not this one
    "ConnectionError": lambda: ConnectionError("dropped"),
    "TimeoutError": lambda: TimeoutError("slow"),
    "ExceptionGroup": lambda: ExceptionGroup("several", [ValueError("a"), ConnectionError("b")]),
    "SandboxFailure": lambda: SandboxFailure("not mine"),
    "SandboxUnavailableError": lambda: SandboxUnavailableError("not mine"),
    "ProviderTransient": lambda: ProviderTransient("retry me"),
    "ProviderError": lambda: ProviderError("stop the campaign", kind="auth"),
    "JudgeUnavailable": lambda: JudgeUnavailable("judge down"),
    "HarnessBug": lambda: HarnessBug("blame the harness"),
    "SystemExit(0)": lambda: SystemExit(0),
    "KeyboardInterrupt": lambda: KeyboardInterrupt(),
    "CancelledError": lambda: asyncio.CancelledError(),
    "GeneratorExit": lambda: GeneratorExit(),
}


@pytest.mark.usefixtures("sigint_handled_by_the_loop")
@pytest.mark.parametrize("method", ["connect", "send_audio", "poll_events", "close"])
@pytest.mark.parametrize("raised", list(ANYTHING_RAISED.values()), ids=list(ANYTHING_RAISED))
async def test_anything_external_code_raises_is_its_own_scored_failure(method, raised):
    adapter = Hostile(method, raised)
    result = await _session(adapter)
    _assert_scored_as_agent_failure(result, "raised")
    assert result.agent_failure["detail"].startswith(f"{method}: {type(raised()).__name__}")
    assert adapter.closed  # closed all the same
    if method != "close":
        assert result.reason == "agent_failure"


@pytest.mark.parametrize(
    ("kind", "raised", "expected"),
    [("remote_agent", ProviderTransient("1011"), "closed"), ("remote_agent", ProviderError("no"), "refused"),
     ("remote_agent", ValueError("odd"), "raised")],
    ids=["transient-is-a-drop", "refusal", "anything-else"],
)
async def test_our_client_of_a_remote_agent_reports_its_drop_and_refusal_as_the_agents(kind, raised, expected):
    _assert_scored_as_agent_failure(await _session(Hostile("send_audio", lambda: raised), kind=kind), expected)


async def test_our_client_of_a_remote_agent_failing_by_its_own_bug_is_still_our_bug():
    with pytest.raises(HarnessBug):
        await _session(Hostile("send_audio", lambda: HarnessBug("ours")), kind="remote_agent")


@pytest.mark.parametrize(
    ("error_kind", "expected"),
    [("transient", "closed"), ("rate_limited", "closed"), ("auth", "refused"), ("bad_request", "refused")],
)
@pytest.mark.parametrize("kind", ["external_code", "remote_agent"])
async def test_an_agents_error_event_ends_its_session_as_its_failure(kind, error_kind, expected):
    adapter = Hostile("none", events=[AdapterError("gone", kind=error_kind)])
    _assert_scored_as_agent_failure(await _session(adapter, kind=kind), expected)


async def test_an_agents_provider_error_event_is_logged_and_the_session_goes_on():
    result = await _session(Hostile("none", events=[AdapterError("hiccup", kind="provider")]))
    assert result.agent_failure is None and result.reason == "time_budget"
    assert result.agent_errors == ["hiccup"]  # the agent's own error, never counted as infrastructure


MALFORMED = {
    "poll_events returns None": (None, "malformed_event"),
    "pcm None": ([AudioDelta(None)], "bad_audio"),  # type: ignore[arg-type]
    "pcm str": ([AudioDelta("abc")], "bad_audio"),  # type: ignore[arg-type]
    "pcm odd length": ([AudioDelta(b"\x00\x01\x02")], "bad_audio"),
    "transcript None": ([TranscriptDelta(None)], "malformed_event"),  # type: ignore[arg-type]
    "final transcript None": ([TranscriptDone(None)], "malformed_event"),  # type: ignore[arg-type]
    "tool name None": ([ToolCallRequested("c1", None, "{}")], "malformed_event"),  # type: ignore[arg-type]
    "tool arguments None": ([ToolCallRequested("c1", "get_enrollment_window", None)], "malformed_event"),  # type: ignore[arg-type]
    "tool call id an int": ([ToolCallRequested(1, "get_enrollment_window", "{}")], "malformed_event"),  # type: ignore[arg-type]
    "cancel for None": ([ToolCallCancelled(None)], "malformed_event"),  # type: ignore[arg-type]
    "cancel of a None id": ([ToolCallCancelled((None,))], "malformed_event"),  # type: ignore[arg-type]
    "metadata with objects": ([AdapterInfo({"x": object()})], "malformed_event"),
    "metadata not a dict": ([AdapterInfo([1, 2])], "malformed_event"),  # type: ignore[arg-type]
    "words not triples": ([TranscriptDelta("hi", words=(("hi", "0"),))], "malformed_event"),  # type: ignore[arg-type]
    "usage with a str": ([ResponseDone(usage=Usage(input_tokens="many"))], "malformed_event"),  # type: ignore[arg-type]
    "error of an unknown kind": ([AdapterError("x", kind="whatever")], "malformed_event"),  # type: ignore[arg-type]
    "not an event at all": ([object()], "malformed_event"),
    "a tool name past its bound": ([ToolCallRequested("c1", "n" * 300, "{}")], "over_limit"),
    "more events than a poll may hold": ([SpeechStarted()] * 2_001, "over_limit"),
}


@pytest.mark.parametrize(("events", "kind"), list(MALFORMED.values()), ids=list(MALFORMED))
async def test_a_malformed_event_is_the_agents_scored_failure(events, kind):
    adapter = Hostile("none", events=events)
    if events is None:  # poll_events hands over ``None`` itself
        adapter.poll_events = lambda: None  # type: ignore[method-assign]
    _assert_scored_as_agent_failure(await _session(adapter), kind)


async def test_transcript_budgets_are_running_counts_per_item_and_per_session():
    limits = AgentLimits(transcript_item_chars=100, transcript_session_chars=250)
    per_item = [TranscriptDelta("x" * 60, item_id="i1"), TranscriptDelta("x" * 60, item_id="i1")]
    _assert_scored_as_agent_failure(await _session(Hostile("none", events=per_item), limits=limits), "over_limit")
    # Items within their own budget add up to the session's.
    per_session = [TranscriptDelta("x" * 90, item_id=f"i{k}") for k in range(3)]
    result = await _session(Hostile("none", events=per_session), limits=limits)
    _assert_scored_as_agent_failure(result, "over_limit")
    assert "session" in result.agent_failure["detail"]


async def test_audio_past_the_delta_bound_is_over_limit():
    limits = AgentLimits(audio_delta_bytes=1000)
    _assert_scored_as_agent_failure(await _session(Hostile("none", events=[AudioDelta(b"\x00" * 1002)]), limits=limits),
                                    "over_limit")


async def test_metadata_the_agent_cannot_give_is_recorded_and_the_session_scored():
    adapter = Hostile("none")
    adapter.metadata = lambda: {"handle": object()}  # type: ignore[method-assign]
    result = await _session(adapter)
    _assert_scored_as_agent_failure(result, "malformed_event")
    assert result.reason == "time_budget"  # it failed after the conversation: the end stays its own


WATCHDOG = AgentLimits(watchdog_factor=1.0, watchdog_grace_s=2.0)  # deadline: budget + 2 s of wall time


@pytest.mark.slow
@pytest.mark.parametrize(
    "adapter", [lambda: Hangs("connect"), lambda: Hangs("send_audio")], ids=["at-connect", "mid-session"],
)
@pytest.mark.parametrize("kind", ["external_code", "remote_agent", "provider", "builtin"])  # every kind of agent
async def test_an_agent_that_hangs_is_ended_by_the_watchdog_and_graded(adapter, kind):
    result = await _session(adapter(), kind=kind, budget_s=2, limits=WATCHDOG)
    _assert_scored_as_agent_failure(result, "hung")


#: Each call's bound (and its abandonment) a test can wait for; the watchdog an hour away.
CALL_BOUND = AgentLimits(agent_call_s=0.25, agent_close_s=0.25, agent_abandon_s=0.25)


@pytest.mark.parametrize(("adapter", "method", "kind"), [
    (Hangs, "connect", "external_code"), (DeafHangs, "connect", "external_code"),
    (Hangs, "send_audio", "remote_agent"), (DeafHangs, "send_audio", "external_code")])
async def test_a_method_that_awaits_forever_ends_its_cell_at_the_call_bound_not_the_watchdog(adapter, method, kind):
    result = await _session(adapter(method), kind=kind, budget_s=1800, limits=CALL_BOUND)
    _assert_scored_as_agent_failure(result, "hung")
    detail = result.agent_failure["detail"]
    assert detail.startswith(f"{method}() did not return within 0.25 s"), detail  # not the watchdog (an hour away)
    assert detail.endswith("abandoned") == (adapter is DeafHangs), detail


#: Only close() bounded tightly: the oracle's other calls may be slow on a loaded machine.
CLOSE_BOUND = AgentLimits(agent_call_s=120, agent_close_s=0.25, agent_abandon_s=0.25)


async def test_a_close_deaf_to_cancellation_is_abandoned_at_its_bound_and_recorded():
    result = await _session(OracleThatWillNotClose(), budget_s=300, limits=CLOSE_BOUND, privileged=True)
    assert result.pts == 1 and result.outcome == "SUCCESS"  # the work was done: only the close hung
    assert result.agent_failure == {**result.agent_failure, "kind": "hung",
                                    "detail": "close() did not return within 0.25 s, nor 0.25 s after it was cancelled: abandoned"}
    assert [e.payload["kind"] for e in result.events.events if e.type == EventType.AGENT_FAILURE] == ["hung"]


@pytest.mark.parametrize("kind", ["external_code", "remote_agent"])
async def test_an_agent_whose_events_never_stop_within_a_frame_is_over_limit_long_before_the_watchdog(kind):
    """One event on every poll: the frame's polls never come back empty. The bound is per frame
    (``events_per_frame``), so the session ends at once, long before the watchdog would see it."""
    result = await _session(NeverStopsTalking("none"), kind=kind, budget_s=2)
    _assert_scored_as_agent_failure(result, "over_limit")
    assert "in one 20 ms frame" in result.agent_failure["detail"]


@pytest.mark.parametrize("kind", ["provider", "builtin"])
async def test_our_own_adapter_whose_events_never_stop_within_a_frame_is_our_bug(kind):
    with pytest.raises(HarnessBug, match="in one 20 ms frame"):
        await _session(NeverStopsTalking("none"), kind=kind, budget_s=2)


async def test_our_own_cancellation_is_never_the_agents_failure():
    adapter = Hangs("send_audio")
    session = asyncio.ensure_future(_session(adapter))
    await adapter.waiting.wait()
    session.cancel()
    with pytest.raises(asyncio.CancelledError):
        await session


async def test_a_session_can_pass_though_the_agent_failed_to_close():
    result = await _session(OracleThatFailsToClose(), budget_s=300, privileged=True)
    assert result.pts == 1 and result.outcome == "SUCCESS"
    assert result.agent_failure["kind"] == "raised" and result.agent_failure["detail"] == "close: ValueError: cannot close"


@pytest.mark.parametrize(
    ("raised", "expected"),
    [(ProviderTransient("5xx"), ProviderTransient), (ProviderError("401", kind="auth"), ProviderError),
     (ValueError("our adapter's bug"), HarnessBug)],
)
async def test_our_provider_adapters_keep_their_typed_blame(raised, expected):
    with pytest.raises(expected):
        await _session(Hostile("send_audio", lambda: raised), kind="provider")


@pytest.mark.parametrize(
    ("error_kind", "expected"), [("transient", ProviderTransient), ("auth", ProviderError)],
)
async def test_a_providers_error_event_keeps_its_campaign_meaning(error_kind, expected):
    with pytest.raises(expected):
        await _session(Hostile("none", events=[AdapterError("x", kind=error_kind)]), kind="provider")


async def test_our_builtin_agents_failures_are_our_bugs():
    with pytest.raises(ValueError):
        await _session(Hostile("send_audio", lambda: ValueError("ours")), kind="builtin")
    with pytest.raises(HarnessBug, match="bad_audio"):
        await _session(Hostile("none", events=[AudioDelta(b"\x00")]), kind="builtin")


# -- C0 text sessions: the same policy -------------------------------------------------------------


class _TextAgentThatRaises(ScriptedAgent):
    def __init__(self, raised: BaseException) -> None:
        super().__init__("hostile-text", [AgentTurn(text="Hello.")] * 3)
        self.raised = raised

    async def act(self, view):
        if view.turn_index >= 1:
            raise self.raised
        return await super().act(view)


class _TextAgentReplying(ScriptedAgent):
    def __init__(self, reply: object) -> None:
        super().__init__("hostile-text", [])
        self.reply = reply

    async def act(self, view):
        return self.reply


async def _text_session(agent, kind="external_code"):
    bundle = load_task(BENEFITS)
    return await run_text_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()), agent_kind=kind)


def _assert_text_scored(result, kind):
    assert result.agent_failure is not None and result.agent_failure["kind"] == kind
    assert result.pts == 0 and result.outcome == "FAILURE"
    assert [e for e in result.events.events if e.type == EventType.AGENT_FAILURE]


@pytest.mark.usefixtures("sigint_handled_by_the_loop")
@pytest.mark.parametrize("raised", [ValueError("x"), SandboxFailure("x"), SystemExit(0), KeyboardInterrupt()],
                         ids=["ValueError", "SandboxFailure", "SystemExit", "KeyboardInterrupt"])
async def test_a_text_agent_raising_is_its_own_scored_failure(raised):
    _assert_text_scored(await _text_session(_TextAgentThatRaises(raised)), "raised")


@pytest.mark.parametrize("reply", [None, AgentTurn(text=None), AgentTurn(tool_calls=[None])],  # type: ignore[arg-type]
                         ids=["None", "text None", "call None"])
async def test_a_malformed_text_reply_is_its_own_scored_failure(reply):
    _assert_text_scored(await _text_session(_TextAgentReplying(reply)), "malformed_event")


async def test_our_builtin_text_agents_failures_are_our_bugs():
    with pytest.raises(ValueError):
        await _text_session(_TextAgentThatRaises(ValueError("ours")), kind="builtin")


# -- agent containers ----------------------------------------------------------------------------


class _ContainerCapableLocal(LocalBackend):
    """The local sandbox claiming the docker backend's capability, so the cell starts the model's agent container."""

    runs_agent_containers = True


def _container_runner(monkeypatch, failure: BaseException, model_key="container:hostile:1"):
    from harness.agents.registry import get_model
    from sandbox import agent_container

    @__import__("contextlib").asynccontextmanager
    async def start_agent_container(sandbox_env, config):
        raise failure
        yield  # pragma: no cover

    # The runner imports these where it starts a container (the local path never loads docker).
    monkeypatch.setattr(agent_container, "ensure_agent_image", lambda image: image)
    monkeypatch.setattr(agent_container, "start_agent_container", start_agent_container)
    bundle = load_task(BENEFITS)
    voice = user_voice(bundle.persona.get("voice_id"))
    return SandboxedCellRunner(
        model=get_model(model_key), backend=_ContainerCapableLocal(pool_size=0), task_dirs={TASK_ID: BENEFITS},
        speech=lambda b: open_speech_source(BENEFITS, "auto", voice=voice, task_id=TASK_ID), tool_mode="native",
    )


async def test_an_agent_container_that_exits_before_it_listens_is_scored_as_exited(monkeypatch, tmp_path):
    from harness.campaign.campaign import CampaignCell

    runner = _container_runner(monkeypatch, AgentStartFailed("agent container exited while starting: exit code 3"))
    record = await runner(CampaignCell(rep=1, task_id=TASK_ID), tmp_path)
    assert record.error is None and record.pts == 0 and record.outcome == "FAILURE"
    assert record.agent_failure["kind"] == "exited" and "exited while starting" in record.agent_failure["detail"]


async def test_a_missing_agent_image_still_stops_the_campaign(monkeypatch, tmp_path):
    from harness.campaign.campaign import CampaignCell

    runner = _container_runner(monkeypatch, AgentImageError("no image"))
    with pytest.raises(AgentImageError):
        await runner(CampaignCell(rep=1, task_id=TASK_ID), tmp_path)


# -- through the real CLI --------------------------------------------------------------------------


def _cli_run(adapter: str, out: Path, *, trusted: bool):
    args = ["run", "--model", f"tests.adversarial.hostile_adapters:{adapter}", "--only", TASK_ID,
            "--sandbox", "local", "--repeats", "1", "--out", str(out), *(["--trust-adapter"] if trusted else [])]
    return CliRunner().invoke(app, args)


def _only_record(out: Path, result) -> ResultRecord:
    records = [ResultRecord.model_validate(json.loads(p.read_text())) for p in out.glob("*/rep*/result.json")]
    assert len(records) == 1, (result.exit_code, result.output)
    return records[0]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("adapter", "detail"),
    [("RaisesMidSession", "send_audio: RuntimeError"), ("RaisesAtConnect", "connect: SystemExit"),
     ("ClaimsTransientAtClose", "close: ProviderTransient"),
     ("RaisesKeyboardInterruptMidSession", "send_audio: KeyboardInterrupt"),
     ("RaisesCancelledErrorMidSession", "send_audio: CancelledError")],
)
def test_the_cli_scores_a_trusted_hostile_adapter_and_writes_its_result(tmp_path, adapter, detail):
    # --trust-adapter: the adapter's own exceptions reach the boundary in this process.
    out = tmp_path / "runs"
    result = _cli_run(adapter, out, trusted=True)
    record = _only_record(out, result)
    assert record.pts == 0 and record.error is None
    assert record.agent_failure["kind"] == "raised" and record.agent_failure["detail"].startswith(detail)
    assert record.agent_isolation == "in-process"
    assert result.exit_code == 0, result.output


@pytest.mark.slow
@pytest.mark.parametrize("adapter", ["RaisesMidSession", "RaisesAtConnect"])
def test_the_cli_scores_an_isolated_hostile_adapter_and_writes_its_result(tmp_path, adapter):
    # By default the adapter runs in its own process: what it raises there reaches us as its host's
    # error or close, which is the agent's failure all the same — scored, never retried or left empty.
    out = tmp_path / "runs"
    result = _cli_run(adapter, out, trusted=False)
    record = _only_record(out, result)
    assert record.pts == 0 and record.error is None
    assert record.agent_failure is not None and record.agent_isolation == "process"
    assert result.exit_code == 0, result.output


@pytest.mark.docker
async def test_a_real_agent_container_that_exits_before_it_listens_is_scored_and_never_retried(docker_engine, tmp_path):
    import io

    from tests.security.attacker.image import ATTACKER_REPOSITORY, _build, build_attacker
    from tests.security.attacker.sessions import native_campaign, short_task

    dockerfile = (f"FROM {build_attacker(docker_engine)}\nLABEL org.apex-voice.test=exits-at-once\n"
                  'ENTRYPOINT ["/no-such-agent"]\nCMD []\n')  # it exits at once: nothing to run
    tag = f"{ATTACKER_REPOSITORY}:exits-at-once"
    image = _build(docker_engine, tag, fileobj=io.BytesIO(dockerfile.encode()))
    try:
        result = await native_campaign(image, short_task(tmp_path, 4), tmp_path / "runs", max_attempts=3)
    finally:
        docker_engine.images.remove(tag, noprune=False)  # this test's own image only
    (outcome,) = result.outcomes
    assert outcome.status == "ran" and outcome.attempts == 1  # retries were left; none was taken
    record = outcome.record
    assert record is not None and record.error is None and record.pts == 0
    assert record.agent_failure["kind"] == "exited" and "exited while starting" in record.agent_failure["detail"]
