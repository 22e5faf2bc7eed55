"""Provider keys from a ``.env`` file, for ``apex-voice run --env-file`` (default ``./.env``).

The file is read by python-dotenv's parser, so quoting, ``export`` prefixes, escapes and trailing
``# comments`` mean what they mean to every other tool that reads ``.env`` (a hand-written reader
kept the quotes of ``KEY="sk-abc" # comment``: a 401 that stopped the campaign). A variable already
set in the environment wins, so a shell export always overrides the file. An empty value (``KEY=``,
``KEY=""``) leaves the variable unset, as the reference does: a template's blank line never turns
into a key that is set but empty. Variables are not expanded (``$OTHER`` stays literal): a key is
data, not a template.
"""

from __future__ import annotations

import os
from pathlib import Path

from dotenv.parser import parse_stream

__all__ = ["EnvFileError", "load_env_file"]


class EnvFileError(ValueError):
    """A line of the file is not ``NAME=value`` (the message names the file and line)."""


def _parse(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    with path.open(encoding="utf-8") as stream:
        for binding in parse_stream(stream):
            if binding.error or (binding.key is not None and binding.value is None):
                text = binding.original.string.strip()
                raise EnvFileError(f"{path}:{binding.original.line}: expected NAME=value, got {text[:40]!r}")
            if binding.key is not None and binding.value:
                values[binding.key] = binding.value
    return values


def load_env_file(path: Path) -> list[str]:
    """Set the file's variables that the environment lacks; returns the names it set.

    The whole file is parsed first, so a bad line sets nothing.
    """
    values = _parse(path)
    loaded = [name for name in values if not os.environ.get(name, "").strip()]
    for name in loaded:
        os.environ[name] = values[name]
    return loaded
