"""``apex-voice judge-cache export|import``: the verdicts in and out in the published JSON format."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from harness.cli.main import app
from harness.grading.judge_cache import JudgeCache


def _cli(*args: str):
    return CliRunner().invoke(app, ["judge-cache", *args], catch_exceptions=False)


def test_export_writes_the_published_flat_object(tmp_path: Path) -> None:
    cache = JudgeCache()
    cache.put("b", False)
    cache.put("a", True)
    result = _cli("export", str(tmp_path / "out.json"), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["exported"] == 2
    assert (tmp_path / "out.json").read_text() == '{"a": true, "b": false}'


def test_import_adds_missing_verdicts_and_keeps_cached_ones(tmp_path: Path) -> None:
    JudgeCache().put("a", True)
    source = tmp_path / "published.json"
    source.write_text(json.dumps({"a": False, "b": True}))
    result = _cli("import", str(source))
    assert result.exit_code == 0, result.output
    assert "imported 1 of 2 verdicts" in result.stdout
    assert "1 verdicts of" in result.stderr and "the cached ones stand" in result.stderr
    assert (JudgeCache().get("a"), JudgeCache().get("b")) == (True, True)


def test_import_of_a_file_that_is_not_verdicts_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    result = _cli("import", str(bad))
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {bad}: expected a JSON object, found list"
    missing = _cli("import", str(tmp_path / "missing.json"))
    assert missing.exit_code == 2
    assert missing.stderr.strip() == f"error: {tmp_path / 'missing.json'}: No such file or directory"


def test_export_to_an_unwritable_place_fails_with_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = _cli("export", str(blocker / "out.json"))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: cannot write {blocker / 'out.json'}: ")
