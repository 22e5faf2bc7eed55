"""Load one task package from disk into a validated :class:`TaskBundle`.

Paths, defaults and missing-file behaviour follow the published format (reference §1.1); the
differences are deliberate: ``user/user_state.yaml`` and ``user/flow.yaml`` are reported as missing
files instead of as obscure validation errors, path overrides may not leave the package, and a
package listed in the dataset's ``SHA256SUMS`` is verified before it is parsed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from mcp_servers.public_models import InitialWorkspace, KnowledgeDocument, KnowledgeManifest, ToolSet

from .bundle import TaskBundle
from .checksums import ChecksumManifest
from .contained_paths import ContainedRoot, PathEscape
from .cross_checks import check_consistency
from .errors import TaskLoadError
from .file_readers import PackageReader
from .models import (
    ArtifactSourceManifests,
    AudioIndexRow,
    EventProgram,
    FlowSpec,
    GoldSpec,
    LatentWorld,
    ObserverSpec,
    RealizationEntry,
    ReferencePolicy,
    TaskSpec,
    TaxonomySpec,
    UserState,
)
from .package_paths import (
    AUDIO_DIR,
    AUDIO_INDEX_FILE,
    AUDIO_META_FILE,
    OBSERVER_FILE,
    POLICY_FILE,
    SOURCE_MANIFEST_FILE,
    TASK_FILE,
    TASK_PATH_FIELDS,
    gold_file,
    knowledge_manifest_file,
)

__all__ = ["load_task"]

ModelT = TypeVar("ModelT", bound=BaseModel)



def load_task(task_dir: Path, *, checksums: ChecksumManifest | None = None) -> TaskBundle:
    """Read, validate and cross-check every file of the package in ``task_dir``.

    Raises :class:`TaskLoadError` for the first problem found (one line, naming file and field).
    """
    task_dir = Path(task_dir)
    reader = PackageReader(task_dir, task_dir.name)
    if not reader.exists(TASK_FILE):
        raise TaskLoadError(task_dir.name, TASK_FILE, f"missing {TASK_FILE} in {task_dir}")
    if checksums is not None:
        checksums.verify([task_dir])
    task = reader.model(TaskSpec, TASK_FILE, reader.yaml(TASK_FILE))
    reader = PackageReader(task_dir, task.id)
    for key in TASK_PATH_FIELDS:
        reader.path(getattr(task, key), key=key)

    taxonomy_raw = _required(reader, task.taxonomy, "taxonomy", "missing taxonomy file")
    gold_rel = gold_file(task)
    bundle = TaskBundle(
        task_dir=task_dir,
        task=task,
        taxonomy=reader.model(TaxonomySpec, task.taxonomy, taxonomy_raw),
        initial_state=_optional(reader, task.initial_state, "initial_state") or {},
        workspace=reader.model(
            InitialWorkspace, task.initial_workspace, _optional(reader, task.initial_workspace, "initial_workspace")
        ),
        tools=reader.model(ToolSet, task.tools, _optional(reader, task.tools, "tools")),
        knowledge=_knowledge(reader, task),
        gold=reader.model(GoldSpec, gold_rel, _required(reader, gold_rel, "gold_dir", "missing")),
        user_state=reader.model(
            UserState,
            task.user_state,
            _required(reader, task.user_state, "user_state", "missing (the simulated user's hidden state is required)"),
        ),
        flow=reader.model(
            FlowSpec,
            task.user_program,
            _required(reader, task.user_program, "user_program", "missing (the user flow is required)"),
        ),
        observer=reader.model(ObserverSpec, OBSERVER_FILE, _optional(reader, OBSERVER_FILE)),
        events=reader.model(EventProgram, task.event_program, _optional(reader, task.event_program, "event_program")),
        persona=_optional(reader, task.persona, "persona") or {},
        realization_bank=_realization_bank(reader, task.realization_bank),
        policy=_model_if_present(reader, ReferencePolicy, POLICY_FILE),
        latent_world=_latent_world(reader, task.latent_world),
        source_manifest=_model_if_present(reader, ArtifactSourceManifests, SOURCE_MANIFEST_FILE),
        audio_index=_audio_index(reader),
        audio_meta=_optional(reader, AUDIO_META_FILE),
        taxonomy_raw=taxonomy_raw,
    )
    check_consistency(bundle)
    return bundle


def _read(reader: PackageReader, rel: str) -> Any:
    return reader.json(rel) if rel.endswith(".json") else reader.yaml(rel)


def _optional(reader: PackageReader, rel: str, key: str | None = None) -> dict[str, Any] | None:
    """The file's top-level mapping, or ``None`` when the file does not exist."""
    if not reader.exists(rel, key=key):
        return None
    return reader.mapping(rel, _read(reader, rel))


