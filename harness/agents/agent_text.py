"""Agent text made safe once, at the agent boundary: what no writer, parser or terminal can trip on.

The agent under test writes strings the harness stores and shows: transcripts, tool names, error
messages, a websocket close reason, its metadata. Some code points break what comes after: a lone
surrogate cannot be encoded as UTF-8 (``result.json`` would not be written), NUL ends a C string,
control characters move a terminal's cursor, and bidi controls reorder what the TUI shows
(Trojan Source). Each of those is replaced by U+FFFD where the agent's event enters the harness, so
every reader downstream sees plain, encodable text. Tabs and newlines stay (transcripts have them).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REPLACEMENT", "safe_text", "safe_value"]

REPLACEMENT = "\ufffd"

#: C0 controls but tab and newline, DEL and C1 controls, the bidi marks, embeddings, overrides and
#: isolates, the line and paragraph separators, and every surrogate code point.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)


def safe_text(text: str) -> str:
    """``text`` with every unsafe code point replaced (the same object when there is none)."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(REPLACEMENT, text)


def safe_value(value: Any) -> Any:
    """Plain JSON data (``json.loads``'s output) with every string, keys included, made safe."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, list):
        return [safe_value(item) for item in value]
    if isinstance(value, dict):
        return {safe_text(key): safe_value(item) for key, item in value.items()}
    return value
