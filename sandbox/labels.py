"""Docker labels that mark what the sandbox created, so leftovers can always be found and removed."""

from __future__ import annotations

import os
import socket

__all__ = ["LABEL_HOST", "LABEL_OWNER_PID", "LABEL_RUN", "LABEL_SESSION", "LABEL_TASK", "session_labels"]

LABEL_RUN = "apexvoice.run"
LABEL_SESSION = "apexvoice.session"
LABEL_TASK = "apexvoice.task"
#: The harness process that owns the resource: the start-up sweep removes only orphans.
LABEL_OWNER_PID = "apexvoice.owner_pid"
LABEL_HOST = "apexvoice.host"


def session_labels(run_id: str, session_id: str, task_id: str) -> dict[str, str]:
    return {
        LABEL_RUN: run_id,
        LABEL_SESSION: session_id,
        LABEL_TASK: task_id,
        LABEL_OWNER_PID: str(os.getpid()),
        LABEL_HOST: socket.gethostname(),
    }
