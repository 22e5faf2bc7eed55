"""The rich consoles the CLI prints with: no emoji codes, so ``chat:llama`` never prints as ``chat🦙``.

Rich turns ``:name:`` into an emoji by default, and a model key, a task id or an error message is
data, not markup: every console of the CLI comes from here, and data is printed as ``Text``.
"""

from __future__ import annotations

from rich.console import Console

__all__ = ["cli_console"]


def cli_console(*, stderr: bool = False) -> Console:
    """A console for the CLI's tables and lines (stdout, or stderr for progress)."""
    return Console(stderr=stderr, emoji=False)
