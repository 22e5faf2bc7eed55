"""The session's one event stream: typed events on an in-process bus, mirrored to ``events.jsonl``."""

from .bus import EventBus, EventSubscriber
from .jsonl import EVENTS_FILE, JsonlEventWriter, read_events
from .payloads import PAYLOADS, validate_payload
from .types import SCHEMA_VERSION, Actor, EventType, RunEvent

__all__ = [
    "EVENTS_FILE",
    "PAYLOADS",
    "SCHEMA_VERSION",
    "Actor",
    "EventBus",
    "EventSubscriber",
    "EventType",
    "JsonlEventWriter",
    "RunEvent",
    "EventSubscriber",
    "read_events",
    "validate_payload",
]
