"""How the simulated user speaks (``run --user-audio``), apart from the speech bank that serves it:
the CLI names the choices before it knows whether a run speaks at all (a C0 run never loads audio)."""

from __future__ import annotations

from enum import Enum

__all__ = ["UserAudioMode"]


class UserAudioMode(str, Enum):
    AUTO = "auto"
    PRERENDERED = "prerendered"
    ESPEAK = "espeak"
    KOKORO = "kokoro"
