"""Finding task packages: an explicit path, ``$APEX_VOICE_DATA``, or the bundled demo data.

A data path may be a dataset root (``tasks/<id>/`` + ``SHA256SUMS``), a folder of packages, or a
single package (has ``task.yaml``). Task ids used for selection are package directory names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import harness

from .checksums import CHECKSUM_FILE, ChecksumManifest
from .errors import DataNotFoundError, UnknownTaskError
from .package_paths import TASK_FILE

__all__ = ["BUNDLED_DATA", "DATA_ENV_VAR", "DataSource", "resolve_data"]

#: A dataset root shipped inside the wheel (may hold no tasks yet).
BUNDLED_DATA: Path = Path(harness.__file__).parent / "demo_data"
DATA_ENV_VAR = "APEX_VOICE_DATA"

DataKind = Literal["dataset", "folder", "package"]


@dataclass
class DataSource:
    """Where tasks come from; ``checksums`` is set when the dataset root has ``SHA256SUMS``."""

    root: Path
    kind: DataKind
    task_dirs: list[Path]
    checksums: ChecksumManifest | None = None

    @property
    def task_ids(self) -> list[str]:
        return [d.name for d in self.task_dirs]

    def select(self, only: list[str] | None) -> list[Path]:
        """The task directories named in ``only`` (all when ``None``), in sorted order."""
        if only is None:
            return list(self.task_dirs)
        unknown = sorted(set(only) - set(self.task_ids))
        if unknown:
            raise UnknownTaskError(
                f"unknown task id(s) {', '.join(unknown)} in {self.root}; known: {', '.join(self.task_ids) or 'none'}"
            )
        wanted = set(only)
        return [d for d in self.task_dirs if d.name in wanted]


def resolve_data(path: str | Path | None) -> DataSource:
    """Resolve task data: explicit ``path`` → ``$APEX_VOICE_DATA`` → :data:`BUNDLED_DATA`."""
    if path is not None:
        return _source(Path(path), origin="the given data path")
    env_value = os.environ.get(DATA_ENV_VAR)
    if env_value:
        return _source(Path(env_value), origin=f"${DATA_ENV_VAR}")
    if _package_dirs(BUNDLED_DATA / "tasks"):
        return _source(BUNDLED_DATA, origin="the bundled demo data")
    raise DataNotFoundError(
        f"no task data: pass --data <path> or set {DATA_ENV_VAR} to a dataset root, "
        "a folder of task packages or a single package"
    )


def _source(path: Path, *, origin: str) -> DataSource:
    path = path.expanduser()
    if not path.is_dir():
        raise DataNotFoundError(f"{origin} {path} is not a directory (set {DATA_ENV_VAR} or pass --data)")
    if (path / TASK_FILE).is_file():
        dataset_root = _enclosing_dataset(path)
        return DataSource(path, "package", [path], _checksums(dataset_root) if dataset_root else None)
    if (path / "tasks").is_dir():
        return DataSource(path, "dataset", _require_packages(path / "tasks", origin), _checksums(path))
    return DataSource(path, "folder", _require_packages(path, origin), None)


def _enclosing_dataset(package: Path) -> Path | None:
    """The dataset root of a package given as ``<root>/tasks/<id>``, so its checksums still apply."""
    parent = package.resolve().parent
    return parent.parent if parent.name == "tasks" and (parent.parent / CHECKSUM_FILE).is_file() else None


def _checksums(root: Path) -> ChecksumManifest | None:
    return ChecksumManifest.read(root) if (root / CHECKSUM_FILE).is_file() else None


def _package_dirs(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(child for child in directory.iterdir() if (child / TASK_FILE).is_file())


def _require_packages(directory: Path, origin: str) -> list[Path]:
    packages = _package_dirs(directory)
    if not packages:
        raise DataNotFoundError(
            f"{origin} {directory} holds no task packages (directories with {TASK_FILE}); "
            f"set {DATA_ENV_VAR} or pass --data"
        )
    return packages