def _required(reader: PackageReader, rel: str, key: str, reason: str) -> dict[str, Any]:
    data = _optional(reader, rel, key)
    if data is None:
        raise TaskLoadError(reader.task_id, rel, reason)
    return data


def _model_if_present(reader: PackageReader, model: type[ModelT], rel: str) -> ModelT | None:
    data = _optional(reader, rel)
    return None if data is None else reader.model(model, rel, data)


def _latent_world(reader: PackageReader, rel: str) -> LatentWorld | None:
    data = _optional(reader, rel, "latent_world")
    return reader.model(LatentWorld, rel, data) if data else None


def _knowledge(reader: PackageReader, task: TaskSpec) -> list[KnowledgeDocument]:
    """Documents with ``text`` replaced by the contents of ``path`` when that file exists."""
    rel = knowledge_manifest_file(task)
    data = _optional(reader, rel, "knowledge_dir")
    if data is None:
        return []
    manifest = reader.model(KnowledgeManifest, rel, data)
    base = ContainedRoot(reader.path(task.knowledge_dir, key="knowledge_dir"))  # already real
    documents = []
    for index, doc in enumerate(manifest.documents):
        update: dict[str, Any] = {"title": doc.title or doc.doc_id}
        if doc.path:
            target = _inside(reader, base, doc.path, rel, f"documents[{index}].path", "the knowledge directory")
            target_rel = Path(target).relative_to(reader.root.real).as_posix()
            if reader.exists(target_rel):
                update["text"] = reader.text(target_rel)
        documents.append(doc.model_copy(update=update))
    return documents


def _realization_bank(reader: PackageReader, rel: str) -> dict[str, RealizationEntry]:
    """Bank entries keyed by ``user_plan_id``; a later line replaces an earlier one (as published)."""
    if not reader.exists(rel, key="realization_bank"):
        return {}
    bank: dict[str, RealizationEntry] = {}
    for line, data in reader.jsonl(rel):
        entry = reader.model(RealizationEntry, rel, data, line=line)
        bank[entry.user_plan_id] = entry
    return bank


def _audio_index(reader: PackageReader) -> list[AudioIndexRow] | None:
    """The index rows; a clip ``file`` outside ``user/audio/`` is refused (the session would read it)."""
    if not reader.exists(AUDIO_INDEX_FILE):
        return None
    audio_dir = ContainedRoot(reader.path(AUDIO_DIR))  # already real
    rows = []
    for line, data in reader.jsonl(AUDIO_INDEX_FILE):
        row = reader.model(AudioIndexRow, AUDIO_INDEX_FILE, data, line=line)
        _inside(reader, audio_dir, row.file, AUDIO_INDEX_FILE, "file", AUDIO_DIR, line=line)
        rows.append(row)
    return rows


def _inside(
    reader: PackageReader, base: ContainedRoot, path: str, rel: str, field: str, where: str, *,
    line: int | None = None,
) -> str:
    """``base/path`` resolved inside ``base``; an escape names the field that wrote it or the symlink."""
    try:
        return base.locate(path, where=where)
    except PathEscape as exc:
        if exc.culprit is None:
            raise TaskLoadError(reader.task_id, rel, exc.reason, field=field, value=path, line=line) from None
        blamed = (base.real / exc.culprit).relative_to(reader.root.real).as_posix()
        raise TaskLoadError(reader.task_id, blamed, exc.reason) from None
