"""The environment a child process of the harness starts with: what Python needs, nothing of ours.

The harness's environment carries the user's provider keys (``OPENAI_API_KEY``, ...), the judge's
key and whatever else was exported or read from ``.env``. A task server or a hosted out-of-tree
adapter is code that must not see any of it, so neither inherits ``os.environ``: each gets the
variables below, with ``HOME`` and ``TMPDIR`` pointing at its own private directory, and only the
variables the user explicitly passes on top (``run --adapter-env NAME``).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["child_environment", "source_root"]

#: Copied from the harness's environment when set: finding programs, the locale, the time zone.
PASSED_THROUGH = ("PATH", "LANG", "LANGUAGE", "TZ")
#: Every ``LC_*`` variable is the locale too.
PASSED_PREFIXES = ("LC_",)


def source_root(package: str) -> Path | None:
    """The directory holding ``package`` (a source checkout works uninstalled), found with
    ``find_spec``: nothing is imported."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parents[1]


def child_environment(
    *, home: Path, python_path: Iterable[Path | str] = (), extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A scrubbed environment: locale and ``PATH`` from ours, ``HOME``/``TMPDIR`` = ``home``,
    ``PYTHONPATH`` = ``python_path`` (what the child must import), then ``extra`` as given."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name in PASSED_THROUGH or name.startswith(PASSED_PREFIXES)
    }
    env.update(HOME=str(home), TMPDIR=str(home), PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    paths = list(dict.fromkeys(str(p) for p in python_path))
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra or {})
    return env
