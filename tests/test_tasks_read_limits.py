"""Bad packages cannot hurt the loader: alias bombs, giant files, deep nesting, duplicate keys,
symlink loops; each refusal is one line naming the file (issue 14, defect 6)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.tasks.bounded_parse import JSON_LIMITS, YAML_LIMITS, ParseRefused, parse_json, parse_yaml
from harness.tasks.errors import TaskLoadError
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.package_editing import edit, editable_copy

TASK_ID = "demo_hvac_inspection_001"


@pytest.fixture
def package(tmp_path) -> Path:
    return editable_copy(DEMO_DATA / "tasks" / TASK_ID, tmp_path)


def load_error(task_dir: Path) -> str:
    with pytest.raises(TaskLoadError) as info:
        load_task(task_dir)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"task '{TASK_ID}': ")
    return message


def billion_laughs(levels: int = 9) -> str:
    """Nine levels of nine aliases: 9⁹ (387 million) strings once expanded, 72 aliases written."""
    lines = ['lol0: &lol0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        lines.append(f"lol{level}: &lol{level} [" + ", ".join([f"*lol{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_before_it_expands(package):
    (package / "user" / "persona.yaml").write_text(billion_laughs(), encoding="utf-8")
    message = load_error(package)
    assert "user/persona.yaml line 6: more than 200000 nodes once aliases are expanded" in message


def test_alias_count_is_limited_per_document(package):
    aliases = ", ".join(["*x"] * (YAML_LIMITS.max_aliases + 1))
    (package / "user" / "persona.yaml").write_text(f"a: &x 1\nb: [{aliases}]\n", encoding="utf-8")
    assert f"user/persona.yaml line 2: more than {YAML_LIMITS.max_aliases} aliases" in load_error(package)


def test_a_few_aliases_and_merges_still_load():
    data = parse_yaml("base: &b {x: 1, y: 2}\nuse: {<<: *b, y: 3}\nagain: *b\n")
    assert data == {"base": {"x": 1, "y": 2}, "use": {"x": 1, "y": 3}, "again": {"x": 1, "y": 2}}


def test_recursive_alias_is_refused():
    with pytest.raises(ParseRefused, match="alias \\*x refers to a node that contains it"):
        parse_yaml("a: &x [1, *x]\n")


def test_giant_initial_state_is_refused_naming_file_and_limit(package):
    with (package / "initial_state.json").open("r+b") as handle:
        handle.truncate(200 * 1024 * 1024)  # sparse: no disk is used
    message = load_error(package)
    assert message.endswith("initial_state.json: file is 200.0 MiB, the limit for JSON files is 8 MiB")


def test_giant_yaml_file_is_refused(package):
    path = package / "user" / "persona.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "#" * YAML_LIMITS.max_bytes, encoding="utf-8")
    assert "user/persona.yaml: file is 1.0 MiB, the limit for YAML files is 1 MiB" in load_error(package)


def test_deep_json_is_refused(package):
    depth = JSON_LIMITS.max_depth + 1
    (package / "initial_state.json").write_text('{"a": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")
    assert load_error(package).endswith(f"initial_state.json: nested deeper than {JSON_LIMITS.max_depth} levels")


def test_very_deep_json_is_refused_without_recursion_error():
    with pytest.raises(ParseRefused, match="nested deeper"):
        parse_json("[" * 200_000 + "]" * 200_000)


def test_deep_yaml_is_refused_with_its_line(package):
    depth = YAML_LIMITS.max_depth + 1
    (package / "user" / "persona.yaml").write_text("a: " + "[" * depth + "]" * depth + "\n", encoding="utf-8")
    assert f"user/persona.yaml line 1: nested deeper than {YAML_LIMITS.max_depth} levels" in load_error(package)


def test_duplicate_yaml_key_names_file_line_and_key(package):
    edit(package, "task.yaml", "archetype: INSPECT\n", "archetype: INSPECT\ntitle: a second title\n")
    assert load_error(package).endswith("task.yaml line 5: duplicate key 'title'")


def test_duplicate_json_key_names_file_and_key(package):
    edit(package, "initial_state.json", "{", '{"dup": 1, "dup": 2, ')
    assert load_error(package).endswith("initial_state.json: duplicate key 'dup'")


def test_duplicate_key_in_a_jsonl_row_names_the_line(package):
    path = package / "user" / "realization_bank.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace("{", '{"user_plan_id": "x", ', 1)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert load_error(package).endswith("user/realization_bank.jsonl line 2: duplicate key 'user_plan_id'")


def test_nan_and_huge_integers_are_refused_as_values():
    with pytest.raises(ParseRefused, match="NaN is not a JSON number"):
        parse_json('{"a": NaN}')
    with pytest.raises(ParseRefused, match="invalid JSON: Exceeds the limit"):
        parse_json("1" * 5000)
    with pytest.raises(ParseRefused, match="invalid YAML value: Exceeds the limit"):
        parse_yaml("a: " + "1" * 5000)
    with pytest.raises(ParseRefused, match="invalid YAML value: day is out of range"):
        parse_yaml("a: 2026-02-30")


def test_symlink_loop_is_one_line_naming_the_link(package):
    (package / "initial_state.json").unlink()
    os.symlink("loop_b", package / "initial_state.json")
    os.symlink("initial_state.json", package / "loop_b")
    assert load_error(package).endswith("initial_state.json: symlink loop")


def test_symlink_out_blames_the_symlink_not_task_yaml(package, tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text("{}", encoding="utf-8")
    (package / "initial_state.json").unlink()
    os.symlink(outside, package / "initial_state.json")
    assert load_error(package).endswith("initial_state.json: symlink points outside the task package")


def test_symlinked_directory_out_blames_the_directory(package, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "manifest.json").write_text(json.dumps({"documents": []}), encoding="utf-8")
    knowledge = package / "knowledge"
    os.rename(knowledge, tmp_path / "moved_knowledge")
    os.symlink(tmp_path / "elsewhere", knowledge)
    assert load_error(package).endswith("knowledge: symlink points outside the task package")


def test_override_written_to_leave_still_blames_task_yaml(package):
    edit(package, "task.yaml", "archetype: INSPECT\n", "archetype: INSPECT\ninitial_state: ../x.json\n")
    assert load_error(package).endswith("task.yaml: initial_state = '../x.json': path leaves the task package")


def test_nul_byte_in_a_knowledge_path_is_one_line(package):
    edit(package, "knowledge/manifest.json", '"docs/fms_210_rooftop_unit_inspection.md"', '"docs/a\\u0000b.md"')
    message = load_error(package)
    assert message.endswith("knowledge/manifest.json: documents[0].path = 'docs/a\\x00b.md': path contains a NUL byte")


def test_a_fifo_is_not_read(package):
    (package / "user" / "persona.yaml").unlink()
    os.mkfifo(package / "user" / "persona.yaml")
    assert load_task(package).persona == {}  # not a regular file: treated as absent, never blocks


def test_demo_suite_and_fixtures_load_within_the_limits():
    from tests.conftest import REFERENCE_FIXTURES

    packages = sorted((DEMO_DATA / "tasks").iterdir()) + sorted(REFERENCE_FIXTURES.glob("*/task.yaml"))
    for task_dir in packages:
        load_task(task_dir.parent if task_dir.name == "task.yaml" else task_dir)


def test_error_lines_stay_one_printable_line():
    message = str(TaskLoadError("t", "f.yaml", "invalid YAML: first\n  second", field="k", value="\ud800"))
    assert message == "task 't': f.yaml: k = '\\ud800': invalid YAML: first   second"
    message.encode("utf-8")  # printable: no lone surrogate left
    assert str(TaskLoadError("t", "x\udc80", "r")).encode("utf-8") == b"task 't': x\\udc80: r"
