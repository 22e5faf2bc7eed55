"""The example Pipecat bot's container in the tests: its "brain" beside it, the bot unchanged.

An agent container has no egress, so the LLM behind the bot must be inside the container too. This
is the test image's command (:mod:`tests.fakes.pipecat_bot_image`): it serves the fake
chat-completions server on the container's loopback, playing the policy in ``$BRAIN_POLICY`` (a
task's ``ReferencePolicy`` as JSON, passed by ``run --adapter-env BRAIN_POLICY``) or, when
``$BRAIN_MODE`` is ``silent``, saying nothing; then it runs the example's ``bot.py`` as the image's
own command would, pointed at that server.
"""

from __future__ import annotations

import os
import runpy
import sys

from harness.tasks.models import ReferencePolicy
from tests.fakes.fake_chat_server import API_KEY, FakeChatServer, serve_fake_chat_in_thread

BOT = "/opt/bot/bot.py"
BOT_ARGS = ("--host", "0.0.0.0", "--port", "8765", "--path", "/media-stream")


def main() -> None:
    mode = os.environ.get("BRAIN_MODE", "policy")
    policy = ReferencePolicy.model_validate_json(os.environ["BRAIN_POLICY"]) if mode == "policy" else None
    with serve_fake_chat_in_thread(FakeChatServer(policy=policy, mode="silent" if mode == "silent" else "policy")) as brain:
        os.environ.update(BOT_LLM_URL=brain.base_url, BOT_LLM_KEY=API_KEY)
        sys.argv = [BOT, *BOT_ARGS]
        runpy.run_path(BOT, run_name="__main__")


if __name__ == "__main__":
    main()
