"""An agent that hangs up, or fails, in the middle of a response ends the call once its queued audio
has played: the response it left open must not hold the session to the task's time budget.

The bug this guards (stop 29): a container agent killed mid-response was scored correctly, but its
session ran on to the 720 s budget (90 s of wall time per such cell in CI, 12 minutes against a
live provider) and its RUN_END said ``time_budget``.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from harness.agents.realtime import (
    AdapterError,
    AgentEvent,
    AudioDelta,
    CallEnded,
    RealtimeAdapter,
    SessionConfig,
    ToolResult,
    TranscriptDelta,
)
from harness.audio.espeak import user_voice
from harness.audio.frames import FRAME_MS, AudioFrame
from harness.audio.speech_bank import open_speech_source
from harness.events import EventType
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.scripted_voice_agent import voiced_audio

TASK_ID = "demo_benefits_enrollment_001"
SPEAKS_AT_MS = 12_000  # after the user's opening request
SPOKEN_MS = 1_200


class _LeavesMidResponse(RealtimeAdapter):
    """Starts an answer (words and audio), then leaves before the response is done."""

    model_id: ClassVar[str] = "leaves-mid-response"
    clock_mode: ClassVar[str] = "virtual"

    def __init__(self, *, failing: bool) -> None:
        self._failing = failing
        self._events: list[AgentEvent] = []
        self._left = False

    async def connect(self, config: SessionConfig) -> None:
        pass

    async def send_audio(self, frame: AudioFrame) -> None:
        if self._left or frame.start_ms < SPEAKS_AT_MS:
            return
        self._left = True
        self._events += [TranscriptDelta("Welcome, let me"), AudioDelta(voiced_audio(SPOKEN_MS))]
        if self._failing:
            self._events.append(AdapterError("the agent's process died", kind="provider"))
        self._events.append(CallEnded())

    async def send_tool_result(self, result: ToolResult) -> None:
        pass

    def poll_events(self) -> list[AgentEvent]:
        events, self._events = self._events, []
        return events


@pytest.mark.parametrize("failing", [False, True], ids=["hangs-up", "fails"])
async def test_the_call_ends_when_the_audio_an_agent_left_behind_has_played(failing):
    task_dir = DEMO_DATA / "tasks" / TASK_ID
    bundle = load_task(task_dir)
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=TASK_ID)
    result = await run_duplex_session(bundle, _LeavesMidResponse(failing=failing),
                                      InProcessEnvironment(bundle.public_bundle()),
                                      DuplexConfig(speech=speech, session_dir=None))
    (run_end,) = [e for e in result.events.events if e.type == EventType.RUN_END]
    assert run_end.payload["reason"] == "agent_ended"
    # What it sent before leaving played out (and was heard) before the call ended, well within the budget.
    (agreement,) = [e for e in result.events.events if e.type == EventType.SPEECH_AGREEMENT]
    assert agreement.payload["played_ms"] == SPOKEN_MS
    assert SPEAKS_AT_MS + SPOKEN_MS <= run_end.media_time_ms <= SPEAKS_AT_MS + SPOKEN_MS + 10 * FRAME_MS
    assert run_end.media_time_ms < bundle.task.time_budget_s * 1000
    assert result.pts == 0
    assert (result.agent_errors != []) is failing
