"""Loading the reference packages, YAML 1.1 typing, and one-line errors for broken packages."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from harness.tasks.errors import TaskLoadError
from harness.tasks.loader import load_task
from tests.package_editing import edit, editable_copy


def load_error(task_dir: Path) -> str:
    with pytest.raises(TaskLoadError) as info:
        load_task(task_dir)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_toy_form_loads_with_yaml_1_1_types(toy_form):
    bundle = load_task(toy_form)
    fields = {f.field: f for f in bundle.gold.artifact_expectations[0].fields}
    assert bundle.task_id == "toy_form_001"
    assert bundle.task.version == "1.0.0" and isinstance(bundle.task.version, str)
    assert type(fields["total_amount"].expected) is float and fields["total_amount"].expected == 200.0
    assert fields["employee_id"].expected == "E1042"
    assert fields["trip_purpose"].grader == "casefold_exact"
    assert [d.user_plan_id for d in bundle.realization_bank.values()][0] == "open"
    assert bundle.observer.tool_act_map == {"request_approval": "REQUEST_APPROVAL", "submit_expense": "COMMIT"}
    assert bundle.policy is not None and bundle.policy.tool_call_count == 7
    assert bundle.latent_world is not None and bundle.latent_world.seed == 4471
    assert bundle.knowledge == [] and bundle.audio_index is None
    assert bundle.taxonomy_raw["workspace"]["primary_artifact"] == "STRUCTURED_FORM"


def test_toy_interview_loads_with_dotted_fields(toy_interview):
    bundle = load_task(toy_interview)
    schema = bundle.workspace.artifacts["interview_1"].schema_
    assert schema is not None and schema.field("technical_depth.evidence") is not None
    assert bundle.events.events == []  # no user/events.yaml: no events
    assert set(bundle.flow.states) == {"START", "S_TECH", "S_LEAD"}


def test_unquoted_date_stays_a_date(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "grading/gold.yaml", "expected: client onsite", "expected: 2026-02-01")
    fields = load_task(task).gold.artifact_expectations[0].fields
    assert fields[1].expected == datetime.date(2026, 2, 1)


def test_missing_gold_file(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    (task / "grading" / "gold.yaml").unlink()
    message = load_error(task)
    assert message.startswith("task 'toy_form_001': grading/gold.yaml: missing")


def test_missing_user_state_is_a_clear_error(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    (task / "user" / "user_state.yaml").unlink()
    assert "user/user_state.yaml: missing (the simulated user's hidden state is required)" in load_error(task)


def test_missing_task_yaml(tmp_path):
    (tmp_path / "empty_task").mkdir()
    assert "task 'empty_task': task.yaml: missing task.yaml" in load_error(tmp_path / "empty_task")


def test_unknown_key_names_the_allowed_keys(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "task.yaml", "tool_load: light", "tool_load: light\ncolour: red")
    message = load_error(task)
    assert "task.yaml: colour = 'red': unknown key (allowed: id, version, title" in message


def test_bad_enum_value_lists_the_choices(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "grading/gold.yaml", "grader: exact, required: true}", "grader: exactt, required: true}")
    message = load_error(task)
    assert (
        "task 'toy_form_001': grading/gold.yaml: artifact_expectations[0].fields[0].grader = 'exactt': "
        "not one of exact, casefold_exact, normalized_phone" in message
    )


def test_missing_required_key_has_no_value(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "user/user_state.yaml", "user_id: synthetic_user_form_001\n", "")
    assert load_error(task).endswith("user/user_state.yaml: user_id: required key missing")


def test_dangling_flow_next_names_the_state(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "user/flow.yaml", "next: S_DONE", "next: S_DONNE")
    message = load_error(task)
    assert "user/flow.yaml: states.S_CORRECTED.transitions[0].next = 'S_DONNE': no such state" in message


def test_undefined_start_state(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "user/flow.yaml", "start: START", "start: BEGIN")
    assert "user/flow.yaml: start = 'BEGIN': start state is not defined" in load_error(task)


def test_yaml_syntax_error_names_the_line(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "tools/tool_spec.yaml", "    effect: {artifact_id: expense_1}", "    effect: {artifact_id: [expense_1}")
    message = load_error(task)
    assert "tools/tool_spec.yaml line 6: invalid YAML" in message


def test_bad_bank_line_names_the_line_number(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "user/realization_bank.jsonl", '{"user_plan_id": "ans_cc"', '{"user_plan_id": "ans_cc",,')
    assert "user/realization_bank.jsonl line 4: invalid JSON" in load_error(task)


def test_bank_line_validation_names_the_line_and_field(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "user/realization_bank.jsonl", '"speech_act": "ANSWER", "variants": [{"variant_id": "ans_cc#v1"',
         '"speech_act": "ANSWER", "variants": [{"variant": "ans_cc#v1"')
    message = load_error(task)
    assert "user/realization_bank.jsonl line 4: variants[0].variant_id: required key missing" in message


def test_bank_is_keyed_by_plan_id_last_line_wins(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    with (task / "user" / "realization_bank.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('\n{"user_plan_id": "open", "speech_act": "OPENING_REQUEST", '
                     '"variants": [{"variant_id": "open#v9", "text": "Morning."}]}\n')
    bank = load_task(task).realization_bank
    assert [v.text for v in bank["open"].variants] == ["Morning."]
    assert len(bank) == 7


def test_non_mapping_top_level(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    (task / "initial_state.json").write_text("[1, 2]", encoding="utf-8")
    assert "initial_state.json: must be a mapping at the top level, got list" in load_error(task)


def test_taxonomy_id_mismatch(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "taxonomy.yaml", "task_id: toy_form_001", "task_id: toy_form_002")
    assert "taxonomy.yaml: task_id = 'toy_form_002': does not match task.yaml id 'toy_form_001'" in load_error(task)


def test_unknown_handler(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "tools/tool_spec.yaml", "handler: update_artifact", "handler: write_anything")
    assert "tools/tool_spec.yaml: tools[0].handler = 'write_anything': not one of kb_search" in load_error(task)


def test_gold_artifact_must_exist(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "grading/gold.yaml", "  - artifact_id: expense_1", "  - artifact_id: expense_9")
    message = load_error(task)
    assert "grading/gold.yaml: artifact_expectations[0].artifact_id = 'expense_9': not an artifact" in message


def test_tool_load_none_with_tools(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "task.yaml", "tool_load: light", "tool_load: none")
    assert "task.yaml: tool_load = 'none': but tools/tool_spec.yaml defines 3 tool(s)" in load_error(task)


def test_invalid_observer_regex(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "user/observer.yaml", 'pattern: "employee id"', 'pattern: "employee (id"')
    assert "user/observer.yaml: patterns[0].pattern = 'employee (id': invalid regular expression" in load_error(task)


def test_path_override_may_not_leave_the_package(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "task.yaml", "tool_load: light", "tool_load: light\ninitial_state: ../secret.json")
    assert "task.yaml: initial_state = '../secret.json': path leaves the task package" in load_error(task)


def test_knowledge_documents_resolve_path_and_title(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    (task / "knowledge" / "docs").mkdir(parents=True)
    (task / "knowledge" / "docs" / "policy.md").write_text("Meals are capped at 100.", encoding="utf-8")
    (task / "knowledge" / "manifest.json").write_text(
        '{"documents": [{"doc_id": "policy", "path": "docs/policy.md", "text": "stale", "gold": true},'
        ' {"doc_id": "faq", "title": "FAQ", "text": "inline", "path": "docs/absent.md"}]}',
        encoding="utf-8",
    )
    docs = load_task(task).knowledge
    assert [(d.doc_id, d.title, d.text) for d in docs] == [
        ("policy", "policy", "Meals are capped at 100."),
        ("faq", "FAQ", "inline"),
    ]


def test_knowledge_path_may_not_leave_the_knowledge_dir(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    (task / "knowledge").mkdir()
    (task / "knowledge" / "manifest.json").write_text(
        '{"documents": [{"doc_id": "leak", "path": "../grading/gold.yaml"}]}', encoding="utf-8"
    )
    message = load_error(task)
    assert "knowledge/manifest.json: documents[0].path = '../grading/gold.yaml': path leaves the knowledge" in message


def test_audio_index_and_meta_are_loaded(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    (task / "user" / "audio").mkdir()
    (task / "user" / "audio" / "index.jsonl").write_text(
        '{"file": "open_v1.flac", "kind": "variant", "user_plan_id": "open", "variant_id": "open#v1",'
        ' "text": "Hi, there.", "voice": "af_bella", "num_samples": 24000, "pcm16_sha256": "ab"}\n\n',
        encoding="utf-8",
    )
    (task / "user" / "audio" / "meta.json").write_text('{"engine": "kokoro", "sample_rate": 24000}', encoding="utf-8")
    bundle = load_task(task)
    assert bundle.audio_index is not None and [r.file for r in bundle.audio_index] == ["open_v1.flac"]
    assert bundle.audio_meta == {"engine": "kokoro", "sample_rate": 24000}


def test_fast_yaml_loader_gives_the_same_python_values_as_safe_load():
    """The bounded C loader must not change YAML 1.1 typing (grading and judge keys use str() of values)."""
    import yaml

    from harness.tasks.bounded_parse import parse_yaml
    from tests.conftest import DEMO_DATA, REFERENCE_FIXTURES

    roots = [DEMO_DATA / "tasks"] + ([REFERENCE_FIXTURES] if REFERENCE_FIXTURES.is_dir() else [])
    files = [p for root in roots for p in root.rglob("*.yaml")]
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        fast, slow = parse_yaml(text), yaml.safe_load(text)
        assert fast == slow and repr(fast) == repr(slow), path
