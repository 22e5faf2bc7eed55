"""The dataset's ``SHA256SUMS``: detect task files changed after the dataset was published.

Format (published): one line per file under ``tasks/`` and ``data/``, sorted by path,
``<sha256 hex><two spaces><POSIX path relative to the dataset root>\\n``.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import os
import posixpath
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import BinaryIO

from harness.atomic_write import atomic_write_text

from .bounded_parse import ParseRefused, ReadLimits, read_bounded
from .contained_paths import ContainedRoot, PathEscape
from .errors import TaskLoadError

__all__ = ["CHECKSUM_FILE", "ChecksumManifest"]

CHECKSUM_FILE = "SHA256SUMS"
_COVERED_DIRS = ("tasks", "data")
#: One 100-byte line per file: room for some 80,000 files.
_LIMITS = ReadLimits("checksum", max_bytes=8 << 20)
_READ_SIZE = 256 << 10


@dataclass
class ChecksumManifest:
    """Expected digests of a dataset's files, keyed by root-relative POSIX path."""

    root: Path
    digests: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, root: Path) -> ChecksumManifest:
        """Parse ``root/SHA256SUMS``; a malformed line, or one naming a path outside the dataset, is an
        error naming its number."""
        try:
            text = read_bounded(root / CHECKSUM_FILE, _LIMITS).decode("utf-8")
        except (ParseRefused, UnicodeDecodeError) as exc:
            raise TaskLoadError(root.name, CHECKSUM_FILE, str(exc)) from None
        except OSError as exc:
            raise TaskLoadError(root.name, CHECKSUM_FILE, f"cannot read: {exc.strerror}") from None
        digests: dict[str, str] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            digest, sep, rel = line.partition("  ")
            if not sep or len(digest) != 64 or not rel:
                raise TaskLoadError(
                    root.name, CHECKSUM_FILE, "expected '<sha256 hex>  <path>'", line=number
                )
            if posixpath.normpath(rel) != rel or rel == ".." or rel.startswith(("/", "../")) or "\0" in rel:
                raise TaskLoadError(
                    root.name, CHECKSUM_FILE, "path must be a normalized path inside the dataset",
                    field="path", value=rel, line=number,
                )
            digests[rel] = digest.lower()
        return cls(root=root, digests=digests)

    @classmethod
    def write(cls, root: Path) -> ChecksumManifest:
        """Hash every file under ``tasks/`` and ``data/`` and (re)write ``root/SHA256SUMS``.

        A symlink that leads out of the dataset is refused: its target would be published as ours.
        """
        files = sorted(
            p for sub in _COVERED_DIRS if (root / sub).is_dir() for p in (root / sub).rglob("*") if p.is_file()
        )
        manifest = cls(root=root)
        contained = manifest._contained_root.fresh()
        for path in files:
            rel = path.relative_to(root).as_posix()
            manifest.digests[rel] = _sha256(manifest._inside(rel, contained))
        lines = "".join(f"{digest}  {rel}\n" for rel, digest in sorted(manifest.digests.items()))
        atomic_write_text(root / CHECKSUM_FILE, lines)
        return manifest

    def verify(self, paths: Iterable[Path]) -> None:
        """Check every listed file that lies under one of ``paths`` (files or directories).

        Raises :class:`TaskLoadError` naming the first listed file that is missing or differs. A
        listed path that leads out of the dataset (through a symlink) is refused before it is
        opened, with one message whether or not something exists out there.
        """
        root = self._contained_root.fresh()  # folders are remembered for this check only
        wanted = {rel for prefix in (self._relative(Path(p)) for p in paths) for rel in self._under(prefix)}
        buffer = bytearray(_READ_SIZE)
        for rel in sorted(wanted):
            self._check(root, rel, buffer)

    def digests_under(self, path: Path) -> dict[str, str]:
        """The listed digests of the files under ``path`` (a task directory), by root-relative path."""
        return {rel: self.digests[rel] for rel in self._under(self._relative(Path(path)))}

    def _under(self, prefix: str) -> Iterator[str]:
        """The listed paths ``prefix`` and ``prefix/...``: all within the sorted run of paths that
        start with ``prefix`` (which also holds siblings such as ``prefix-b``)."""
        listed = self._sorted_paths
        for rel in itertools.islice(listed, bisect.bisect_left(listed, prefix), None):
            if not rel.startswith(prefix):
                return
            if rel == prefix or rel.startswith(prefix + "/"):
                yield rel

    def _check(self, root: ContainedRoot, rel: str, buffer: bytearray) -> None:
        target = self._inside(rel, root)
        try:
            fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the check
        except (FileNotFoundError, NotADirectoryError):
            raise self._error(rel, f"SHA256SUMS lists {rel} but the file is missing") from None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise self._error(rel, f"SHA256SUMS lists {rel} but the file is missing")
            digest = _digest_of(handle, buffer)
        if digest != self.digests[rel]:
            raise self._error(rel, f"SHA256SUMS mismatch for {rel} (file changed after publication)")

    @cached_property
    def _sorted_paths(self) -> list[str]:
        return sorted(self.digests)

    @cached_property
    def _contained_root(self) -> ContainedRoot:
        return ContainedRoot.of(self.root)

    def _inside(self, rel: str, root: ContainedRoot) -> str:
        try:
            return root.locate(rel, where="the dataset")
        except PathEscape as exc:
            raise self._error(exc.culprit or rel, f"SHA256SUMS lists {rel}: {exc.reason}") from None

    def _relative(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self._contained_root.real).as_posix()
        except ValueError:
            raise ValueError(f"{path} is not inside the dataset root {self.root}") from None

    @staticmethod
    def _error(rel: str, reason: str) -> TaskLoadError:
        parts = rel.split("/")
        in_package = parts[0] == "tasks" and len(parts) > 2
        task_id = parts[1] if in_package else "-"
        return TaskLoadError(task_id, "/".join(parts[2:]) if in_package else rel, reason)


def _sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return _digest_of(handle, bytearray(_READ_SIZE))


def _digest_of(handle: BinaryIO, buffer: bytearray) -> str:
    """Read into one buffer a whole check reuses: a fresh chunk per read is fresh pages from the
    kernel (a package's ~4 MB of audio cost more in page faults than in hashing), and
    ``hashlib.file_digest`` zeroes a new buffer for every file, most of them a few KB."""
    digest = hashlib.sha256()
    view = memoryview(buffer)
    while size := handle.readinto(view):  # type: ignore[attr-defined]
        digest.update(view[:size])
    return digest.hexdigest()
