"""Fixed user utterances spoken by the session runner, not by a task's flow.

The texts are the published ones, character for character (em-dashes are U+2014), because the
pre-rendered clip index is looked up by exact text. They belong to the task format: every package's
audio must cover them (``lint_realization``), and the user simulator and the renderer read them here.
"""

from __future__ import annotations

__all__ = ["CLOSING_LINES", "FINALIZE_LINE", "NUDGE_LINE", "TEXT_CLOSING_LINE", "closing_line"]

CLOSING_LINES: tuple[str, ...] = (
    "No, that's everything \u2014 thanks so much for your help!",
    "That's all I needed. Thanks a lot, appreciate it!",
    "Nope, that covers it \u2014 thank you, have a good one!",
    "That's everything on my end. Thanks for sorting that out!",
)

NUDGE_LINE = "Sorry \u2014 could you go on?"


def closing_line(event_seed: int = 1) -> str:
    """The sign-off line for a session: ``event_seed mod 4`` picks it (seed 1 ⇒ index 1)."""
    return CLOSING_LINES[event_seed % len(CLOSING_LINES)]


#: Text runner (C0, recover mode) only: asks the agent to wrap up before the closing line.
FINALIZE_LINE = (
    "That's all my information. Could you make sure everything is recorded and mark it ready for review?"
)

#: Text runner (C0, recover mode) only: its fixed sign-off.
TEXT_CLOSING_LINE = "Great, thanks for your help!"
