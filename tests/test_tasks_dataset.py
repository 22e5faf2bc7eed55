"""Data resolution, SHA256SUMS verification and the dataset index."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import datasets
import pytest

from harness.tasks import dataset as dataset_module
from harness.tasks.checksums import ChecksumManifest
from harness.tasks.dataset import BUNDLED_DATA, resolve_data
from harness.tasks.errors import DataNotFoundError, TaskLoadError, UnknownTaskError
from harness.tasks.index import index_row, write_index
from harness.tasks.loader import load_task

INDEX_KEYS = [
    "task_id", "version", "title", "profession", "industry", "economic_function", "archetype",
    "delegation_patterns", "user_profile", "temporal_dynamics", "primary_artifact", "autonomy_level",
    "approval_required_for", "knowledge_burden", "tool_burden", "risk_tier", "required_fact_count",
    "time_budget_s", "tools", "duplex_event_types", "required_fields", "oracle_tool_calls",
    "num_user_plans", "path",
]


@pytest.fixture
def dataset_root(toy_form, toy_interview, tmp_path) -> Path:
    """A writable dataset root with both reference packages under tasks/."""
    root = tmp_path / "dataset"
    for package in (toy_interview, toy_form):
        shutil.copytree(package, root / "tasks" / package.name)
    for path in [root, *root.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return root


def test_dataset_root(dataset_root):
    source = resolve_data(dataset_root)
    assert source.kind == "dataset" and source.root == dataset_root
    assert source.task_ids == ["toy_form_001", "toy_interview_001"]
    assert source.checksums is None


def test_folder_of_packages(dataset_root):
    source = resolve_data(str(dataset_root / "tasks"))
    assert source.kind == "folder" and source.task_ids == ["toy_form_001", "toy_interview_001"]


def test_single_package(toy_form):
    source = resolve_data(toy_form)
    assert source.kind == "package" and source.task_dirs == [toy_form] and source.checksums is None


def test_environment_variable_is_used_when_no_path_is_given(dataset_root, monkeypatch):
    monkeypatch.setenv("APEX_VOICE_DATA", str(dataset_root))
    assert resolve_data(None).root == dataset_root
    assert resolve_data(dataset_root / "tasks" / "toy_form_001").kind == "package"  # explicit path wins


def test_bundled_data_is_the_last_resort(dataset_root, tmp_path, monkeypatch):
    assert BUNDLED_DATA.name == "demo_data" and BUNDLED_DATA.parent.name == "harness"
    monkeypatch.setattr(dataset_module, "BUNDLED_DATA", dataset_root)
    assert resolve_data(None).root == dataset_root
    monkeypatch.setattr(dataset_module, "BUNDLED_DATA", tmp_path / "empty_demo")
    with pytest.raises(DataNotFoundError, match="APEX_VOICE_DATA"):
        resolve_data(None)


def test_bad_paths_mention_the_environment_variable(tmp_path):
    with pytest.raises(DataNotFoundError, match="APEX_VOICE_DATA"):
        resolve_data(tmp_path / "nowhere")
    with pytest.raises(DataNotFoundError, match="holds no task packages"):
        resolve_data(tmp_path)


def test_select_only_and_unknown_ids(dataset_root):
    source = resolve_data(dataset_root)
    assert [p.name for p in source.select(["toy_interview_001"])] == ["toy_interview_001"]
    assert len(source.select(None)) == 2
    with pytest.raises(UnknownTaskError, match="unknown task id.*toy_x.*known: toy_form_001, toy_interview_001"):
        source.select(["toy_form_001", "toy_x"])


def test_checksums_round_trip_and_detect_a_changed_file(dataset_root):
    write_index(dataset_root, [load_task(d) for d in resolve_data(dataset_root).task_dirs])
    manifest = ChecksumManifest.write(dataset_root)
    lines = (dataset_root / "SHA256SUMS").read_text().splitlines()
    assert lines == sorted(lines, key=lambda line: line.split("  ", 1)[1])
    assert "data/tasks.jsonl" in manifest.digests and "tasks/toy_form_001/grading/gold.yaml" in manifest.digests
    assert all(len(line.split("  ")[0]) == 64 for line in lines)

    source = resolve_data(dataset_root)
    assert source.checksums is not None and source.checksums.digests == manifest.digests
    load_task(source.task_dirs[0], checksums=source.checksums)  # untouched: verifies

    gold = dataset_root / "tasks" / "toy_form_001" / "grading" / "gold.yaml"
    gold.write_text(gold.read_text().replace("CC-330", "CC-331"))
    with pytest.raises(TaskLoadError) as info:
        load_task(source.task_dirs[0], checksums=source.checksums)
    assert "SHA256SUMS mismatch for tasks/toy_form_001/grading/gold.yaml" in str(info.value)
    assert info.value.task_id == "toy_form_001" and info.value.file == "grading/gold.yaml"
    load_task(source.task_dirs[1], checksums=source.checksums)  # the other package is unaffected

    package_source = resolve_data(dataset_root / "tasks" / "toy_form_001")
    assert package_source.checksums is not None  # a package inside a dataset keeps its checksums


def test_checksums_report_a_missing_listed_file(dataset_root):
    manifest = ChecksumManifest.write(dataset_root)
    (dataset_root / "tasks" / "toy_interview_001" / "user" / "persona.yaml").unlink()
    with pytest.raises(TaskLoadError, match="SHA256SUMS lists tasks/toy_interview_001/user/persona.yaml but"):
        manifest.verify([dataset_root / "tasks" / "toy_interview_001"])


def test_malformed_checksum_line(dataset_root):
    (dataset_root / "SHA256SUMS").write_text("abc tasks/x\n")
    with pytest.raises(TaskLoadError, match="SHA256SUMS line 1: expected"):
        ChecksumManifest.read(dataset_root)


def test_index_rows_have_the_published_keys(toy_form, toy_interview):
    form = index_row(load_task(toy_form), "tasks/toy_form_001")
    interview = index_row(load_task(toy_interview), "tasks/toy_interview_001")
    assert list(form) == INDEX_KEYS and list(interview) == INDEX_KEYS
    assert form["tools"] == ["update_expense", "request_approval", "submit_expense"]
    assert form["duplex_event_types"] == ["MID_SPEECH_CORRECTION"]
    assert form["approval_required_for"] == ["submit_expense"]
    assert form["oracle_tool_calls"] == 7 and form["num_user_plans"] == 7
    assert form["industry"] == "horizontal_enterprise" and form["archetype"] == "FORM_FILL"
    assert interview["required_fields"][2] == "interview_1.technical_depth.evidence"
    assert interview["oracle_tool_calls"] == 3 and interview["duplex_event_types"] == []


def test_index_file_loads_with_datasets(dataset_root, tmp_path):
    bundles = [load_task(d) for d in reversed(resolve_data(dataset_root).task_dirs)]
    path = write_index(dataset_root, bundles)
    assert path == dataset_root / "data" / "tasks.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["task_id"] for r in rows] == ["toy_form_001", "toy_interview_001"]
    table = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))
    assert table.column_names == INDEX_KEYS
    assert table["path"] == ["tasks/toy_form_001", "tasks/toy_interview_001"]
    assert table["primary_artifact"] == ["STRUCTURED_FORM", "EVIDENCE_MATRIX"]
