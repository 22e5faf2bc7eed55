"""``grading_inputs.json``: everything a finished session is graded from, saved beside its events.

A session is graded from its final environment snapshot plus two facts the environment does not
hold (the acts the simulated user observed, the task's gold documents). Saving them lets
``apex-voice regrade`` grade a session again — with newer graders, or once a judge that was down
answers — without re-running it.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from harness.atomic_write import atomic_write_text
from mcp_servers.records import EnvironmentSnapshot

__all__ = ["GRADING_INPUTS_FILE", "GradingInputs"]

GRADING_INPUTS_FILE = "grading_inputs.json"


class GradingInputs(BaseModel):
    snapshot: EnvironmentSnapshot
    observed_act_keys: list[str] = Field(default_factory=list)
    gold_doc_ids: list[str] = Field(default_factory=list)

    def write(self, session_dir: Path) -> Path:
        path = Path(session_dir) / GRADING_INPUTS_FILE
        atomic_write_text(path, self.model_dump_json() + "\n")
        return path

    @classmethod
    def read(cls, session_dir: Path) -> GradingInputs:
        """Raises ``OSError``/``ValueError`` naming the file when it is missing or does not parse."""
        path = Path(session_dir) / GRADING_INPUTS_FILE
        return cls.model_validate(json.loads(path.read_text(encoding="utf-8")))
