"""StepFun Step-Audio's session object, in the OpenAI *beta* Realtime dialect it speaks.

Top-level ``modalities``, ``voice``, ``input_audio_format``/``output_audio_format`` ("pcm16", 24 kHz)
and ``turn_detection``; flat function tools. Its server events carry the beta names
(``response.audio.delta``, ``response.audio_transcript.delta``, ``response.text.delta``), mapped onto
the GA ones by the adapter's ``event_aliases``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_serializer

from .openai_wire import FunctionTool, ServerVad

__all__ = ["BETA_EVENT_NAMES", "StepSession"]

#: Beta server event names → GA names.
BETA_EVENT_NAMES = {
    "response.audio.delta": "response.output_audio.delta",
    "response.audio.done": "response.output_audio.done",
    "response.audio_transcript.delta": "response.output_audio_transcript.delta",
    "response.audio_transcript.done": "response.output_audio_transcript.done",
    "response.text.delta": "response.output_text.delta",
    "response.text.done": "response.output_text.done",
}


class StepSession(BaseModel):
    model_config = ConfigDict(extra="forbid")

    modalities: list[Literal["text", "audio"]] = ["text", "audio"]
    instructions: str
    voice: str
    input_audio_format: Literal["pcm16"] = "pcm16"
    output_audio_format: Literal["pcm16"] = "pcm16"
    turn_detection: ServerVad | None
    tools: list[FunctionTool]
    tool_choice: Literal["auto", "none", "required"] = "auto"

    @model_serializer(mode="wrap")
    def _always_send_turn_detection(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        data.setdefault("turn_detection", None)  # ``null`` switches StepFun's turn detection off
        return data
