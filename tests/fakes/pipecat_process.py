"""The example Pipecat bot (``examples/pipecat-bot``) as a separate process, in its own venv, with
a policy or silent "brain" (the fake chat-completions server) behind its LLM service.

The bot's venv is made by ``examples/pipecat-bot/setup.sh`` (Pipecat's dependencies conflict with
the harness's, so it never shares the harness's venv); without it :func:`bot_python` is ``None``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.tasks.models import ReferencePolicy

from .fake_chat_server import API_KEY, FakeChatServer, serve_fake_chat_in_thread

__all__ = ["BOT_DIR", "RunningBot", "bot_python", "pipecat_bot"]

BOT_DIR = Path(__file__).resolve().parents[2] / "examples" / "pipecat-bot"
#: Loading Pipecat, faster-whisper and Silero takes a while on a busy machine.
READY_TIMEOUT_S = 180.0


def bot_python() -> Path | None:
    """The bot venv's interpreter, if ``setup.sh`` has made it."""
    python = BOT_DIR / ".venv" / "bin" / "python"
    return python if python.exists() else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_listening(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the Pipecat bot exited with {process.returncode}; its log: {log}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.25)
    raise TimeoutError(f"the Pipecat bot did not listen on {port} within {READY_TIMEOUT_S:.0f} s; its log: {log}")


@dataclass
class RunningBot:
    model: str  # the --model key
    process: subprocess.Popen[bytes]
    brain: FakeChatServer
    log: Path


@contextmanager
def pipecat_bot(policy: ReferencePolicy | None, *, mode: str = "policy", log_dir: Path) -> Iterator[RunningBot]:
    """The bot listening on a free loopback port, its brain playing ``policy`` (or ``silent``)."""
    python = bot_python()
    if python is None:
        raise FileNotFoundError(f"no bot venv: run {BOT_DIR / 'setup.sh'}")
    brain = FakeChatServer(policy=policy, mode="silent" if mode == "silent" else "policy")
    with serve_fake_chat_in_thread(brain):
        port = _free_port()
        log = log_dir / f"pipecat-bot-{port}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(python), str(BOT_DIR / "bot.py"), "--port", str(port), "--llm-url", brain.base_url],
                stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "BOT_LLM_KEY": API_KEY}, cwd=BOT_DIR)
        try:
            _wait_listening(port, process, log)
            yield RunningBot(f"twilio+ws://127.0.0.1:{port}/media", process, brain, log)
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
