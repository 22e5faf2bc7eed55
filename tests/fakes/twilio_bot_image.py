"""The image of :mod:`tests.fakes.twilio_container_bot`, built offline over the native-oracle image.

That image already holds what the bot needs (python, websockets, the MCP SDK, numpy, hibari and the
harness's audio code); this one adds the bot's four files, network ``none``, no pull. Tagged by a
hash of those files and the base, so a rebuild with nothing changed is the engine's cache.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path
from typing import Any

from harness.agents.registry import NATIVE_ORACLE_IMAGE

__all__ = ["BOT_REPOSITORY", "build_twilio_bot_image"]

BOT_REPOSITORY = "apex-voice/twilio-bot-test"
_FAKES = Path(__file__).resolve().parent
_FILES = ("__init__.py", "twilio_bot.py", "provider_mcp.py", "twilio_container_bot.py")
_DOCKERFILE = f"""FROM {NATIVE_ORACLE_IMAGE}
LABEL org.apex-voice.image=twilio-bot-test
COPY fakes /opt/bot/tests/fakes
ENV PYTHONPATH=/opt/apex-voice:/opt/bot
CMD ["python", "-m", "tests.fakes.twilio_container_bot"]
"""


def build_twilio_bot_image(client: Any) -> str:
    """``apex-voice/twilio-bot-test:<hash>`` (the native-oracle image must exist: the test session builds it)."""
    digest = hashlib.sha256(_DOCKERFILE.encode() + client.images.get(NATIVE_ORACLE_IMAGE).id.encode())
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name in _FILES:
            data = (_FAKES / name).read_bytes()
            digest.update(data)
            info = tarfile.TarInfo(f"fakes/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        dockerfile = _DOCKERFILE.encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        tar.addfile(info, io.BytesIO(dockerfile))
    tag = f"{BOT_REPOSITORY}:{digest.hexdigest()[:12]}"
    context.seek(0)
    for chunk in client.api.build(fileobj=context, custom_context=True, tag=tag, network_mode="none", pull=False,
                                  rm=True, forcerm=True, decode=True):
        if "error" in chunk:
            raise RuntimeError(f"building {tag} failed: {chunk['error'].strip()}")
    for image in client.images.list(name=BOT_REPOSITORY):  # builds over an older native-oracle image
        for old in image.tags:
            if old != tag:
                client.images.remove(old, noprune=False)
    return tag
