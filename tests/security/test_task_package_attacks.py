"""Hostile task packages: each is refused with one line naming the file (and the field or line),
by ``load_task`` and by ``apex-voice validate`` alike, and nothing outside the package is read."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.tasks.checksums import CHECKSUM_FILE, ChecksumManifest
from harness.tasks.errors import TaskLoadError
from harness.tasks.loader import load_task
from harness.tasks.package_paths import TASK_PATH_FIELDS
from tests.conftest import DEMO_DATA
from tests.package_editing import edit, editable_copy

TASK_ID = "demo_hvac_inspection_001"


@dataclass(frozen=True)
class Attack:
    name: str
    plant: Callable[[Path, Path], None]  # (package, a folder outside it)
    message: str  # what follows "task '<id>': "

    def __str__(self) -> str:
        return self.name


def _set_key(key: str, value: str) -> Callable[[Path, Path], None]:
    def plant(task: Path, outside: Path) -> None:
        edit(task, "task.yaml", "archetype: INSPECT\n", f"archetype: INSPECT\n{key}: {json.dumps(value)}\n")
    return plant


def _write(rel: str, data: bytes) -> Callable[[Path, Path], None]:
    def plant(task: Path, outside: Path) -> None:
        (task / rel).write_bytes(data)
    return plant


def _symlink_out(rel: str) -> Callable[[Path, Path], None]:
    def plant(task: Path, outside: Path) -> None:
        (outside / "host_file").write_text("{}", encoding="utf-8")
        (task / rel).unlink()
        os.symlink(outside / "host_file", task / rel)
    return plant


def _first_clip_file(value: str) -> Callable[[Path, Path], None]:
    def plant(task: Path, outside: Path) -> None:
        index = task / "user" / "audio" / "index.jsonl"
        rows = index.read_text(encoding="utf-8").splitlines()
        row = json.loads(rows[0]) | {"file": value}
        index.write_text("\n".join([json.dumps(row), *rows[1:]]) + "\n", encoding="utf-8")
    return plant


def _first_document_path(value: str) -> Callable[[Path, Path], None]:
    def plant(task: Path, outside: Path) -> None:
        edit(task, "knowledge/manifest.json", '"docs/fms_210_rooftop_unit_inspection.md"', json.dumps(value))
    return plant


def _giant(rel: str, size: int) -> Callable[[Path, Path], None]:
    def plant(task: Path, outside: Path) -> None:
        with (task / rel).open("r+b") as handle:
            handle.truncate(size)  # sparse
    return plant


_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(8)
)

ATTACKS = [
    *(
        Attack(f"traversal-{key}", _set_key(key, "../../../../etc/passwd"),
               f"task.yaml: {key} = '../../../../etc/passwd': path leaves the task package")
        for key in TASK_PATH_FIELDS
    ),
    Attack("absolute-path", _set_key("gold_dir", "/etc/"), "task.yaml: gold_dir = '/etc/': path leaves the task package"),
    Attack("nul-in-path-field", _set_key("persona", "user/a\0b.yaml"),
           "task.yaml: persona = 'user/a\\x00b.yaml': path contains a NUL byte"),
    Attack("traversal-knowledge-document", _first_document_path("../../../etc/passwd"),
           "knowledge/manifest.json: documents[0].path = '../../../etc/passwd': path leaves the knowledge directory"),
    Attack("surrogate-knowledge-path", _first_document_path("docs/\ud800.md"),
           "knowledge/manifest.json: documents[0].path = 'docs/\\ud800.md': path is not valid text"),
    Attack("name-too-long-knowledge-path", _first_document_path("9" * 300 + ".md"),
           f"knowledge/manifest.json: documents[0].path = '{'9' * 76}...: path or file name too long"),
    Attack("traversal-audio-clip", _first_clip_file("../../../etc/passwd"),
           "user/audio/index.jsonl line 1: file = '../../../etc/passwd': path leaves user/audio"),
    Attack("alias-bomb", _write("user/persona.yaml", _BOMB.encode()),
           "user/persona.yaml line 6: more than 200000 nodes once aliases are expanded"),
    Attack("giant-initial-state", _giant("initial_state.json", 200 << 20),
           "initial_state.json: file is 200.0 MiB, the limit for JSON files is 8 MiB"),
    Attack("giant-realization-bank", _giant("user/realization_bank.jsonl", 9 << 20),
           "user/realization_bank.jsonl: file is 9.0 MiB, the limit for JSONL files is 8 MiB"),
    Attack("deep-yaml", _write("tools/tool_spec.yaml", b"tools: " + b"[" * 100 + b"]" * 100),
           "tools/tool_spec.yaml line 1: nested deeper than 64 levels"),
    Attack("deep-json", _write("initial_state.json", b'{"a": ' + b"[" * 100 + b"]" * 100 + b"}"),
           "initial_state.json: nested deeper than 64 levels"),
    Attack("duplicate-yaml-key", _write("user/persona.yaml", b"voice_id: voice_03\nvoice_id: voice_07\n"),
           "user/persona.yaml line 2: duplicate key 'voice_id'"),
    Attack("duplicate-json-key", _write("workspace/initial_workspace.json", b'{"artifacts": {}, "artifacts": {}}'),
           "workspace/initial_workspace.json: duplicate key 'artifacts'"),
    Attack("symlink-out", _symlink_out("initial_state.json"), "initial_state.json: symlink points outside the task package"),
    Attack("non-utf8-yaml", _write("user/persona.yaml", "voice: caf\u00e9\n".encode("latin-1")),
           "user/persona.yaml: not UTF-8 text (invalid continuation byte)"),
    Attack("non-utf8-json", _write("initial_state.json", b'{"a": "\xff"}'),
           "initial_state.json: not UTF-8 text (invalid start byte)"),
    Attack("nul-byte-yaml", _write("user/persona.yaml", b"# persona\nvoice_id: voice\x0003\n"),
           "user/persona.yaml line 2: invalid YAML: unacceptable character #x0000: control characters are not allowed"),
    Attack("nul-byte-json", _write("initial_state.json", b'{"a": "x\x00"}'),
           "initial_state.json line 1: invalid JSON: Invalid control character at"),
    Attack("python-tag", _write("user/persona.yaml", b"x: !!python/object/apply:os.system [id]\n"),
           "user/persona.yaml line 1: invalid YAML: could not determine a constructor for the tag "
           "'tag:yaml.org,2002:python/object/apply:os.system'"),
]


@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def _hostile(attack: Attack, tmp_path: Path, outside: Path) -> Path:
    task = editable_copy(DEMO_DATA / "tasks" / TASK_ID, tmp_path / "packages")
    attack.plant(task, outside)
    return task


@pytest.mark.parametrize("attack", ATTACKS, ids=str)
def test_load_task_refuses_with_one_line(attack, tmp_path, outside):
    with pytest.raises(TaskLoadError) as info:
        load_task(_hostile(attack, tmp_path, outside))
    assert str(info.value) == f"task '{TASK_ID}': {attack.message}"


@pytest.mark.parametrize("attack", ATTACKS, ids=str)
def test_validate_refuses_with_one_line(attack, tmp_path, outside):
    result = CliRunner().invoke(app, ["validate", "--data", str(_hostile(attack, tmp_path, outside)), "--json"])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    report = json.loads(result.output.splitlines()[-1])
    assert report["problems"] == [f"load: task '{TASK_ID}': {attack.message}"] and not report["loaded"]


def _dataset_with_entry(tmp_path: Path, rel: str) -> Path:
    root = tmp_path / "dataset"
    editable_copy(DEMO_DATA / "tasks" / TASK_ID, root / "tasks")
    ChecksumManifest.write(root)
    with (root / CHECKSUM_FILE).open("a", encoding="utf-8") as handle:
        handle.write(f"{'0' * 64}  {rel}\n")
    return root


def test_validate_refuses_a_checksum_entry_that_leaves_the_dataset(tmp_path):
    rel = f"tasks/{TASK_ID}/../../../../etc/passwd"
    result = CliRunner().invoke(app, ["validate", "--data", str(_dataset_with_entry(tmp_path, rel))])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    line = len((tmp_path / "dataset" / CHECKSUM_FILE).read_text(encoding="utf-8").splitlines())
    assert lines == [
        f"error: task 'dataset': SHA256SUMS line {line}: path = {rel!r}: path must be a normalized path inside the dataset"
    ]


def test_run_refuses_an_audio_clip_outside_the_package(tmp_path, outside):
    """``run`` reads the clips: it refuses the package before any sandbox or session starts."""
    task = _hostile(Attack("", _first_clip_file("../../../etc/passwd"), ""), tmp_path, outside)
    result = CliRunner().invoke(app, ["run", "--data", str(task), "--out", str(tmp_path / "out"), "--sandbox", "local"])
    assert result.exit_code == 2
    first, *rest = result.output.strip().splitlines()
    assert first == (f"error: {task.name}: load: task '{TASK_ID}': user/audio/index.jsonl line 1: "
                     "file = '../../../etc/passwd': path leaves user/audio")
    assert rest == ["error: 1 task package(s) fail validation and cannot measure a model: fix them (`apex-voice "
                    "validate` lists every problem) or pass --skip-invalid to run the others"]
