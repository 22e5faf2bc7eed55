"""A telephony bot packaged as an image (``twilio+container:IMAGE``): the loopback fake's Twilio
checks and call script, served on ``0.0.0.0:8765`` at ``/media-stream`` inside its own container.

It knows nothing of the task but its greeting: the MCP endpoint and token come from ``start``'s
``customParameters``, as for a bot behind a phone number. It looks up the unit, listens to the
caller's opening, says the greeting in the harness's agent voice (hibari, installed in the image it
is built on) as 8 kHz μ-law with a mark after it, and hangs up (1000) once the caller answers. A
message from the harness that breaks Twilio's documented shapes makes it hang up with 4000 and the
first violation as the reason, so the test sees it in the session's record.
Built by :mod:`tests.fakes.twilio_bot_image`.
"""

from __future__ import annotations

import asyncio
import os

import numpy as np

from harness.audio.agent_voice import synthesize_agent_lines
from harness.audio.frames import SAMPLE_RATE
from harness.audio.resample import resample_clip

from .twilio_bot import BotCall, TwilioBotFake

GREETING = "Morning. I'm ready to take down your readings for the quarterly inspection. What's the unit ID on the nameplate?"
PATH = "/media-stream"
#: Caller frames to hear before speaking (past the user's opening), and to wait for an answer after.
LISTEN_FRAMES = 500
LINGER_FRAMES = 6000


def _answered(frames: list[np.ndarray]) -> bool:
    return sum(1 for f in frames if np.abs(f.astype(np.int32)).mean() > 300) >= 50


async def main() -> None:
    clip = (await synthesize_agent_lines([GREETING]))[GREETING]
    line = np.clip(resample_clip(clip.pcm.astype(float), SAMPLE_RATE, 8000), -32768, 32767).astype(np.int16)
    bot: TwilioBotFake
    ballast: list[np.ndarray] = []

    async def call_script(call: BotCall) -> None:
        tools = await call.tools()
        await tools.call("get_unit_record", {"entity_id": os.environ["BOT_UNIT_ID"]})  # run --adapter-env
        if "BOT_BALLAST_MB" in os.environ:  # a bot that outgrows its container's memory limit
            ballast.append(np.ones(int(os.environ["BOT_BALLAST_MB"]) * 2**20 // 8))
        while len(bot.caller_audio) < LISTEN_FRAMES:
            await asyncio.sleep(0.05)
        await call.media(line, chunk_ms=40)
        await call.mark("greeting")
        await asyncio.wait_for(call.marks_back.get(), 60)
        marked = len(bot.caller_audio)
        while len(bot.caller_audio) < marked + LINGER_FRAMES and not _answered(bot.caller_audio[marked:]):
            await asyncio.sleep(0.05)
        if bot.violations or bot.script_errors:
            await call.ws.close(4000, f"{(bot.violations or bot.script_errors)[0]}"[:120])
        else:
            await call.ws.close(1000)

    bot = TwilioBotFake(call_script, path=PATH, host="0.0.0.0", port=8765)
    async with bot:
        await asyncio.Event().wait()  # the container is removed when the session ends


if __name__ == "__main__":
    asyncio.run(main())
