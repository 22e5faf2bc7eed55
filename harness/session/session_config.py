"""How one voice session is run: everything ``run_duplex_session`` takes besides the task, the agent
and the environment, in one object a caller builds once (a campaign cell, a test, a benchmark)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from harness.agents.limits import AGENT_LIMITS, AgentLimits
from harness.agents.realtime import McpEndpoint
from harness.blame.codes import AgentKind
from harness.blame.errors import AgentFailure
from harness.events import EventBus
from harness.grading.judge import FieldJudge
from harness.user.llm_act_observer import LlmActClassifier

from .heard_speech import HEARING_MODES, Hearing
from .turn_policy import turn_policy

if TYPE_CHECKING:  # annotations only: a text session's config loads no audio
    from harness.audio.acoustics import AcousticChain
    from harness.audio.speech_bank import SpeechSource

    from .clocks import MediaClock

__all__ = ["TOOL_MODES", "DuplexConfig", "ToolMode"]

ToolMode = Literal["bridge", "native"]
#: ``bridge``: the harness executes the agent's function calls; ``native``: the agent calls MCP itself.
TOOL_MODES: tuple[ToolMode, ...] = ("bridge", "native")


@dataclass(frozen=True)
class DuplexConfig:
    """One voice session's settings; every field but ``speech`` has the default direct callers want.

    ``agent_kind`` (the model's ``ModelSpec.agent_kind``; a campaign always passes it) decides blame
    at the agent boundary. ``agent_failure`` is a failure that happened before the session (its
    container exited): the adapter is never connected, and the environment is graded as it is.
    """

    speech: SpeechSource
    session_dir: Path | None = None
    judge: FieldJudge | None = None
    seed: int = 1
    max_turns: int = 44
    run_id: str | None = None
    clock: MediaClock | None = None
    privileged: bool = False
    #: A live consumer (the TUI, a campaign's progress) subscribes before the first event.
    on_bus: Callable[[EventBus], None] | None = None
    condition: str = "C2"
    tool_latency_ms: int = 0
    #: What the sandbox reported when it started (``backend`` and its metadata), for ``SANDBOX_STARTED``.
    sandbox: dict[str, Any] | None = None
    observer: LlmActClassifier | None = None
    tool_mode: ToolMode = "bridge"
    mcp_endpoint: McpEndpoint | None = None
    acoustics: AcousticChain | None = None
    agent_kind: AgentKind = "builtin"
    limits: AgentLimits = AGENT_LIMITS
    agent_failure: AgentFailure | None = None
    #: How the user hears the agent's words: ``asr`` (only what ASR of the played audio carries,
    #: the default) or ``claimed`` (its transcript as it played; for scripted test voices).
    hearing: Hearing = "asr"

    def __post_init__(self) -> None:
        # The condition's registration (harness.conditions) says whether it is a voice condition.
        if turn_policy(self.condition).degraded_audio != (self.acoustics is not None):
            need = "needs an acoustics chain" if self.acoustics is None else "takes no acoustics chain"
            raise ValueError(f"condition {self.condition} {need} (its registration says whether it degrades "
                             "the user's audio: C3 does, C1/C2 do not)")
        if self.hearing not in HEARING_MODES:
            raise ValueError(f"unknown hearing {self.hearing!r}; expected one of {', '.join(HEARING_MODES)}")
        if self.tool_mode not in TOOL_MODES:
            raise ValueError(f"unknown tool mode {self.tool_mode!r}; expected one of {', '.join(TOOL_MODES)}")
        if self.tool_mode == "native" and self.mcp_endpoint is None:
            raise ValueError("native tool mode needs the task's MCP endpoint to hand to the agent")
