"""Text agents for condition C0: the interface and the two deterministic agents.

The oracle replays a task's ``reference/policy.yaml`` one turn per user beat; the no-op agent ends
the call at once. Adversarial agents in the tests are scripted agents with their own turns. LLM
agents (``harness.agents.chat_agent``) set ``continues_after_tools``: after their tool calls run,
the runner asks them again, with the results, before the user speaks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.tasks.models import ReferencePolicy

__all__ = ["AgentObservationView", "AgentTurn", "NoOpAgent", "ScriptedAgent", "TextAgent", "ToolCallRequest"]


@dataclass(frozen=True)
class ToolCallRequest:
    name: str
    args: Any = field(default_factory=dict)
    #: The model's id for the call, echoed with its result (``None`` for scripted agents).
    call_id: str | None = None


@dataclass(frozen=True)
class AgentTurn:
    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    end_call: bool = False
    #: Calls the agent listed after its ``end_call``: the call is over, so the runner logs them as
    #: dropped and never executes them.
    after_end_call: list[ToolCallRequest] = field(default_factory=list)


@dataclass(frozen=True)
class AgentObservationView:
    """What a text agent sees on its turn: the user's words and its previous tool results
    (``{tool, ok, result, call_id}``)."""

    user_text: str
    tool_results: list[dict[str, Any]]
    available_tools: list[dict[str, Any]]
    turn_index: int


class TextAgent(Protocol):
    model_id: str
    #: Asked again (with the results, no new user words) after its tool calls have run.
    continues_after_tools: bool

    async def reset(self, system_prompt: str, tools: list[dict[str, Any]]) -> None: ...

    async def act(self, view: AgentObservationView) -> AgentTurn: ...


class ScriptedAgent:
    """Plays fixed turns in order, then ends the call."""

    continues_after_tools = False

    def __init__(self, model_id: str, turns: list[AgentTurn]) -> None:
        self.model_id = model_id
        self._turns = list(turns)
        self._next = 0

    @classmethod
    def oracle(cls, policy: ReferencePolicy) -> ScriptedAgent:
        return cls(
            "oracle",
            [
                AgentTurn(
                    text=t.text,
                    tool_calls=[ToolCallRequest(c.name, c.args) for c in t.tool_calls],
                    end_call=t.end_call,
                )
                for t in policy.turns
            ],
        )

    async def reset(self, system_prompt: str, tools: list[dict[str, Any]]) -> None:
        self._next = 0

    async def act(self, view: AgentObservationView) -> AgentTurn:
        if self._next >= len(self._turns):
            return AgentTurn(end_call=True)
        turn = self._turns[self._next]
        self._next += 1
        return turn


class NoOpAgent:
    """An inactive agent: says nothing, calls nothing, hangs up. No valid task may pass with it."""

    model_id = "noop"
    continues_after_tools = False

    async def reset(self, system_prompt: str, tools: list[dict[str, Any]]) -> None:
        return None

    async def act(self, view: AgentObservationView) -> AgentTurn:
        return AgentTurn(end_call=True)
