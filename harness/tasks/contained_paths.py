"""Resolving a path named inside a package (or dataset) without ever leaving it.

Every path the harness reads on a package's say-so goes through :func:`resolve_inside`: task.yaml
overrides, knowledge documents, ``SHA256SUMS`` entries, audio-index ``file`` values. Escapes are
refused *before* anything outside is touched, and the refusal never depends on whether the outside
file exists, so a hostile package learns nothing about the machine it is loaded on.
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ContainedRoot", "PathEscape", "resolve_inside"]

# Linux's NAME_MAX and PATH_MAX: longer names fail every system call (ENAMETOOLONG).
_MAX_NAME_BYTES = 255
_MAX_PATH_BYTES = 4096


@dataclass
class PathEscape(Exception):
    """``rel`` cannot be used. ``culprit`` is the root-relative symlink to blame, or ``None`` when
    the path as written is at fault (absolute, ``..`` out, NUL byte)."""

    reason: str
    culprit: str | None = None

    def __str__(self) -> str:
        return self.reason


def resolve_inside(root: Path, rel: str, *, where: str = "the task package") -> Path:
    """The real path of ``root/rel``; :class:`PathEscape` when it lies outside ``root``.

    The path is checked one component at a time so the message blames the symlink that leads out
    (or loops), not the file that happened to be reached through it.
    """
    return ContainedRoot.of(root).resolve(rel, where=where)


@dataclass(frozen=True)
class ContainedRoot:
    """A directory resolved once, for the many paths a loader resolves inside it.

    Resolving the root is the costly part (one ``lstat`` per component of an absolute path); a
    package reader pays it once per load instead of once per file. The folders walked on the way
    are remembered too (a package's forty files sit in a handful of folders), so one instance must
    not outlive the load or check it serves: a folder swapped for a symlink afterwards would go
    unseen. Make a fresh one per use (:meth:`fresh`).
    """

    real: Path
    #: Root-relative folder (``"user/audio"``) → its real path, for folders already checked.
    _folders: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, root: Path) -> ContainedRoot:
        return cls(root.resolve())

    def fresh(self) -> ContainedRoot:
        """The same root with nothing remembered."""
        return ContainedRoot(self.real)

    def resolve(self, rel: str, *, where: str = "the task package") -> Path:
        """As :func:`resolve_inside`, for ``rel`` under this root."""
        return Path(self.locate(rel, where=where))

    def locate(self, rel: str, *, where: str = "the task package") -> str:
        """:meth:`resolve` as a string, for callers that only open the file: a loader resolves a
        hundred paths per package, and building a ``Path`` for each was a tenth of its time."""
        parts = [part for part in _normalized(rel, where).split("/") if part != "."]
        if not parts:
            return str(self.real)
        folder = "/".join(parts[:-1])
        current = self._folders.get(folder) if folder else str(self.real)
        if current is not None:
            return self._step(current, parts, len(parts) - 1, where)
        current = str(self.real)
        for index in range(len(parts)):
            current = self._step(current, parts, index, where)
            if index < len(parts) - 1:
                self._folders["/".join(parts[: index + 1])] = current
        return current

    def _step(self, current: str, parts: list[str], index: int, where: str) -> str:
        """``current`` (real, or already missing) joined with ``parts[index]``, resolved if a symlink."""
        candidate = os.path.join(current, parts[index])
        if not _is_symlink(candidate):
            return candidate  # ``current`` is real, so ``candidate`` needs no resolving
        culprit = "/".join(parts[: index + 1])
        try:
            resolved = Path(candidate).resolve()
        except (RuntimeError, OSError):  # a symlink loop (RuntimeError before Python 3.13)
            raise PathEscape("symlink loop", culprit) from None
        if not resolved.is_relative_to(self.real):
            raise PathEscape(f"symlink points outside {where}", culprit)
        return str(resolved)


def _normalized(rel: str, where: str) -> str:
    """``rel`` normalized; refused when it is written to leave or cannot name a file."""
    if "\0" in rel:
        raise PathEscape("path contains a NUL byte")
    try:
        encoded = os.fsencode(rel)
    except UnicodeEncodeError:  # a lone surrogate: no file can have this name
        raise PathEscape("path is not valid text") from None
    if len(encoded) > _MAX_PATH_BYTES or any(len(part) > _MAX_NAME_BYTES for part in encoded.split(b"/")):
        raise PathEscape("path or file name too long")
    normalized = posixpath.normpath(rel) if rel else "."
    if normalized.startswith("/") or normalized == ".." or normalized.startswith("../"):
        raise PathEscape(f"path leaves {where}")
    return normalized


def _is_symlink(path: str) -> bool:
    """Whether ``path`` is a symlink; a name that cannot be looked up is taken as written, as the
    non-strict :meth:`Path.resolve` takes it."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False
