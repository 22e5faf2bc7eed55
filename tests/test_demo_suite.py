"""The bundled demo suite as a dataset: its index, checksums, audio and coverage of the benchmark."""

from __future__ import annotations

import json

from harness.tasks.checksums import ChecksumManifest
from harness.tasks.dataset import resolve_data
from harness.tasks.index import index_row
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA


def _bundles():
    source = resolve_data(DEMO_DATA)
    return source, [load_task(d, checksums=source.checksums) for d in source.task_dirs]


def test_suite_index_is_current_and_readable_by_datasets():
    import datasets

    source, bundles = _bundles()
    index = DEMO_DATA / "data" / "tasks.jsonl"
    rows = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines()]
    assert rows == [index_row(b, f"tasks/{b.task_dir.name}") for b in bundles]
    loaded = datasets.load_dataset("json", data_files=str(index), split="train")
    assert loaded["task_id"] == sorted(d.name for d in source.task_dirs)


def test_checksums_cover_every_file_and_verify():
    source, _ = _bundles()
    manifest = ChecksumManifest.read(DEMO_DATA)
    files = sorted(
        p.relative_to(DEMO_DATA).as_posix()
        for folder in ("tasks", "data")
        for p in (DEMO_DATA / folder).rglob("*")
        if p.is_file()
    )
    assert sorted(manifest.digests) == files
    manifest.verify([DEMO_DATA / f for f in files])


def test_suite_covers_the_benchmark():
    _, bundles = _bundles()
    assert len(bundles) >= 10
    archetypes = {b.taxonomy.professional_work.primary_archetype.value for b in bundles}
    assert {"NEGOTIATE", "COORDINATE", "FORM_FILL", "INTERVIEW", "DISCOVERY", "INTAKE", "TROUBLESHOOT",
            "ADVISE", "FACILITATE", "INSPECT"} <= archetypes
    autonomy = {b.taxonomy.workspace.autonomy_level.value[:2] for b in bundles}
    assert {"A0", "A1", "A2", "A3"} <= autonomy
    knowledge = {b.taxonomy.knowledge.burden.value[:2] for b in bundles}
    assert {"K0", "K1", "K2", "K3"} <= knowledge
    events = {e.type for b in bundles for e in b.events.events}
    assert {"MID_SPEECH_CORRECTION", "CANCELLATION_REVOCATION", "INTENT_SWITCH", "BACKCHANNEL"} <= events
    voices = {b.persona.get("voice_id") for b in bundles}
    assert {"voice_03", "voice_07"} <= voices
    for b in bundles:
        graded = sum(len(e.fields) for e in b.gold.artifact_expectations)
        assert 9 <= graded <= 14, b.task_id
        assert 11 <= b.policy.tool_call_count <= 17, b.task_id
        assert b.audio_index, f"{b.task_id} has no pre-rendered user audio"
