"""Dependency wheels built on the host, so image builds install offline (`pip --no-index`).

`pip wheel` picks wheels for the interpreter that runs it, so the wheelhouse is only valid for an
image whose Python has the host's minor version and architecture; `require_same_python` says so
clearly instead of letting pip fail inside the image build. A wheelhouse is cached on disk by its
inputs (requirements + interpreter), so repeated builds never touch the network.
"""

from __future__ import annotations

import hashlib
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandbox.base_image import PythonTarget
from sandbox.project_sources import isolated_pip

__all__ = ["PythonMismatchError", "Wheelhouse", "host_python", "require_same_python"]

COMPLETE_MARKER = ".complete"


class PythonMismatchError(RuntimeError):
    """The base image's Python cannot load wheels picked by the host's Python."""


def host_python() -> PythonTarget:
    """The interpreter that runs `pip wheel`."""
    return PythonTarget(sys.version_info.major, sys.version_info.minor, platform.machine())


def require_same_python(host: PythonTarget, image: PythonTarget, base_reference: str) -> None:
    """Fail before building when host-built wheels would not install in the image."""
    if host != image:
        raise PythonMismatchError(
            f"base image {base_reference} has {image} but the host that builds the wheels runs {host}; "
            f"run the build with a Python {image.major}.{image.minor} on {image.machine}, "
            "or set BASE_IMAGE to an image with the host's Python"
        )


@dataclass(frozen=True)
class Wheelhouse:
    """A directory of wheels for one requirement set and one interpreter."""

    requirements: tuple[str, ...]
    directory: Path

    @classmethod
    def for_requirements(cls, requirements: tuple[str, ...], cache_root: Path) -> Wheelhouse:
        host = host_python()
        key = hashlib.sha256(
            "\n".join([f"cp{host.major}{host.minor}-{host.machine}", *sorted(requirements)]).encode()
        ).hexdigest()
        return cls(requirements, cache_root / "wheelhouse" / key[:16])

    @property
    def complete(self) -> bool:
        return (self.directory / COMPLETE_MARKER).is_file()

    def wheels(self) -> list[Path]:
        return sorted(self.directory.glob("*.whl"))

    def file_digests(self) -> list[tuple[str, str]]:
        """(file name, sha256) of every wheel: the cache key sees exactly what gets installed."""
        return [(wheel.name, hashlib.sha256(wheel.read_bytes()).hexdigest()) for wheel in self.wheels()]

    def build(self, report: Callable[[str], None]) -> None:
        """`pip wheel` into a private scratch dir, then move it into place; concurrent builders of
        the same wheelhouse (parallel test runs) each finish cleanly and the first one wins."""
        self.directory.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f"{self.directory.name}.", dir=self.directory.parent))
        try:
            report(f"wheelhouse: pip wheel {' '.join(self.requirements)} -> {self.directory}")
            command = isolated_pip("wheel", "--quiet", "--wheel-dir", str(scratch), *self.requirements)
            completed = subprocess.run(command, stdout=sys.stderr, check=False)
            if completed.returncode != 0:
                raise RuntimeError(
                    f"pip wheel failed (exit code {completed.returncode}) for {', '.join(self.requirements)}"
                )
            (scratch / COMPLETE_MARKER).write_text("\n".join(self.requirements) + "\n", encoding="utf-8")
            self._move_into_place(scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        report(f"wheelhouse: {len(self.wheels())} wheels in {self.directory}")

    def _move_into_place(self, scratch: Path) -> None:
        if not self.complete:
            shutil.rmtree(self.directory, ignore_errors=True)
        try:
            scratch.rename(self.directory)
        except OSError:
            if not self.complete:
                raise
