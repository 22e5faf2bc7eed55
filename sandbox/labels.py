"""Docker labels that mark what the sandbox created, so leftovers can always be found and removed."""

from __future__ import annotations

from .ownership import Owner, current_owner

__all__ = [
    "LABEL_BOOT_ID",
    "LABEL_HOST",
    "LABEL_OWNER_PID",
    "LABEL_RUN",
    "LABEL_SESSION",
    "LABEL_TASK",
    "owner_of",
    "session_labels",
]

LABEL_RUN = "apexvoice.run"
LABEL_SESSION = "apexvoice.session"
LABEL_TASK = "apexvoice.task"
#: The harness process that owns the resource (pid, host, boot id): sweeps remove only orphans.
LABEL_OWNER_PID = "apexvoice.owner_pid"
LABEL_HOST = "apexvoice.host"
LABEL_BOOT_ID = "apexvoice.boot_id"


def session_labels(run_id: str, session_id: str, task_id: str) -> dict[str, str]:
    owner = current_owner()
    return {
        LABEL_RUN: run_id,
        LABEL_SESSION: session_id,
        LABEL_TASK: task_id,
        LABEL_OWNER_PID: owner.pid,
        LABEL_HOST: owner.host,
        LABEL_BOOT_ID: owner.boot_id,
    }


def owner_of(labels: dict[str, str]) -> Owner:
    return Owner(labels.get(LABEL_OWNER_PID, ""), labels.get(LABEL_HOST, ""), labels.get(LABEL_BOOT_ID, ""))
