"""A tool call the task server failed on itself is the harness's bug, wherever the server runs.

The server marks such a call (``ToolCallRecord.server_fault``, the traceback of our handler's
failure) instead of showing the agent a tool error; every harness path that turns the server's
answers into records (the in-process port, the MCP bridge, the call stream followed in native tool
mode) passes them through :func:`checked_record`, so the session fails loudly as a harness bug and
the agent is never scored on it. ``mcp_servers`` cannot raise :class:`HarnessBug` itself: it
imports nothing of the harness.
"""

from __future__ import annotations

from harness.blame.errors import HarnessBug
from mcp_servers.records import ToolCallRecord

__all__ = ["checked_record"]


def checked_record(record: ToolCallRecord) -> ToolCallRecord:
    """``record`` itself, or :class:`HarnessBug` when the server failed on the call."""
    if record.server_fault is not None:
        raise HarnessBug(f"the task server failed on tool call {record.index} ({record.name}):\n{record.server_fault}")
    return record
