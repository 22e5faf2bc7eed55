"""The image of :mod:`tests.fakes.twilio_container_bot`, built offline over the native-oracle image.

That image already holds what the bot needs (python, websockets, the MCP SDK, numpy, hibari and the
harness's audio code); this one adds the bot's four files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.agents.registry import NATIVE_ORACLE_IMAGE

from .layered_image import build_layered_image

__all__ = ["BOT_REPOSITORY", "build_twilio_bot_image"]

BOT_REPOSITORY = "apex-voice/twilio-bot-test"
_FAKES = Path(__file__).resolve().parent
_FILES = ("__init__.py", "twilio_bot.py", "provider_mcp.py", "twilio_container_bot.py")
_INSTRUCTIONS = """LABEL org.apex-voice.image=twilio-bot-test
COPY fakes /opt/bot/tests/fakes
ENV PYTHONPATH=/opt/apex-voice:/opt/bot
CMD ["python", "-m", "tests.fakes.twilio_container_bot"]
"""


def build_twilio_bot_image(client: Any) -> str:
    """``apex-voice/twilio-bot-test:<hash>`` (the native-oracle image must exist: the test session builds it)."""
    return build_layered_image(client, base=NATIVE_ORACLE_IMAGE, repository=BOT_REPOSITORY,
                               files={f"fakes/{name}": _FAKES / name for name in _FILES}, instructions=_INSTRUCTIONS)
