"""``apex-voice render-audio`` on copies of a demo package: clips, index, meta, lint, skip, checksums."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from harness.audio.audio_files import read_pcm16
from harness.audio.pcm import pcm16_sha256
from harness.audio.render import clip_file_name
from harness.audio.speech_bank import PrerenderedBank
from harness.cli.main import app
from harness.tasks.checksums import ChecksumManifest
from harness.tasks.lint import lint_task
from harness.tasks.loader import load_task
from harness.tasks.runner_lines import CLOSING_LINES, NUDGE_LINE
from harness.validate import validate_task

DEMO = Path(__file__).resolve().parents[1] / "harness" / "demo_data" / "tasks" / "demo_warranty_advice_001"


@pytest.fixture(scope="module")
def tts_cache(tmp_path_factory) -> Path:
    """One synthesis cache for the module: later tests re-render from it."""
    return tmp_path_factory.mktemp("tts")


@pytest.fixture
def package(tmp_path, monkeypatch, tts_cache: Path) -> Path:
    monkeypatch.setenv("APEX_VOICE_TTS_CACHE", str(tts_cache))
    target = tmp_path / "dataset" / "tasks" / DEMO.name
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns("audio"))
    return target


def _render(*args: str):
    return CliRunner().invoke(app, ["render-audio", *args])


def test_clip_names_follow_the_published_rule() -> None:
    assert clip_file_name("open#v1") == "open_v1.flac"
    assert clip_file_name("__a b#!c__") == "a_b_c.flac"


def test_render_writes_clips_index_and_meta_and_the_package_still_validates(package: Path) -> None:
    result = _render("--data", str(package))
    assert result.exit_code == 0, result.output
    assert "1 package(s) rendered" in result.output

    bundle = load_task(package)
    variants = [v for entry in bundle.realization_bank.values() for v in entry.variants]
    rows = bundle.audio_index
    assert rows is not None and len(rows) == len(variants) + len(CLOSING_LINES) + 1
    assert {r.file for r in rows if r.kind == "closing"} == {f"_closing_{i}.flac" for i in range(4)}
    assert [r.text for r in rows if r.kind == "nudge"] == [NUDGE_LINE]
    for row in rows:
        pcm = read_pcm16(package / "user" / "audio" / row.file)
        assert (len(pcm), pcm16_sha256(pcm)) == (row.num_samples, row.pcm16_sha256)
    assert rows[0].word_timestamps and rows[0].voice == "en-us+m3"  # persona voice_07 is male
    assert bundle.audio_meta is not None and bundle.audio_meta["engine"] == "espeak-ng"
    assert not [issue for issue in lint_task(bundle) if issue.severity == "error"]
    assert np.array_equal(PrerenderedBank(package).get(variants[0].text).pcm, read_pcm16(package / "user" / "audio" / rows[0].file))
    assert asyncio.run(validate_task(package)).ok


def test_second_run_skips_and_force_rerenders_identically(package: Path) -> None:
    assert _render("--data", str(package)).exit_code == 0
    index = package / "user" / "audio" / "index.jsonl"
    before = index.read_text(encoding="utf-8")
    (package / "user" / "audio" / "leftover.flac").write_bytes(b"stale")

    second = _render("--data", str(package))
    assert "0 package(s) rendered, 1 up to date" in second.output
    forced = _render("--data", str(package), "--force")
    assert "1 package(s) rendered" in forced.output
    assert index.read_text(encoding="utf-8") == before  # deterministic
    assert not (package / "user" / "audio" / "leftover.flac").exists()


def test_a_changed_bank_text_is_rerendered(package: Path) -> None:
    assert _render("--data", str(package)).exit_code == 0
    bank = package / "user" / "realization_bank.jsonl"
    lines = bank.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[0])
    entry["variants"][0]["text"] = "A brand new opening line."
    bank.write_text("\n".join([json.dumps(entry), *lines[1:]]) + "\n", encoding="utf-8")
    assert "1 package(s) rendered" in _render("--data", str(package)).output
    assert "A brand new opening line." in PrerenderedBank(package).texts


def test_dataset_checksums_are_refreshed(package: Path) -> None:
    root = package.parents[1]
    (root / "data").mkdir()
    (root / "data" / "tasks.jsonl").write_text("{}\n", encoding="utf-8")
    ChecksumManifest.write(root)
    assert _render("--data", str(root)).exit_code == 0
    manifest = ChecksumManifest.read(root)
    assert f"tasks/{package.name}/user/audio/index.jsonl" in manifest.digests
    manifest.verify([root / "tasks"])
