"""One campaign cell in a text condition (C0, or an installed one): the text session against the same
sandboxed task server.

The sandbox, tool bridge, grading and result layout are the C2 cell's (``SandboxedCellRunner``);
only the session differs. The agent is a text agent: ``chat:MODEL`` as registered, or the text
form of a built-in voice agent (the oracle replays the reference policy, the no-op agent hangs up).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.agents.registry import ModelSpec
from harness.agents.text_agents import NoOpAgent, ScriptedAgent, TextAgent
from harness.blame.errors import AgentFailure
from harness.conditions import conditions, get_condition
from harness.results.result_record import ResultRecord
from harness.session.mcp_environment import McpEnvironment
from harness.session.text_runner import TextSessionResult, run_text_session
from harness.tasks.bundle import TaskBundle
from sandbox.backend import SandboxEnvironment

from .plan import CampaignCell
from .sandboxed_cell import SandboxedCellRunner

__all__ = ["TEXT_FORMS", "TextCellRunner", "cell_runner_class", "condition_problem", "text_agent_for"]

def _text_oracle(bundle: TaskBundle) -> TextAgent:
    if bundle.policy is None:  # as the voice oracle says when it connects
        raise ValueError("the oracle needs the task's reference/policy.yaml (it is registered privileged)")
    return ScriptedAgent.oracle(bundle.policy)


#: Built-in voice agents that have a C0 form.
TEXT_FORMS: dict[str, Callable[[TaskBundle], TextAgent]] = {
    "oracle": _text_oracle,
    "noop": lambda bundle: NoOpAgent(),
}


def text_agent_for(spec: ModelSpec, bundle: TaskBundle, condition: str = "C0") -> TextAgent:
    """The text agent of ``spec`` for a text ``condition``; ``ValueError`` names the model when it has no text form."""
    if spec.interface == "text":
        return spec.create_adapter()  # type: ignore[return-value]  # a TextAgent by its interface
    if spec.key in TEXT_FORMS:
        return TEXT_FORMS[spec.key](bundle)
    raise ValueError(condition_problem(spec, condition))


def condition_problem(spec: ModelSpec, condition: str) -> str | None:
    """Why ``spec`` cannot run in ``condition`` (one line), or ``None`` when it can.

    Raises:
        UnknownConditionError: no condition has this name.
    """
    text_session = get_condition(condition).session == "text"
    if text_session and spec.interface != "text" and spec.key not in TEXT_FORMS:
        return (
            f"model {spec.key!r} is a realtime voice agent; --condition {condition} needs a text agent "
            f"(chat:MODEL, {', '.join(TEXT_FORMS)})"
        )
    if not text_session and spec.interface == "text":
        name = spec.key.partition(":")[2] or spec.key
        text = ", ".join(c.name for c in conditions().values() if c.session == "text")
        return f"model {spec.key!r} is a text agent: use --condition {text}, or cascade:{name} for voice"
    return None


class TextCellRunner(SandboxedCellRunner):
    """A cell runner whose sessions are text sessions (a condition registered with ``session="text"``)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if get_condition(self.condition).session != "text":
            raise ValueError(f"TextCellRunner condition {self.condition!r} is not a text condition")

    async def run_session(
        self,
        cell: CampaignCell,
        bundle: TaskBundle,
        env: McpEnvironment,
        session_dir: Path,
        run_id: str,
        sandbox_env: SandboxEnvironment,
        *,
        agent_failure: AgentFailure | None = None,
    ) -> TextSessionResult:
        agent = text_agent_for(self.model, bundle, self.condition)
        # The session closes the agent and takes its metadata, through the agent boundary. (C0 agents
        # never run from an image, so ``agent_failure`` is never given here.)
        # A campaign's user recovers from a stalled agent, as in a voice session (validate's does not).
        return await run_text_session(bundle, agent, env, run_dir=session_dir.parent, judge=self.judge,
                                      seed=self.seed, run_id=run_id, agent_kind=self.model.agent_kind,
                                      max_turns=self.max_turns, recover=True, observer=self.observer)

    def record(
        self, session: TextSessionResult, cell: CampaignCell, *, wall_s: float, sandbox: dict[str, Any]
    ) -> ResultRecord:
        return ResultRecord(
            task_id=session.task_id,
            rep=cell.rep,
            model=self.model.key,
            run_id=session.run_id,
            condition=self.condition,
            pts=session.pts,
            components=dict(session.grade.components),
            turns=session.turns,
            outcome=session.outcome,
            reason=session.reason,
            observer=self.observer.name if self.observer is not None else "deterministic",
            wall_s=round(wall_s, 1),
            provider_model=session.adapter_meta.get("model"),
            afa=session.grade.afa,
            failed_predicates=list(session.grade.failed_predicates),
            fields=list(session.grade.fields),
            sandbox=dict(sandbox),
            agent_isolation=self.agent_isolation,
            adapter=dict(session.adapter_meta),
            explain=session.grade.explain(),
            agent_failure=session.agent_failure,
        )


def cell_runner_class(condition: str) -> type[SandboxedCellRunner]:
    """The cell runner of a condition's runner kind (its registration's ``session``): the text cell
    for a text condition, the voice cell (:class:`SandboxedCellRunner`) for a voice one."""
    return TextCellRunner if get_condition(condition).session == "text" else SandboxedCellRunner
