"""The one exception a tool handler raises to refuse a call.

Its message is shown to the agent verbatim, so it must say what was wrong and how to fix it.
Anything else a handler raises is a bug of ours: the call is logged as the server's own fault
(``ToolCallRecord.server_fault``) and the session fails as a harness bug, never as a tool error.
"""

from __future__ import annotations

__all__ = ["ToolError"]


class ToolError(Exception):
    """A refused tool call; ``str(error)`` is the text the agent receives."""
