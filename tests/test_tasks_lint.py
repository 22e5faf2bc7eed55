"""Cross-file lint: clean on the reference packages, one precise issue per authoring mistake."""

from __future__ import annotations

import json
from pathlib import Path

from harness.tasks.lint import LintIssue, lint_task
from harness.tasks.loader import load_task
from harness.tasks.runner_lines import CLOSING_LINES, NUDGE_LINE
from tests.package_editing import edit, editable_copy


def issues(task_dir: Path, level: str = "error") -> list[str]:
    return [str(i) for i in lint_task(load_task(task_dir)) if i.level == level]


def test_reference_packages_have_no_lint_errors(toy_form, toy_interview):
    for package in (toy_form, toy_interview):
        assert [i for i in lint_task(load_task(package)) if i.level == "error"] == []


def test_issue_string_names_file_and_field():
    issue = LintIssue("error", "grading/gold.yaml", "required_actions[0].args.act_key", "'ASK:foo' is bad")
    assert str(issue) == "grading/gold.yaml: required_actions[0].args.act_key: 'ASK:foo' is bad"
    assert str(LintIssue("warning", "user/audio/index.jsonl", None, "no clip")) == "user/audio/index.jsonl: no clip"


def test_gold_act_key_the_observer_cannot_produce(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "grading/gold.yaml", 'act_key: "ASK:cost_center"', 'act_key: "ASK:cost_centre"')
    assert issues(task) == [
        "grading/gold.yaml: required_actions[0].args.act_key: 'ASK:cost_centre' can never be observed "
        "(no observer pattern or tool act produces it)"
    ]


def test_flow_trigger_and_reveal_acts_must_be_observable(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "user/observer.yaml", "{act: ASK, field: trip_purpose,", "{act: ASK, field: purpose,")
    assert issues(task) == [
        "user/flow.yaml: states.S_EMP.transitions[0].when.agent_act: 'ASK:trip_purpose' can never be observed "
        "(no observer pattern or tool act produces it)"
    ]
    assert issues(task, "warning") == [
        "user/user_state.yaml: facts[1].reveal.agent_acts[0]: 'ASK:trip_purpose' can never be observed "
        "(no observer pattern or tool act produces it)"
    ]


def test_named_field_group_and_tool_acts_produce_any_field(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "user/observer.yaml", '- {act: ASK, field: cost_center, pattern: "cost center"}',
         '- {act: ASK, pattern: "(?P<field>cost_center)"}')
    edit(task, "grading/gold.yaml", 'act_key: "ASK:cost_center"', 'act_key: "COMMIT:submit_expense"')
    assert issues(task) == []


def test_gold_field_that_no_tool_can_write(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "grading/gold.yaml", "{field: cost_center,", "{field: cost_centre,")
    assert issues(task) == [
        "grading/gold.yaml: artifact_expectations[0].fields[2].field: 'cost_centre' can never be written: "
        "not a field of the 'expense_1' schema (fields: approval_status, cost_center, employee_id, "
        "total_amount, trip_purpose)"
    ]


def test_gold_fields_without_any_update_tool(toy_interview, tmp_path):
    task = editable_copy(toy_interview, tmp_path)
    edit(task, "tools/tool_spec.yaml", "handler: update_artifact", "handler: get_entity")
    found = issues(task)
    assert (
        "grading/gold.yaml: artifact_expectations[0].fields[1].field: 'technical_depth.status' can never be "
        "written: no tool writes artifact 'interview_1' (no update_artifact tool bound to it, no commit set_fields)"
    ) in found
    assert not any("fields[0]" in issue for issue in found)  # subject_id is an initial field


def test_committed_lifecycle_needs_a_commit_tool(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "tools/tool_spec.yaml", "handler: commit", "handler: set_lifecycle")
    found = issues(task)
    assert (
        "grading/gold.yaml: artifact_expectations[0].lifecycle_min: 'COMMITTED' is unreachable for artifact "
        "'expense_1': needs a commit tool"
    ) in found
    assert "grading/gold.yaml: terminal_state[0].args.state: 'COMMITTED' is unreachable" in " ".join(found)


def test_ready_for_review_needs_set_lifecycle_or_commit(toy_interview, tmp_path):
    task = editable_copy(toy_interview, tmp_path)
    edit(task, "tools/tool_spec.yaml", "state: READY_FOR_REVIEW", "state: DRAFT")
    assert (
        "grading/gold.yaml: artifact_expectations[0].lifecycle_min: 'READY_FOR_REVIEW' is unreachable for "
        "artifact 'interview_1': needs a set_lifecycle tool able to reach it or a commit tool"
    ) in issues(task)


