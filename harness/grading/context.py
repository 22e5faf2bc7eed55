"""What the grader reads about a finished session, gathered in one place."""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_servers.records import EnvironmentSnapshot

from .judge import FieldJudge

__all__ = ["GradingContext"]


@dataclass
class GradingContext:
    """The final environment plus the session facts the environment itself does not hold.

    ``observed_act_keys`` come from the simulated user's act observer and ``gold_doc_ids`` from the
    task's knowledge manifest; ``judge`` is consulted only for values deterministic graders reject.
    """

    snapshot: EnvironmentSnapshot
    observed_act_keys: set[str] = field(default_factory=set)
    gold_doc_ids: list[str] = field(default_factory=list)
    judge: FieldJudge | None = None
