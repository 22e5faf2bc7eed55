"""Where an out-of-tree adapter's code is on disk, found without running any of it.

A hosted adapter (``--model package.module:Class``) is imported only by its host, out of the
harness's process. The host needs that code and nothing else: a sandboxed child process or an
agent container gets the top-level package itself (its directory, or the module file) bound or
mounted read-only, never its parent, so a package that sits in a checkout beside task data does
not bring the task data with it (one that *holds* a task of the campaign is refused).
``importlib.util.find_spec`` of a top-level name reads the import path only: no module executes.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from .registry import ENTRY_POINT_GROUP

__all__ = ["AdapterSource", "AdapterSourceError", "adapter_source", "hosted_source"]


class AdapterSourceError(LookupError):
    """The adapter's top-level package is nowhere on the import path (or is the harness itself)."""


@dataclass(frozen=True)
class AdapterSource:
    """The top-level package (or module) holding an adapter, and the directory it is imported from."""

    top_level: str
    #: The package directory, or the ``.py`` file of a top-level module.
    path: Path

    @property
    def import_root(self) -> Path:
        return self.path.parent

    def holds(self, other: Path) -> bool:
        """``other`` lies inside what would be shared with the host."""
        other = other.resolve()
        return other == self.path or self.path in other.parents


def adapter_source(target: str) -> AdapterSource:
    """The code behind ``target``: ``package.module:Class`` or an installed entry point's name.

    Raises:
        AdapterSourceError: its top-level package cannot be found, is a namespace package spread
            over several directories, or is one of the harness's own packages.
    """
    module = _module_of(target)
    top_level = module.partition(".")[0]
    if top_level in ("harness", "mcp_servers", "sandbox"):
        raise AdapterSourceError(f"{target!r} is in the harness's own package {top_level!r}, not an out-of-tree adapter")
    try:
        spec = importlib.util.find_spec(top_level)
    except (ImportError, ValueError) as exc:
        raise AdapterSourceError(f"cannot find the package of {target!r}: {exc}") from None
    if spec is None:
        raise AdapterSourceError(f"cannot load adapter {target!r}: no module named {top_level!r} on the import path")
    locations = list(dict.fromkeys(Path(p).resolve() for p in spec.submodule_search_locations or []))
    if locations:
        if len(locations) != 1:
            raise AdapterSourceError(f"{top_level!r} is a namespace package in {len(locations)} directories; "
                                     "host an adapter from one package directory")
        return AdapterSource(top_level, locations[0])
    if spec.origin is None or not spec.has_location:
        raise AdapterSourceError(f"{top_level!r} is not loaded from a file (built-in or frozen)")
    return AdapterSource(top_level, Path(spec.origin).resolve())


def hosted_source(target: str, task_dirs: Iterable[Path] = ()) -> AdapterSource:
    """:func:`adapter_source`, refused when the package holds one of ``task_dirs``: showing the
    package to its host (mounted in a container, bound into a sandbox) would show it that task.

    Raises:
        AdapterSourceError: as :func:`adapter_source`, or the package holds a task.
    """
    source = adapter_source(target)
    inside = [d for d in task_dirs if source.holds(d)]
    if inside:
        raise AdapterSourceError(f"the package of adapter {target!r} ({source.path}) holds task {inside[0].name}: "
                                 "showing it to the adapter's host would show that task's files; move the adapter out")
    return source


def _module_of(target: str) -> str:
    """The module an out-of-tree key names (an entry point's value is read, never loaded)."""
    if ":" in target:
        return target.partition(":")[0]
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name == target:
            return point.module
    raise AdapterSourceError(f"{target!r} is neither package.module:Class nor an installed entry point")
