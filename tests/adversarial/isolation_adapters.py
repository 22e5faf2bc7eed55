"""Out-of-tree adapters for the isolation tests: two thieves and one honest bridge caller.

The thieves are the oracle with a stolen policy (the grader patcher steals nothing, it patches): where they find the task's reference policy they
replay it and pass; where they find nothing they hang up at once and fail. In the harness's process
(``--trust-adapter``) both find it; hosted out of process (the default) neither does.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import ClassVar

import yaml

from harness.agents.oracle_voice import OracleVoiceAgent
from harness.agents.realtime import (
    AgentEvent,
    AudioDelta,
    CallEnded,
    RealtimeAdapter,
    ResponseDone,
    SessionConfig,
    ToolCallRequested,
    ToolResult,
    TranscriptDelta,
)
from harness.audio.frames import AudioFrame
from harness.tasks.models import ReferencePolicy
from tests.scripted_voice_agent import voiced_audio


class _PolicyThief(OracleVoiceAgent):
    """The oracle, given whatever policy :meth:`steal` finds instead of being given one."""

    model_id: ClassVar[str] = "policy-thief"

    def steal(self, config: SessionConfig) -> ReferencePolicy | None:
        raise NotImplementedError

    async def connect(self, config: SessionConfig) -> None:
        policy = self.steal(config)
        if policy is None:  # nothing to replay: hang up, as a thief with nothing would
            self._ended = True
            self._events.append(CallEnded())
            return
        config.reference_policy = policy
        await super().connect(config)


class GcThief(_PolicyThief):
    """Walks the interpreter's objects for the loaded task bundle (its gold and reference policy)."""

    model_id: ClassVar[str] = "gc-thief"

    def steal(self, config: SessionConfig) -> ReferencePolicy | None:
        for obj in gc.get_objects():
            if type(obj).__name__ == "TaskBundle" and getattr(obj, "policy", None) is not None:
                return obj.policy
        return None


class TaskFileThief(_PolicyThief):
    """Reads task files from disk: the task whose tools are this session's, next to the ``harness``
    package it was imported from (the bundled data), or under its working directory."""

    model_id: ClassVar[str] = "task-file-thief"

    def steal(self, config: SessionConfig) -> ReferencePolicy | None:
        import harness

        tools = {tool["name"] for tool in config.tools}
        roots = [Path(harness.__file__).parent / "demo_data" / "tasks", Path.cwd()]
        for gold in (path for root in roots for path in root.glob("**/grading/gold.yaml")):
            task_dir = gold.parent.parent
            spec = yaml.safe_load((task_dir / "tools" / "tool_spec.yaml").read_text())
            if {tool["name"] for tool in spec["tools"]} == tools:
                return ReferencePolicy.model_validate(yaml.safe_load((task_dir / "reference" / "policy.yaml").read_text()))
        return None


class GraderPatcher(_PolicyThief):
    """Steals nothing: patches the grader the session will call to report a pass, then hangs up."""

    model_id: ClassVar[str] = "grader-patcher"

    def steal(self, config: SessionConfig) -> ReferencePolicy | None:
        try:
            from harness.grading.report import GradeReport
            from harness.session import session_effects
        except ImportError:  # hosted: no grader here to patch
            return None

        async def passing(gold, ctx):
            return GradeReport(pts=1, components={"GS": True, "PC": True, "RA": True, "WA": True}, afa=1.0,
                               progress_score=1.0)

        session_effects.grade = passing  # type: ignore[assignment]
        return None


class BridgeCaller(RealtimeAdapter):
    """An honest agent: asks the harness to run one tool (bridge mode), says what it learned, hangs up."""

    model_id: ClassVar[str] = "bridge-caller"
    clock_mode: ClassVar[str] = "virtual"

    def __init__(self) -> None:
        self._events: list[AgentEvent] = []
        self._asked = False

    async def connect(self, config: SessionConfig) -> None:
        if "get_enrollment_window" not in {tool["name"] for tool in config.tools}:
            raise ValueError("this agent only knows the benefits enrollment task")

    async def send_audio(self, frame: AudioFrame) -> None:
        if not self._asked:
            self._asked = True
            self._events.append(ToolCallRequested("call_window", "get_enrollment_window", "{}"))

    async def send_tool_result(self, result: ToolResult) -> None:
        words = "The enrollment window is open." if not result.is_error else "I could not reach the system."
        self._events += [TranscriptDelta(words), AudioDelta(voiced_audio(1200)), ResponseDone(), CallEnded()]

    def poll_events(self) -> list[AgentEvent]:
        events, self._events = self._events, []
        return events
