"""The public part of a task package: everything the environment may see, and nothing else.

The harness builds it from a loaded task (never gold, reference or user-simulator files), and the MCP
server reads it from disk inside the sandbox. ``from_parts`` pushes every value through a JSON round
trip so an in-process environment and one loaded from disk behave identically (YAML dates become
strings in both). Knowledge documents lose their gold/distractor flags and source path here, so no
environment can reveal which documents the grader counts.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from .public_models import InitialWorkspace, KnowledgeDocument, KnowledgeManifest, ToolSet

__all__ = ["BUNDLE_FILES", "PublicBundle", "PublicBundleError"]

ENVIRONMENT_FILE = "environment.json"
TOOLS_FILE = "tools.json"
INITIAL_STATE_FILE = "initial_state.json"
WORKSPACE_FILE = "initial_workspace.json"
KNOWLEDGE_FILE = "knowledge.json"
BUNDLE_FILES = (ENVIRONMENT_FILE, TOOLS_FILE, INITIAL_STATE_FILE, WORKSPACE_FILE, KNOWLEDGE_FILE)


_Model = TypeVar("_Model", bound=BaseModel)


class PublicBundleError(ValueError):
    """A bundle directory that cannot be read; the message names the file and the field."""


class _EnvironmentFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    approval_required_for: list[str] = []
    seed: int = 1


def _to_json(value: Any) -> Any:
    """A JSON-only copy of ``value`` (models dumped by alias; non-JSON scalars rendered with ``str``)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True)
    elif isinstance(value, list):
        value = [_to_json(item) for item in value]
    return json.loads(json.dumps(value, default=str))


def _public_document(document: Any) -> KnowledgeDocument:
    doc = KnowledgeDocument.model_validate(_to_json(document))
    return doc.model_copy(update={"gold": False, "distractor": False, "path": None})


@dataclass(frozen=True)
class PublicBundle:
    task_id: str
    tools: ToolSet
    initial_state: dict
    workspace: InitialWorkspace
    #: Text resolved; ``gold``/``distractor`` always False and ``path`` always None.
    documents: list[KnowledgeDocument]
    approval_required_for: list[str]
    seed: int = 1

    @classmethod
    def from_parts(
        cls,
        *,
        task_id: str,
        tools: ToolSet | dict[str, Any],
        initial_state: dict[str, Any],
        workspace: InitialWorkspace | dict[str, Any],
        documents: list[KnowledgeDocument] | list[dict[str, Any]],
        approval_required_for: list[str],
        seed: int = 1,
    ) -> PublicBundle:
        state = _to_json(initial_state)
        if not isinstance(state, dict):
            raise PublicBundleError(f"initial_state must be a JSON object, got {type(state).__name__}")
        return cls(
            task_id=str(task_id),
            tools=ToolSet.model_validate(_to_json(tools)),
            initial_state=state,
            workspace=InitialWorkspace.model_validate(_to_json(workspace)),
            documents=[_public_document(doc) for doc in documents],
            approval_required_for=[str(action) for action in approval_required_for],
            seed=int(seed),
        )

    def write(self, dest_dir: Path) -> None:
        """Write the five bundle files, each atomically (a reader never sees a half-written file)."""
        dest_dir.mkdir(parents=True, exist_ok=True)
        contents = {
            ENVIRONMENT_FILE: {
                "task_id": self.task_id,
                "approval_required_for": self.approval_required_for,
                "seed": self.seed,
            },
            TOOLS_FILE: _to_json(self.tools),
            INITIAL_STATE_FILE: self.initial_state,
            WORKSPACE_FILE: _to_json(self.workspace),
            KNOWLEDGE_FILE: {"documents": _to_json(self.documents)},
        }
        for name, payload in contents.items():
            _write_atomically(
                dest_dir / name, json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=True)
            )

    @classmethod
    def read(cls, src_dir: Path) -> PublicBundle:
        """Load a bundle directory; errors name the file and the offending field."""
        environment = _parse(src_dir, ENVIRONMENT_FILE, _EnvironmentFile)
        return cls.from_parts(
            task_id=environment.task_id,
            tools=_parse(src_dir, TOOLS_FILE, ToolSet),
            initial_state=_parse_state(src_dir),
            workspace=_parse(src_dir, WORKSPACE_FILE, InitialWorkspace),
            documents=_parse(src_dir, KNOWLEDGE_FILE, KnowledgeManifest).documents,
            approval_required_for=environment.approval_required_for,
            seed=environment.seed,
        )


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
        os.chmod(tmp_name, 0o644)  # read by the server's own user in a container, never secret
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PublicBundleError(f"{path}: file missing from the public bundle") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PublicBundleError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise PublicBundleError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None


def _parse(src_dir: Path, name: str, model: type[_Model]) -> _Model:
    path = src_dir / name
    try:
        return model.model_validate(_load_json(path))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '<root>'}: {error['msg']}"
            for error in exc.errors()
        )
        raise PublicBundleError(f"{path}: {problems}") from None


def _parse_state(src_dir: Path) -> dict[str, Any]:
    path = src_dir / INITIAL_STATE_FILE
    state = _load_json(path)
    if not isinstance(state, dict):
        raise PublicBundleError(f"{path}: <root>: must be a JSON object, got {type(state).__name__}")
    return state
