"""Twilio Media Streams messages (bidirectional ``<Connect><Stream>``), as pydantic types.

The harness plays Twilio: it sends ``connected``, ``start``, ``media`` (the caller's audio,
``track: inbound``), ``mark`` (echoing the bot's marks once their audio has played) and ``stop``;
the bot sends ``media`` (its speech, payload only), ``mark`` and ``clear``. Every field holds what
Twilio puts there: sequence numbers, chunks and timestamps are decimal strings, audio is base64
G.711 μ-law at 8 kHz. Names follow Twilio's JSON (camelCase) so a bot's own parser reads them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "MEDIA_ENCODING",
    "MEDIA_RATE",
    "BotClear",
    "BotMark",
    "BotMedia",
    "BotMessage",
    "CallerMark",
    "CallerMedia",
    "Connected",
    "MarkBody",
    "MediaFormat",
    "Start",
    "StartBody",
    "Stop",
    "StopBody",
    "bot_message",
]

MEDIA_ENCODING = "audio/x-mulaw"
MEDIA_RATE = 8000


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _In(BaseModel):
    """What a bot sends: Twilio ignores fields it does not know, so do we."""

    model_config = ConfigDict(extra="ignore")


# -- harness (the phone network) → bot --------------------------------------------------------


class Connected(_Out):
    event: Literal["connected"] = "connected"
    protocol: str = "Call"
    version: str = "1.0.0"


class MediaFormat(_Out):
    encoding: str = MEDIA_ENCODING
    sampleRate: int = MEDIA_RATE
    channels: int = 1


class StartBody(_Out):
    accountSid: str
    streamSid: str
    callSid: str
    tracks: list[str] = Field(default_factory=lambda: ["inbound"])
    #: ``<Parameter>`` values of the TwiML: what the bot needs for this call (all strings).
    customParameters: dict[str, str] = Field(default_factory=dict)
    mediaFormat: MediaFormat = Field(default_factory=MediaFormat)


class Start(_Out):
    event: Literal["start"] = "start"
    sequenceNumber: str
    start: StartBody
    streamSid: str


class CallerMediaBody(_Out):
    track: Literal["inbound"] = "inbound"
    chunk: str
    timestamp: str
    payload: str


class CallerMedia(_Out):
    event: Literal["media"] = "media"
    sequenceNumber: str
    media: CallerMediaBody
    streamSid: str


class MarkBody(BaseModel):
    name: str = Field(max_length=256)


class CallerMark(_Out):
    """A bot's mark, sent back once the audio before it has played (or was cleared)."""

    event: Literal["mark"] = "mark"
    sequenceNumber: str
    streamSid: str
    mark: MarkBody


class StopBody(_Out):
    accountSid: str
    callSid: str


class Stop(_Out):
    event: Literal["stop"] = "stop"
    sequenceNumber: str
    stop: StopBody
    streamSid: str


# -- bot → harness ------------------------------------------------------------------------------


class BotMediaBody(_In):
    payload: str


class BotMedia(_In):
    event: Literal["media"]
    streamSid: str
    media: BotMediaBody


class BotMark(_In):
    event: Literal["mark"]
    streamSid: str
    mark: MarkBody


class BotClear(_In):
    event: Literal["clear"]
    streamSid: str


BotMessage = Annotated[BotMedia | BotMark | BotClear, Field(discriminator="event")]


class _Envelope(_In):
    message: BotMessage


def bot_message(message: dict[str, object]) -> BotMedia | BotMark | BotClear:
    """One bot message, validated (``pydantic.ValidationError`` for anything else)."""
    return _Envelope.model_validate({"message": message}).message
