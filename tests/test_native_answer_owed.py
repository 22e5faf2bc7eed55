"""Native tool mode with an agent whose words follow its calls (a process behind a socket).

The server records the agent's call before its speech reaches the harness; until the agent has
answered, the simulated user must wait for it, exactly as after a bridge tool result, instead of
taking the silence for the end of the agent's turn.
"""

from __future__ import annotations

from harness.agents.native_oracle import NativeOracleAgent
from harness.agents.realtime import AgentEvent, McpEndpoint
from harness.audio.espeak import user_voice
from harness.audio.frames import AudioFrame
from harness.audio.speech_bank import open_speech_source
from harness.events import EventType
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

BENEFITS = DEMO_DATA / "tasks" / "demo_benefits_enrollment_001"
#: How long after its calls land the agent's words arrive (a container's websocket, loaded).
SPEECH_LAG_MS = 600


class _SpeaksAfterItsCallsLand(NativeOracleAgent):
    """The native oracle, its events held for ``SPEECH_LAG_MS`` of media time after each call."""

    def __init__(self, call_tool) -> None:
        super().__init__(call_tool)
        self._held: list[AgentEvent] = []
        self._release_at_ms = -1
        self._now_ms = 0

    async def send_audio(self, frame: AudioFrame) -> None:
        self._now_ms = frame.start_ms
        calls = self.calls_made
        await super().send_audio(frame)
        if self.calls_made > calls:
            self._release_at_ms = frame.start_ms + SPEECH_LAG_MS
        self._held += super().poll_events()

    def poll_events(self) -> list[AgentEvent]:
        if self._now_ms < self._release_at_ms:
            return []
        events, self._held = self._held, []
        return events


async def test_the_user_waits_for_the_answer_owed_to_a_native_call():
    bundle = load_task(BENEFITS)
    env = InProcessEnvironment(bundle.public_bundle())

    async def call_tool(name, args):
        record = await env.call_tool(name, args, None)  # stamped by the server, like any native call
        return record.output, not record.ok

    speech = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    result = await run_duplex_session(bundle, _SpeaksAfterItsCallsLand(call_tool), env, DuplexConfig(speech=speech,
                                      session_dir=None, privileged=True, tool_mode="native",
                                      mcp_endpoint=McpEndpoint(url="in-process")))
    plans = [e.payload for e in result.events.events if e.type == EventType.USER_PLAN]
    assert not [p for p in plans if p.get("recovered")], plans  # never talked into the agent's silence
    assert result.pts == 1, result.grade.explain()
