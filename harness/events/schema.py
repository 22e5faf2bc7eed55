"""The JSON schema of an ``events.jsonl`` line, generated from the event models.

``docs/events.schema.json`` is this output; a test keeps the committed file equal to it, and
validates every line the test sessions write against it. Regenerate with
``python -m harness.events.schema > docs/events.schema.json``.
"""

from __future__ import annotations

import json
from typing import Any

from .payloads import PAYLOADS
from .types import SCHEMA_VERSION, RunEvent

__all__ = ["events_schema"]


def events_schema() -> dict[str, Any]:
    """One schema: the envelope, with the payload constrained by the line's ``type``."""
    envelope = RunEvent.model_json_schema()
    defs: dict[str, Any] = {}
    branches = []
    for event_type, model in PAYLOADS.items():
        payload = model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(payload.pop("$defs", {}))
        defs[model.__name__] = payload
        branches.append({
            "if": {"properties": {"type": {"const": event_type.value}}},
            "then": {"properties": {"payload": {"$ref": f"#/$defs/{model.__name__}"}}},
        })
    defs.update(envelope.pop("$defs", {}))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_VERSION,
        "title": "apex-voice events.jsonl line",
        **envelope,
        "allOf": branches,
        "$defs": defs,
    }


if __name__ == "__main__":
    print(json.dumps(events_schema(), indent=2, sort_keys=True))
