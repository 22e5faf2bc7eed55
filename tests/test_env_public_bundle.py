"""PublicBundle: built from a package's raw public files, normalized, stripped, round-tripped.

``fixture_bundle`` is also the way the other environment tests build their bundles: straight from the
fixture's raw JSON/YAML, independent of the harness loader.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
import yaml

from mcp_servers.public_bundle import BUNDLE_FILES, PublicBundle, PublicBundleError
from mcp_servers.public_models import KnowledgeDocument


def fixture_bundle(
    task_dir: Path, documents: list[KnowledgeDocument] | None = None, extra_tools: list[dict] | None = None
) -> PublicBundle:
    """The public bundle of a reference fixture, read from its raw files, plus any extra tools."""
    task = yaml.safe_load((task_dir / "task.yaml").read_text())
    tools = yaml.safe_load((task_dir / "tools" / "tool_spec.yaml").read_text())
    tools["tools"].extend(extra_tools or [])
    return PublicBundle.from_parts(
        task_id=task["id"],
        tools=tools,
        initial_state=json.loads((task_dir / "initial_state.json").read_text()),
        workspace=json.loads((task_dir / "workspace" / "initial_workspace.json").read_text()),
        documents=documents or [],
        approval_required_for=task.get("autonomy", {}).get("approval_required_for", []),
    )


SECRET_DOCS = [
    KnowledgeDocument(
        doc_id="policy", title="Meal policy", text="Meals cap at 100.", gold=True, path="gold/p.md"
    ),
    KnowledgeDocument(doc_id="noise", text="Parking rules.", distractor=True),
]


def test_from_parts_reads_the_fixture_and_strips_grading_flags(toy_form):
    bundle = fixture_bundle(toy_form, SECRET_DOCS)

    assert bundle.task_id == "toy_form_001"
    assert bundle.approval_required_for == ["submit_expense"]
    assert [t.name for t in bundle.tools.tools] == ["update_expense", "request_approval", "submit_expense"]
    assert bundle.initial_state == {"company": "Acme Corp", "expense_policy": {"meal_cap": 100}}
    assert bundle.workspace.artifacts["expense_1"].schema_.field("total_amount").dependents == [
        "approval_status"
    ]
    assert [(d.doc_id, d.gold, d.distractor, d.path) for d in bundle.documents] == [
        ("policy", False, False, None),
        ("noise", False, False, None),
    ]
    assert bundle.documents[0].text == "Meals cap at 100."
    assert SECRET_DOCS[0].gold is True, "the caller's documents are not mutated"


def test_from_parts_turns_yaml_only_values_into_json():
    bundle = PublicBundle.from_parts(
        task_id="t",
        tools={"tools": []},
        initial_state={"trip": {"date": date(2026, 3, 1)}, "codes": ("a", "b")},
        workspace={"artifacts": {}},
        documents=[],
        approval_required_for=[],
    )
    assert bundle.initial_state == {"trip": {"date": "2026-03-01"}, "codes": ["a", "b"]}


@pytest.mark.parametrize("fixture_name", ["toy_form", "toy_interview"])
def test_write_read_round_trip_is_equal(fixture_name, request, tmp_path):
    bundle = fixture_bundle(request.getfixturevalue(fixture_name), SECRET_DOCS)

    bundle.write(tmp_path / "bundle")
    loaded = PublicBundle.read(tmp_path / "bundle")

    assert loaded == bundle
    assert sorted(p.name for p in (tmp_path / "bundle").iterdir()) == sorted(BUNDLE_FILES)
    knowledge = (tmp_path / "bundle" / "knowledge.json").read_text()
    assert '"gold": false' in knowledge and '"gold": true' not in knowledge and "gold/p.md" not in knowledge


def test_write_replaces_existing_files_without_leaving_temporaries(toy_form, tmp_path):
    bundle = fixture_bundle(toy_form)
    bundle.write(tmp_path)
    bundle.write(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(BUNDLE_FILES)


def _written(toy_form, tmp_path) -> Path:
    fixture_bundle(toy_form).write(tmp_path)
    return tmp_path


def test_read_names_the_missing_file(toy_form, tmp_path):
    (_written(toy_form, tmp_path) / "tools.json").unlink()
    with pytest.raises(PublicBundleError, match=r"tools\.json: file missing"):
        PublicBundle.read(tmp_path)


def test_read_names_file_and_line_of_bad_json(toy_form, tmp_path):
    (_written(toy_form, tmp_path) / "initial_workspace.json").write_text('{"artifacts": \n oops}')
    with pytest.raises(PublicBundleError, match=r"initial_workspace\.json: invalid JSON at line 2"):
        PublicBundle.read(tmp_path)


def test_read_names_file_and_field_of_invalid_content(toy_form, tmp_path):
    path = _written(toy_form, tmp_path) / "tools.json"
    tools = json.loads(path.read_text())
    tools["tools"][0]["params"][0]["type"] = 5
    tools["tools"][1]["surprise"] = True
    path.write_text(json.dumps(tools))

    with pytest.raises(PublicBundleError) as caught:
        PublicBundle.read(tmp_path)
    message = str(caught.value)
    assert "tools.json" in message
    assert "tools.0.params.0.type" in message
    assert "tools.1.surprise" in message


def test_read_refuses_environment_without_task_id_and_non_object_state(toy_form, tmp_path):
    root = _written(toy_form, tmp_path)
    (root / "environment.json").write_text('{"seed": 1}')
    with pytest.raises(PublicBundleError, match=r"environment\.json: task_id: Field required"):
        PublicBundle.read(root)
    (root / "environment.json").write_text('{"task_id": "x"}')
    (root / "initial_state.json").write_text("[1, 2]")
    with pytest.raises(PublicBundleError, match=r"initial_state\.json: <root>: must be a JSON object"):
        PublicBundle.read(root)
