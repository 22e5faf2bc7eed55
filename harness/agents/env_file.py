"""Provider keys from a ``.env`` file, for ``apex-voice run --env-file`` (default ``./.env``).

Only ``NAME=value`` lines are read (``export`` prefix, quotes and ``#`` comments allowed); a variable
already set in the environment wins, so a shell export always overrides the file. An empty value
(``KEY=``, ``KEY=""``) leaves the variable unset, as the reference does: a template's blank line
never turns into a key that is set but empty.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["EnvFileError", "load_env_file"]

_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")


class EnvFileError(ValueError):
    """A line of the file is not ``NAME=value`` (the message names the file and line)."""


def _value(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    return raw.split(" #", 1)[0].strip()


def load_env_file(path: Path) -> list[str]:
    """Set the file's variables that the environment lacks; returns the names it set.

    The whole file is parsed first, so a bad line sets nothing.
    """
    values: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        match = _LINE.match(text)
        if match is None:
            raise EnvFileError(f"{path}:{number}: expected NAME=value, got {text[:40]!r}")
        value = _value(match.group(2))
        if value:
            values[match.group(1)] = value
    loaded = [name for name in values if not os.environ.get(name, "").strip()]
    for name in loaded:
        os.environ[name] = values[name]
    return loaded
