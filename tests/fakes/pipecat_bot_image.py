"""The example Pipecat bot's image (``examples/pipecat-bot/build-image.sh``, as a user builds it
offline), and over it the test image that adds the bot's brain (:mod:`tests.fakes.pipecat_container_brain`).

Both build without network: the example over apex-voice's base image with wheels built on the host
(the bot's pinned set, ~400 MB, cached in ``examples/pipecat-bot/wheelhouse``), the test layer with
the brain's few files (the fake chat server and the task-policy model it reads).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from .layered_image import build_layered_image
from .pipecat_process import BOT_DIR

__all__ = ["EXAMPLE_IMAGE", "TEST_REPOSITORY", "build_pipecat_bot_image"]

EXAMPLE_IMAGE = "apex-voice/pipecat-bot-example:latest"
TEST_REPOSITORY = "apex-voice/pipecat-bot-test"
_ROOT = BOT_DIR.parents[1]
#: The brain and what it imports, at their paths in the repository.
_BRAIN_FILES = (
    "harness/__init__.py", "harness/tasks/__init__.py", "harness/tasks/models.py",
    "mcp_servers/__init__.py", "mcp_servers/public_models.py",
    "tests/loopback.py", "tests/fakes/__init__.py", "tests/fakes/fake_chat_server.py",
    "tests/fakes/pipecat_container_brain.py",
)
_INSTRUCTIONS = """LABEL org.apex-voice.image=pipecat-bot-test
COPY brain /opt/brain
ENV PYTHONPATH=/opt/brain
CMD ["python", "-m", "tests.fakes.pipecat_container_brain"]
"""


def build_pipecat_bot_image(client: Any) -> str:
    """``apex-voice/pipecat-bot-test:<hash>``: the example image (built by its script, a no-op when
    current) with the brain over it. Needs apex-voice's base image (the test session builds it)."""
    completed = subprocess.run([str(BOT_DIR / "build-image.sh"), EXAMPLE_IMAGE], capture_output=True, text=True,
                               check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"build-image.sh failed ({completed.returncode}): {completed.stderr.strip()[-2000:]}")
    return build_layered_image(client, base=EXAMPLE_IMAGE, repository=TEST_REPOSITORY,
                               files={f"brain/{name}": _ROOT / name for name in _BRAIN_FILES},
                               instructions=_INSTRUCTIONS)
