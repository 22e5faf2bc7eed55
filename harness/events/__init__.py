"""The session's one event stream: typed events on an in-process bus, mirrored to ``events.jsonl``."""

from .bus import EventBus, EventSubscriber
from .jsonl import EVENTS_FILE, JsonlEventWriter, read_events
from .lines import parse_event_line, read_event_lines
from .payloads import PAYLOADS, EventPayload, validate_payload
from .typed import PayloadMismatch, payload_as
from .types import SCHEMA_VERSION, Actor, EventType, RunEvent

__all__ = [
    "EVENTS_FILE",
    "PAYLOADS",
    "SCHEMA_VERSION",
    "Actor",
    "EventBus",
    "EventPayload",
    "EventSubscriber",
    "EventType",
    "JsonlEventWriter",
    "PayloadMismatch",
    "RunEvent",
    "parse_event_line",
    "payload_as",
    "read_event_lines",
    "read_events",
    "validate_payload",
]
