"""Build-time realization compiler: frozen text variants for every plan a flow can emit (§4.11).

Task authors run it once and ship the bank, so sessions never generate wording live; it also
stands in at runtime when a package ships an empty bank. Deterministic template realizer only.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.tasks.models import Action, FlowSpec, RealizationEntry, RealizationVariant, SpeechAct, UserState

from .stable_hash import stable_key

__all__ = [
    "FORBIDDEN_PROCEDURE_PHRASES",
    "REALIZER_NAME",
    "REALIZER_VERSION",
    "TEMPLATES",
    "compile_bank",
]

REALIZER_NAME = "template_realizer"
REALIZER_VERSION = "1.0"
_DEFAULT_CONTEXT = "there"
_EXTRA_CANDIDATES = 2

#: Per act, in order. ``{facts}`` = the plan's fact values joined by ", " (else the context);
#: ``{ctx}`` = the minimal context (else "there").
TEMPLATES: dict[SpeechAct, tuple[str, ...]] = {
    SpeechAct.OPENING_REQUEST: ("Hi, I need help to {ctx}.", "Hello \u2014 I'd like to {ctx}."),
    SpeechAct.ANSWER: ("{facts}.", "It's {facts}.", "Sure, {facts}."),
    SpeechAct.CONFIRM: ("Yes, that's right.", "Correct."),
    SpeechAct.CORRECT: ("Actually, it's {facts}.", "No \u2014 {facts}."),
    SpeechAct.APPROVE: ("Yes, go ahead.", "Approved, please proceed."),
    SpeechAct.REVOKE: ("Wait, don't do that.", "Stop \u2014 cancel that."),
    SpeechAct.DENY: ("No, don't.", "Please don't."),
    SpeechAct.CLARIFY: ("What do you mean?", "Can you clarify?"),
    SpeechAct.ACKNOWLEDGE: ("Got it.", "Okay."),
    SpeechAct.BACKCHANNEL: ("mhm", "right"),
    SpeechAct.INTENT_SWITCH: ("Actually, one more thing \u2014 {ctx}.", "Oh, also {ctx}."),
    SpeechAct.ASK: ("Can you tell me {ctx}?", "What about {ctx}?"),
    SpeechAct.END: ("Thanks, that's all.", "Great, thank you."),
}

#: A user who recites the procedure would do the agent's job; such variants are rejected.
FORBIDDEN_PROCEDURE_PHRASES: tuple[str, ...] = (
    "step 1",
    "first you",
    "the procedure is",
    "the checklist is",
    "here are the steps",
    "you should then",
    "the steps are",
)


@dataclass(frozen=True)
class _PlanInput:
    plan_id: str
    action: Action


def compile_bank(
    flow: FlowSpec,
    user_state: UserState,
    *,
    variants_per_plan: int = 2,
    minimal_context: str | None = None,
) -> dict[str, RealizationEntry]:
    """One bank entry per plan id the flow can emit, keyed by plan id, in flow file order."""
    values = {fact.id: fact.value for fact in user_state.facts}
    ctx = minimal_context or _DEFAULT_CONTEXT
    bank: dict[str, RealizationEntry] = {}
    for plan in _plan_inputs(flow):
        facts = [f for f in plan.action.facts if f in values]
        fact_text = ", ".join(str(values[f]) for f in facts) or ctx
        candidates = TEMPLATES[plan.action.act][: variants_per_plan + _EXTRA_CANDIDATES]
        texts = [t.format(facts=fact_text, ctx=ctx) for t in candidates]
        kept = [t for t in texts if _acceptable(t)][:variants_per_plan]
        bank[plan.plan_id] = RealizationEntry(
            user_plan_id=plan.plan_id,
            speech_act=plan.action.act.value,
            variants=[_variant(plan, plan.action.act.value, facts, n, text) for n, text in enumerate(kept)],
        )
    return bank


def _plan_inputs(flow: FlowSpec) -> list[_PlanInput]:
    found: dict[str, _PlanInput] = {}
    for state_id, state in flow.states.items():
        pairs = [(state_id, state.on_enter)] + [(t.next, t.do) for t in state.transitions]
        for owner, action in pairs:
            if action is None:
                continue
            plan_id = action.plan_id or f"{owner}:{action.act.value}"
            found.setdefault(plan_id, _PlanInput(plan_id, action))
    return list(found.values())


def _acceptable(text: str) -> bool:
    lowered = text.lower()
    return bool(text.strip()) and not any(phrase in lowered for phrase in FORBIDDEN_PROCEDURE_PHRASES)


def _variant(
    plan: _PlanInput, speech_act: str, facts: list[str], index: int, text: str
) -> RealizationVariant:
    return RealizationVariant(
        variant_id=f"{plan.plan_id}#v{index + 1}",
        text=text,
        expressed_fact_ids=list(facts),
        compiler={
            "realizer": REALIZER_NAME,
            "version": REALIZER_VERSION,
            "seed": index,
            "prompt_hash": stable_key(speech_act, text),
        },
        checksum=stable_key(text),
    )