def test_bank_missing_a_reachable_plan(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    bank = task / "user" / "realization_bank.jsonl"
    bank.write_text("".join(line + "\n" for line in bank.read_text().splitlines() if '"ans_cc"' not in line))
    assert issues(task) == [
        "user/flow.yaml: states.S_PURPOSE.transitions[0].do: reachable plan 'ans_cc' has no variant in "
        "user/realization_bank.jsonl"
    ]


def test_default_plan_id_uses_the_next_state(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "user/flow.yaml", "do: {act: APPROVE, plan_id: approve_submit}", "do: {act: APPROVE}")
    assert issues(task) == [
        "user/flow.yaml: states.S_CORRECTED.transitions[0].do: reachable plan 'S_DONE:APPROVE' has no variant "
        "in user/realization_bank.jsonl"
    ]


def test_unknown_external_event_fact_and_policy_tool(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "user/flow.yaml", "when: {external_event: evt_correct_total}", "when: {external_event: evt_fix}")
    edit(task, "user/flow.yaml", "facts: [cost_center]", "facts: [cost_centre]")
    edit(task, "reference/policy.yaml", "{name: submit_expense,", "{name: submit,")
    assert issues(task) == [
        "reference/policy.yaml: turns[6].tool_calls[0].name: 'submit' is not a tool of tools/tool_spec.yaml",
        "user/flow.yaml: states.S_PURPOSE.transitions[0].do.facts[0]: 'cost_centre' is not a fact of "
        "user/user_state.yaml",
        "user/flow.yaml: states.S_TOTAL.transitions[0].when.external_event: 'evt_fix' is not an event of "
        "user/events.yaml",
    ]


def test_event_repairs_and_fact_updates(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "user/events.yaml", "- expense_1.total_amount", "- expense_1.total\n      - expense_2.total_amount")
    edit(task, "user/events.yaml", "expected_repairs:", "fact_updates: {total_amount_v3: 1}\n    expected_repairs:")
    assert issues(task) == [
        "user/events.yaml: events[0].fact_updates: 'total_amount_v3' is not a fact of user/user_state.yaml",
        "user/events.yaml: events[0].expected_repairs[0]: 'total' is not a field of the 'expense_1' schema",
        "user/events.yaml: events[0].expected_repairs[1]: 'expense_2.total_amount' names no artifact of "
        "workspace/initial_workspace.json (expected '<artifact_id>.<field>')",
    ]


def test_unknown_predicate_kind(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "grading/gold.yaml", "kind: commit_authorized", "kind: commit_authorised")
    [issue] = issues(task)
    assert issue.startswith("grading/gold.yaml: required_actions[1].kind: 'commit_authorised' is not one of ")


def test_taxonomy_lint_rules(toy_form, tmp_path):
    task = editable_copy(toy_form, tmp_path)
    edit(task, "taxonomy.yaml", "primary_artifact: STRUCTURED_FORM", "primary_artifact: null")
    edit(task, "taxonomy.yaml", "duplex_events: [MID_SPEECH_CORRECTION]", "duplex_events: []")
    edit(task, "taxonomy.yaml", "modes: [G_SCHEMA, G_SEQUENCE, G_POLICY]", "modes: [G_JUDGE]")
    edit(task, "taxonomy.yaml", "industry_setting: horizontal_enterprise", "industry_setting: healthcare")
    assert issues(task) == [
        "taxonomy.yaml: workspace.primary_artifact: is null but workspace.artifact_optional is false "
        "(name the artifact class or mark it optional)",
        "taxonomy.yaml: grading.modes: ['G_JUDGE'] has no deterministic grading mode",
    ]
    assert issues(task, "warning") == [
        "taxonomy.yaml: interaction.duplex_events: is empty although conditions include a full-duplex "
        "condition (C2/C3)",
        "taxonomy.yaml: professional_work.industry_setting: 'healthcare' is outside the normalized vocabulary",
    ]


def test_empty_grading_modes_is_an_error(toy_interview, tmp_path):
    task = editable_copy(toy_interview, tmp_path)
    edit(task, "taxonomy.yaml", "modes: [G_EVIDENCE, G_SCHEMA]", "modes: []")
    assert issues(task) == ["taxonomy.yaml: grading.modes: [] has no deterministic grading mode"]


def _audio_row(text: str, kind: str = "variant") -> str:
    return json.dumps({"file": "x.flac", "kind": kind, "text": text, "num_samples": 1, "pcm16_sha256": "00"})


def test_audio_index_must_cover_every_spoken_text(toy_interview, tmp_path):
    task = editable_copy(toy_interview, tmp_path)
    bundle = load_task(task)
    texts = [v.text for entry in bundle.realization_bank.values() for v in entry.variants]
    missing_variant = texts.pop()
    rows = [_audio_row(t) for t in texts] + [_audio_row(t, "closing") for t in CLOSING_LINES[1:]]
    (task / "user" / "audio").mkdir()
    (task / "user" / "audio" / "index.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert issues(task) == [
        f"user/audio/index.jsonl: no clip for variant 'ans_lead#v2' (text {missing_variant!r})",
        f"user/audio/index.jsonl: no clip for closing line 0 (text {CLOSING_LINES[0]!r})",
        f"user/audio/index.jsonl: no clip for nudge line (text {NUDGE_LINE!r})",
    ]
