"""The project as image input: its requirements, its source digest and its wheel.

pyproject.toml stays the single source of truth for versions: an image that needs only some
dependencies (the MCP server) picks them by name, with the specifiers pyproject declares.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ProjectSources",
    "SourceSnapshot",
    "isolated_pip",
    "normalized_name",
    "package_digest",
    "snapshot_paths",
    "source_files",
]

REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
IGNORED_PARTS = frozenset({"__pycache__", ".pytest_cache", ".ruff_cache"})
IGNORED_SUFFIXES = (".pyc", ".pyo")


def normalized_name(requirement: str) -> str:
    """PEP 503 name of a requirement string (`PyYAML>=6` -> `pyyaml`)."""
    match = REQUIREMENT_NAME.match(requirement)
    if match is None:
        raise ValueError(f"cannot read a package name from requirement {requirement!r}")
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def isolated_pip(*arguments: str) -> list[str]:
    """A host pip command that ignores the host's pip config and env (e.g. PIP_FIND_LINKS), so the
    wheels come from the index alone and the same inputs give the same wheelhouse."""
    return [sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check", *arguments]


def source_files(root: Path, relative_paths: Iterable[str]) -> Iterator[tuple[str, Path]]:
    """(posix relative path, file) for every source file under the given paths, sorted, caches skipped."""
    for relative in relative_paths:
        top = root / relative
        candidates = [top] if top.is_file() else sorted(top.rglob("*"))
        for path in candidates:
            parts = path.relative_to(root).parts
            if (
                path.is_file()
                and not IGNORED_PARTS.intersection(parts)
                and not path.name.endswith(IGNORED_SUFFIXES)
                and not any(part.endswith(".egg-info") for part in parts)
            ):
                yield "/".join(parts), path


@dataclass(frozen=True)
class SourceSnapshot:
    """Source files as (posix relative path, content), read at one moment."""

    files: tuple[tuple[str, bytes], ...]

    def digest(self) -> str:
        """sha256 over the names and contents of the files."""
        hasher = hashlib.sha256()
        for relative, content in self.files:
            hasher.update(relative.encode() + b"\0" + hashlib.sha256(content).digest())
        return hasher.hexdigest()

    def write_to(self, root: Path) -> None:
        for relative, content in self.files:
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)


def snapshot_paths(root: Path, relative_paths: Iterable[str]) -> SourceSnapshot:
    """Read the files once: what is hashed is exactly what is shipped, even while files change."""
    return SourceSnapshot(
        tuple((relative, path.read_bytes()) for relative, path in source_files(root, relative_paths))
    )


def package_digest(package: str) -> str | None:
    """The source digest of the importable ``package`` (as an image's source label records it).

    Located with ``find_spec``, nothing is imported; ``None`` when the package cannot be found.
    """
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        return None
    return snapshot_paths(Path(locations[0]).parent, [package]).digest()


@dataclass(frozen=True)
class ProjectSources:
    """pyproject.toml plus the package directories it declares."""

    root: Path
    name: str
    version: str
    dependencies: tuple[str, ...]
    packages: tuple[str, ...]
    readme: str | None

    @classmethod
    def load(cls, root: Path) -> ProjectSources:
        pyproject_path = root / "pyproject.toml"
        if not pyproject_path.is_file():
            raise FileNotFoundError(f"no pyproject.toml in project root {root}")
        pyproject = tomllib.loads(pyproject_path.read_text(encoding="utf-8"))
        project = pyproject["project"]
        includes = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
        packages = tuple(sorted({pattern.rstrip("*").rstrip(".") for pattern in includes}))
        readme = project.get("readme")
        return cls(
            root=root,
            name=project["name"],
            version=project["version"],
            dependencies=tuple(project.get("dependencies", ())),
            packages=packages,
            readme=readme if isinstance(readme, str) else None,
        )

    def requirements(self, names: Iterable[str] | None) -> tuple[str, ...]:
        """The declared requirement strings for `names` (all of them for None)."""
        if names is None:
            return self.dependencies
        declared = {normalized_name(requirement): requirement for requirement in self.dependencies}
        wanted = [normalized_name(name) for name in names]
        missing = [name for name in wanted if name not in declared]
        if missing:
            raise ValueError(
                f"{', '.join(missing)} not declared in {self.root / 'pyproject.toml'} dependencies"
            )
        return tuple(declared[name] for name in wanted)

    @property
    def build_inputs(self) -> tuple[str, ...]:
        """Every path the project wheel is built from."""
        readme = (self.readme,) if self.readme and (self.root / self.readme).is_file() else ()
        return ("pyproject.toml", *readme, *self.packages)

    def snapshot(self, relative_paths: Iterable[str]) -> SourceSnapshot:
        return snapshot_paths(self.root, relative_paths)

    def build_wheel(self, sources: SourceSnapshot, destination: Path) -> Path:
        """Build the project wheel from a snapshot of `build_inputs` (no build/ or egg-info in the repo)."""
        with tempfile.TemporaryDirectory(prefix="apex-voice-wheel-src-") as scratch:
            sources.write_to(Path(scratch))
            command = isolated_pip("wheel", "--quiet", "--no-deps", "--wheel-dir", str(destination), scratch)
            completed = subprocess.run(command, stdout=sys.stderr, check=False)
        if completed.returncode != 0:
            raise RuntimeError(
                f"building the {self.name} wheel failed (pip exit code {completed.returncode})"
            )
        prefix = f"{self.name.replace('-', '_')}-{self.version}-"
        wheels = sorted(destination.glob(f"{prefix}*.whl"))
        if not wheels:
            raise RuntimeError(f"pip produced no {prefix}*.whl in {destination}")
        return wheels[-1]
