"""Published hashing and frozen-wording vectors; also reads the user side of the reference fixtures.

``read_user_side`` builds just the parts of a task bundle the simulated user needs, straight from
the models, so the user tests do not depend on the package loader.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from harness.tasks.models import (
    Condition,
    EventProgram,
    FlowSpec,
    ObserverSpec,
    RealizationEntry,
    RealizationVariant,
    TaskSpec,
    UserState,
)
from harness.user.flow_engine import Observation
from harness.user.realization import select_variant
from harness.user.realization_compiler import compile_bank
from harness.user.simulator import SimulatedUser
from harness.user.stable_hash import scenario_id, stable_choice, stable_int, stable_key
from tests.conftest import TOY_FORM, TOY_INTERVIEW, require_reference_fixtures


def _yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def read_bank(path: Path) -> dict[str, RealizationEntry]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    entries = [RealizationEntry.model_validate(json.loads(line)) for line in lines]
    return {e.user_plan_id: e for e in entries}


def read_user_side(task_dir: Path) -> SimpleNamespace:
    """The bundle attributes :class:`SimulatedUser` reads, validated by the task-file models."""
    require_reference_fixtures()
    events = task_dir / "user" / "events.yaml"
    return SimpleNamespace(
        task=TaskSpec.model_validate(_yaml(task_dir / "task.yaml")),
        user_state=UserState.model_validate(_yaml(task_dir / "user" / "user_state.yaml")),
        flow=FlowSpec.model_validate(_yaml(task_dir / "user" / "flow.yaml")),
        observer=ObserverSpec.model_validate(_yaml(task_dir / "user" / "observer.yaml")),
        events=EventProgram.model_validate(_yaml(events)) if events.exists() else EventProgram(),
        realization_bank=read_bank(task_dir / "user" / "realization_bank.jsonl"),
    )


# --- Appendix A ------------------------------------------------------------------------------


def test_stable_key_vector():
    assert stable_key("a", 1, "b") == "7931f823c3c09c216d4a216d8fa9e8ee"


def test_stable_int_vector():
    assert stable_int("x") == 4911813408643835691


def test_stable_choice_vector():
    assert stable_choice(["v1", "v2", "v3", "v4"], "task@1:C0", 7, "plan_x") == "v1"


def test_stable_choice_rejects_empty_sequence():
    with pytest.raises(ValueError, match="non-empty"):
        stable_choice([], "x")


def test_scenario_id_uses_plain_enum_values():
    assert scenario_id("t", "1.0.0", Condition.C2) == "t@1.0.0:C2:FROZEN_SYNTHETIC"
    assert scenario_id("t", "1.0.0", "C0", "HUMAN_AUDIT") == "t@1.0.0:C0:HUMAN_AUDIT"


@pytest.mark.parametrize("task_dir", [TOY_FORM, TOY_INTERVIEW], ids=lambda p: p.name)
def test_bank_checksums_and_prompt_hashes_follow_the_published_hashing(task_dir):
    bank = read_user_side(task_dir).realization_bank
    variants = [(e.speech_act, v) for e in bank.values() for v in e.variants]
    assert variants
    for speech_act, variant in variants:
        assert variant.checksum == stable_key(variant.text), variant.variant_id
        assert variant.compiler["prompt_hash"] == stable_key(speech_act, variant.text), variant.variant_id


SELECTIONS = {
    (TOY_FORM, "C0"): [
        "open#v2",
        "ans_emp#v1",
        "ans_purpose#v2",
        "ans_cc#v1",
        "ans_total#v2",
        "correct_total#v2",
        "approve_submit#v2",
    ],
    (TOY_FORM, "C2"): [
        "open#v1",
        "ans_emp#v1",
        "ans_purpose#v2",
        "ans_cc#v2",
        "ans_total#v2",
        "correct_total#v2",
        "approve_submit#v2",
    ],
    (TOY_INTERVIEW, "C0"): ["open#v1", "ans_tech#v1", "ans_lead#v2"],
    (TOY_INTERVIEW, "C2"): ["open#v1", "ans_tech#v1", "ans_lead#v1"],
}


@pytest.mark.parametrize(("task_dir", "condition"), list(SELECTIONS), ids=lambda v: getattr(v, "name", v))
def test_variant_selection_matches_appendix_a(task_dir, condition):
    side = read_user_side(task_dir)
    scenario = scenario_id(side.task.id, side.task.version, condition)
    chosen = [
        select_variant(side.realization_bank, plan_id, scenario).variant_id
        for plan_id in side.realization_bank
    ]
    assert chosen == SELECTIONS[(task_dir, condition)]


def test_select_variant_returns_utterance_fields():
    bank = {
        "p": RealizationEntry(
            user_plan_id="p",
            speech_act="ANSWER",
            variants=[RealizationVariant(variant_id="p#v1", text="It's 4.")],
        )
    }
    utterance = select_variant(bank, "p", "t@1:C0:FROZEN_SYNTHETIC")
    assert (utterance.plan_id, utterance.variant_id, utterance.text, utterance.speech_act) == (
        "p",
        "p#v1",
        "It's 4.",
        "ANSWER",
    )


def test_select_variant_is_none_without_entry_or_variants():
    bank = {"empty": RealizationEntry(user_plan_id="empty", speech_act="ANSWER", variants=[])}
    assert select_variant(bank, "missing", "s") is None
    assert select_variant(bank, "empty", "s") is None


# --- realization compiler -------------------------------------------------------------------


@pytest.mark.parametrize("task_dir", [TOY_FORM, TOY_INTERVIEW], ids=lambda p: p.name)
def test_compiler_reproduces_the_shipped_bank_except_the_older_openings(task_dir):
    side = read_user_side(task_dir)
    compiled = compile_bank(side.flow, side.user_state)
    assert list(compiled) == list(side.realization_bank)
    for plan_id, entry in side.realization_bank.items():
        if entry.speech_act != "OPENING_REQUEST":
            assert compiled[plan_id] == entry, plan_id


def test_compiled_opening_uses_the_current_templates_and_the_context():
    side = read_user_side(TOY_FORM)
    opening = compile_bank(side.flow, side.user_state, minimal_context="file my expenses")["open"]
    assert [v.text for v in opening.variants] == [
        "Hi, I need help to file my expenses.",
        "Hello \u2014 I'd like to file my expenses.",
    ]


def test_compiler_drops_procedural_variants_and_defaults_plan_ids():
    flow = FlowSpec.model_validate(
        {"states": {"START": {"on_enter": {"act": "INTENT_SWITCH"}, "terminal": True}}}
    )
    entry = compile_bank(flow, UserState(user_id="u"), minimal_context="step 1 is to cancel")[
        "START:INTENT_SWITCH"
    ]
    assert entry.variants == []


def test_simulator_compiles_wording_when_the_bank_is_empty():
    side = read_user_side(TOY_FORM)
    side.realization_bank = {}
    user = SimulatedUser(side, condition="C0")
    user.next_plans(Observation())  # the opening
    (plan,) = user.next_plans(Observation(new_act_keys=["ASK:employee_id"]))
    assert user.realize(plan).text in {"E1042.", "It's E1042."}
