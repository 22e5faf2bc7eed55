"""StepFun Step-Audio realtime: the OpenAI-protocol adapter in StepFun's beta dialect.

Beta event names are mapped onto the GA handlers, the session object is the beta one, and every
client event carries an ``event_id`` (as StepFun's own client does). Voices are StepFun's and are
passed through as given (the provider's list is not published in a checkable form).
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from pydantic import BaseModel

from harness.agents.realtime import SessionConfig

from . import openai_wire, stepfun_wire
from .openai_realtime import OpenAIRealtimeAdapter

__all__ = ["StepAudioAdapter"]


class StepAudioAdapter(OpenAIRealtimeAdapter):
    model_id: ClassVar[str] = "step-audio3"
    provider: ClassVar[str] = "StepFun"
    api_key_env: ClassVar[tuple[str, ...]] = ("STEPFUN_API_KEY",)
    endpoint_env: ClassVar[str | None] = "STEPFUN_REALTIME_URL"
    default_endpoint: ClassVar[str] = "wss://api.stepfun.ai/v1/realtime"
    default_model: ClassVar[str | None] = "stepaudio-3-realtime-preview"
    default_voice: ClassVar[str] = "soft-spoken-gentleman"
    event_aliases: ClassVar[dict[str, str]] = stepfun_wire.BETA_EVENT_NAMES

    def voice_for(self, requested: str) -> str:
        return requested or self.default_voice

    def _session(self, config: SessionConfig) -> openai_wire.SessionUpdate:
        turns = config.turn_detection
        detection = None
        if turns.type != "none":  # StepFun has server VAD only
            detection = openai_wire.ServerVad(
                threshold=turns.threshold,
                prefix_padding_ms=turns.prefix_padding_ms,
                silence_duration_ms=turns.silence_duration_ms,
                create_response=turns.create_response,
                interrupt_response=turns.interrupt_response,
            )
        return openai_wire.SessionUpdate(
            session=stepfun_wire.StepSession(
                instructions=config.instructions, voice=self._voice, turn_detection=detection, tools=self._tools(config)
            )
        )

    async def _send(self, message: BaseModel | dict[str, Any]) -> None:
        if isinstance(message, BaseModel) and "event_id" in type(message).model_fields:
            message = message.model_copy(update={"event_id": f"evt_{uuid.uuid4().hex[:12]}"})
        await super()._send(message)
