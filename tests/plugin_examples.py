"""Out-of-tree plugins as a package would write them: a sandbox backend, a field grader, a condition.

``docs/plugins.md`` shows these; ``tests/test_plugin_points.py`` installs them as entry points.
"""

from __future__ import annotations

import re
from typing import Any

from harness.conditions import ConditionDef
from harness.field_graders import FieldGraderDef
from sandbox.local import LocalBackend


class SubprocessBackend(LocalBackend):
    """The local backend under another name: a backend is any ``SandboxBackend`` subclass."""

    name = "subprocess"


class ContainerCapableBackend(LocalBackend):
    """A backend that says its environments host agent containers (a docker-engine variant would)."""

    name = "container-capable"
    runs_agent_containers = True


def _digits(pred: Any, gold: Any, _tolerance: float | None) -> float:
    return float(re.sub(r"\D", "", str(pred)) == re.sub(r"\D", "", str(gold)))


#: Equal when the digits are (an account number read out with spaces and dashes).
DIGITS_ONLY = FieldGraderDef("digits_only", _digits)
#: A text field the judge may decide when the case-folded words differ.
WORDS = FieldGraderDef("words", lambda pred, gold, _t: float(str(pred).split() == str(gold).split()), judge="text")

#: Full duplex with the user channel degraded, under a name of its own.
NOISY_DUPLEX = ConditionDef("C3-noisy", "full duplex in a noisy room", "noise alone", session="voice", acoustics=True)
#: Voice, the user waiting for the agent (as C1), under a name of its own.
POLITE_VOICE = ConditionDef("C1-polite", "turn-based voice, politely", "nothing new", session="voice",
                            turn_taking="turn_based")
#: Text, strictly alternating (as C0).
TEXT_ONLY = ConditionDef("T1", "text, strictly alternating", "the task itself", session="text")
