"""The docker build context of one image, and the content hash that decides whether to build it.

The context is assembled as a tar with exactly the files the Dockerfile uses (Dockerfile,
requirements.txt, wheelhouse/ for dependencies, project/ for the project wheel, src/ for shipped
sources), so nothing from the working tree leaks into an image and
no .dockerignore has to be kept in sync. The same inputs feed the content hash.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from sandbox.project_sources import SourceSnapshot

__all__ = ["BuildContext"]


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    archive.addfile(info, io.BytesIO(data))


def _add_file(archive: tarfile.TarFile, name: str, path: Path) -> None:
    info = tarfile.TarInfo(name)
    info.size = path.stat().st_size
    info.mode = 0o644
    with path.open("rb") as handle:
        archive.addfile(info, handle)


@dataclass
class BuildContext:
    """Files of one build context, by their path inside the context."""

    dockerfile: bytes
    requirements: Sequence[str]
    wheels: list[Path] = field(default_factory=list)
    sources: SourceSnapshot = field(default_factory=lambda: SourceSnapshot(()))
    project_wheels: list[Path] = field(default_factory=list)

    def content_hash(
        self, base_image_id: str, wheel_digests: Iterable[tuple[str, str]], source_digest: str
    ) -> str:
        """sha256 over everything that can change the image; stored as an image label."""
        payload = {
            "dockerfile": hashlib.sha256(self.dockerfile).hexdigest(),
            "base_image_id": base_image_id,
            "requirements": list(self.requirements),
            "wheels": [list(pair) for pair in wheel_digests],
            "sources": source_digest,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def write_tar(self, handle: IO[bytes]) -> None:
        """Write the context as an uncompressed tar (what the engine's build API reads)."""
        with tarfile.open(fileobj=handle, mode="w") as archive:
            _add_bytes(archive, "Dockerfile", self.dockerfile)
            _add_bytes(
                archive, "requirements.txt", "".join(f"{line}\n" for line in self.requirements).encode()
            )
            for wheel in self.wheels:
                _add_file(archive, f"wheelhouse/{wheel.name}", wheel)
            for wheel in self.project_wheels:
                _add_file(archive, f"project/{wheel.name}", wheel)
            for relative, content in self.sources.files:
                _add_bytes(archive, f"src/{relative}", content)
        handle.seek(0)
