"""What the user does when the flow has nothing to say but the task is not done (§4.9).

Without this a stalled agent and a silent user wait on each other forever. The planner is pure
logic: it returns a decision and the runner speaks it. Off by default in C0 validation.

Fixed relative to the reference: a field counts as answered when all of its *fact ids* are
revealed (the reference compared field names with fact ids), and an answer without an explicit
``plan_id`` uses the flow's own default id ``"<next>:ANSWER"`` so it finds its bank entry.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum

from harness.conditions import get_condition
from harness.tasks.models import FlowSpec, SpeechAct
from harness.tasks.runner_lines import FINALIZE_LINE, NUDGE_LINE, TEXT_CLOSING_LINE, closing_line

from .realization import Utterance

__all__ = [
    "FieldAnswer",
    "MAX_RESTATEMENTS",
    "NUDGE_BUDGET",
    "RecoveryDecision",
    "RecoveryMove",
    "RecoveryPlanner",
    "field_answers",
]

NUDGE_BUDGET = 3
MAX_RESTATEMENTS = 2
_ASK_PREFIX = "ASK:"


class RecoveryMove(StrEnum):
    RESTATE = "RESTATE"  # say an ANSWER again (or volunteer the next one)
    FINALIZE = "FINALIZE"  # C0 only: ask the agent to record everything and wrap up
    CLOSE = "CLOSE"  # the sign-off line
    NUDGE = "NUDGE"  # neutral prompt to continue
    END = "END"  # end the session


@dataclass(frozen=True)
class FieldAnswer:
    """The ANSWER the flow gives when the agent asks for ``field``."""

    field: str
    plan_id: str
    fact_ids: tuple[str, ...]


@dataclass(frozen=True)
class RecoveryDecision:
    move: RecoveryMove
    #: What the user says; ``None`` for ``END``.
    text: str | None = None
    #: ``RESTATE`` only: the answer re-stated and the bank variant spoken.
    answer: FieldAnswer | None = None
    variant_id: str | None = None

    def user_plan_payload(self) -> dict[str, object] | None:
        """The ``USER_PLAN`` a runner logs before speaking this move (``None``: a nudge or wrap-up
        prompt, which is no plan). Both runners log the same payload for the same move."""
        if self.move is RecoveryMove.RESTATE:
            answer = self.answer
            return {"plan_id": answer.plan_id if answer else None, "speech_act": "ANSWER",
                    "facts": list(answer.fact_ids) if answer else [], "recovered": True}
        if self.move is RecoveryMove.CLOSE:
            return {"plan_id": "close", "speech_act": "END", "facts": []}
        return None


def field_answers(flow: FlowSpec) -> dict[str, FieldAnswer]:
    """Field → answer for every ``ASK:<field>`` transition that answers, in flow file order."""
    answers: dict[str, FieldAnswer] = {}
    for state in flow.states.values():
        for transition in state.transitions:
            asked, action = transition.when.agent_act, transition.do
            if asked is None or not asked.startswith(_ASK_PREFIX) or action is None:
                continue
            if action.act is not SpeechAct.ANSWER:
                continue
            name = asked[len(_ASK_PREFIX) :]
            plan_id = action.plan_id or f"{transition.next}:{action.act.value}"
            answers[name] = FieldAnswer(field=name, plan_id=plan_id, fact_ids=tuple(action.facts))
    return answers


@dataclass(frozen=True)
class _Lines:
    closing: str
    finalize_prompts: int


# The text runner asks twice for a wrap-up before its own sign-off; speech runners just sign off.
_TEXT_CONDITION_LINES = _Lines(closing=TEXT_CLOSING_LINE, finalize_prompts=2)


class RecoveryPlanner:
    """Re-statements (≤ 2 per field), then finalize/closing once, else nudges (≤ 3), then end."""

    def __init__(self, answers: dict[str, FieldAnswer], *, closing: str, finalize_prompts: int = 0) -> None:
        self._answers = answers
        self._closing = closing
        self._finalize_left = finalize_prompts
        self._says_finalize = finalize_prompts > 0
        self._restated: dict[str, int] = {}
        self._nudges_used = 0
        self._closed = False

    @classmethod
    def for_condition(cls, flow: FlowSpec, condition: str, *, event_seed: int = 1) -> RecoveryPlanner:
        text_session = get_condition(condition).session == "text"
        lines = _TEXT_CONDITION_LINES if text_session else _Lines(closing_line(event_seed), 0)
        return cls(field_answers(flow), closing=lines.closing, finalize_prompts=lines.finalize_prompts)

    @property
    def runner_lines(self) -> list[str]:
        """The lines this planner may say besides re-stated answers (closing, finalize, nudge)."""
        lines = [self._closing, NUDGE_LINE]
        return [*lines, FINALIZE_LINE] if self._says_finalize else lines

    @property
    def restatements(self) -> dict[str, int]:
        return dict(self._restated)

    def decide(
        self,
        *,
        last_act_keys: Iterable[str],
        revealed: Collection[str],
        realize: Callable[[str], Utterance | None],
    ) -> RecoveryDecision:
        """The next move after a user beat that drained no plan while the flow is not done."""
        for answer in self._targets(last_act_keys, revealed):
            utterance = realize(answer.plan_id)
            if utterance is not None:
                self._restated[answer.field] = self._restated.get(answer.field, 0) + 1
                return RecoveryDecision(
                    RecoveryMove.RESTATE, text=utterance.text, answer=answer, variant_id=utterance.variant_id
                )
        if not any(self._unanswered(a, revealed) for a in self._answers.values()):
            return self._wrap_up()
        if self._nudges_used < NUDGE_BUDGET:
            self._nudges_used += 1
            return RecoveryDecision(RecoveryMove.NUDGE, text=NUDGE_LINE)
        return RecoveryDecision(RecoveryMove.END)

    def _targets(self, last_act_keys: Iterable[str], revealed: Collection[str]) -> list[FieldAnswer]:
        asked = [
            self._answers[key[len(_ASK_PREFIX) :]]
            for key in dict.fromkeys(last_act_keys)
            if key.startswith(_ASK_PREFIX) and key[len(_ASK_PREFIX) :] in self._answers
        ]
        asked = [a for a in asked if self._may_restate(a)]
        if asked:
            return asked
        volunteer = next(
            (a for a in self._answers.values() if self._unanswered(a, revealed) and self._may_restate(a)),
            None,
        )
        return [volunteer] if volunteer is not None else []

    def _wrap_up(self) -> RecoveryDecision:
        if self._finalize_left > 0:
            self._finalize_left -= 1
            return RecoveryDecision(RecoveryMove.FINALIZE, text=FINALIZE_LINE)
        if not self._closed:
            self._closed = True
            return RecoveryDecision(RecoveryMove.CLOSE, text=self._closing)
        return RecoveryDecision(RecoveryMove.END)

    def _may_restate(self, answer: FieldAnswer) -> bool:
        return self._restated.get(answer.field, 0) < MAX_RESTATEMENTS

    @staticmethod
    def _unanswered(answer: FieldAnswer, revealed: Collection[str]) -> bool:
        return not all(f in revealed for f in answer.fact_ids)
