"""``python -m mcp_servers [--task DIR] --port N --control-socket S --token-file F [--agent-token-file A]``: serve one task.

``/mcp`` is served on ``--host``/``--port`` (where the agent may connect); the control API on the
unix socket ``--control-socket`` (where only the harness can: it lives in the session's private
directory), never on the same listener. ``--agent-token-file`` holds the token ``/mcp`` requires
(``Authorization: Bearer``): per session, distinct from the control token, so whoever holds it (an
agent, a provider's MCP client) can call tools and nothing else.

``--task`` is a public bundle directory (see :mod:`mcp_servers.public_bundle`): the harness writes it
from a task package and never includes grading, reference or user-simulator files. Without it the
server boots empty and waits for ``POST /control/load`` (a warm pool's server, started ahead of
need). ``--exit-with-stdin`` ties the server's life to its parent: it shuts down when its stdin
closes, so a harness that dies (even by SIGKILL) leaves no pooled server behind. ``--lazy-mcp``
imports the MCP SDK (about a CPU-second) only when ``/mcp`` is first used: for a server whose tools
only the harness calls, through the control plane.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TypedDict

import anyio._backends._asyncio  # noqa: F401  (see _LISTENER_OPTIONS)
import uvicorn
import uvicorn.lifespan.off  # noqa: F401
import uvicorn.lifespan.on  # noqa: F401
import uvicorn.protocols.http.h11_impl  # noqa: F401

from .public_bundle import PublicBundle
from .server import TaskServer, build_app, build_control_app

#: Connections the MCP listener keeps at once; more are answered 503 by uvicorn (a flood's limit).
MAX_MCP_CONNECTIONS = 128


class _ListenerOptions(TypedDict):
    http: str
    ws: str
    loop: str
    log_config: None
    log_level: str
    access_log: bool


#: Both listeners: plain HTTP/1.1 on asyncio, no websocket protocol (nothing here speaks it). Named
#: rather than "auto", their modules are imported above, not by ``Config.load`` in each server: a
#: child of the forkserver finds them loaded (about 0.1 CPU-s a server otherwise).
#: Logging is configured once in ``main``, not by uvicorn's ``dictConfig`` once per listener.
_LISTENER_OPTIONS = _ListenerOptions(
    http="h11", ws="none", loop="asyncio", log_config=None, log_level="warning", access_log=False,
)  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mcp_servers", description=__doc__.splitlines()[0])
    parser.add_argument("--task", type=Path, default=None, help="public bundle directory (else wait for a load)")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--host", default="127.0.0.1", help="bind address (0.0.0.0 inside a container)")
    parser.add_argument("--token-file", type=Path, required=True, help="file holding the control bearer token")
    parser.add_argument(
        "--agent-token-file", type=Path, default=None,
        help="file holding the agent bearer token /mcp requires (else /mcp needs none)",
    )
    parser.add_argument("--control-socket", type=Path, required=True, help="unix socket to serve the control API on")
    parser.add_argument("--state-file", type=Path, default=None, help="append the environment's changes to this journal")
    parser.add_argument("--exit-with-stdin", action="store_true", help="shut down when stdin reaches end of file")
    parser.add_argument(
        "--lazy-mcp", action="store_true", help="import the MCP SDK on the first /mcp request, not at start",
    )
    return parser


def _read_token(path: Path) -> str:
    token = path.read_text(encoding="utf-8").strip()
    if not token:
        raise ValueError(f"token file {path} is empty")
    return token


def _exit_when_stdin_closes() -> None:
    """Block on stdin in a daemon thread; at EOF ask uvicorn to shut down (SIGTERM to ourselves)."""

    def watch() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="stdin-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        token = _read_token(args.token_file)
        agent_token = _read_token(args.agent_token_file) if args.agent_token_file is not None else None
        bundle = PublicBundle.read(args.task) if args.task is not None else None
    except (OSError, ValueError) as exc:
        print(f"mcp_servers: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    server = TaskServer(bundle, state_file=args.state_file)
    listeners = [
        uvicorn.Server(
            uvicorn.Config(
                build_app(server, host=args.host, agent_token=agent_token, lazy=args.lazy_mcp), host=args.host, port=args.port,
                limit_concurrency=MAX_MCP_CONNECTIONS, **_LISTENER_OPTIONS,
            )
        ),
        uvicorn.Server(
            uvicorn.Config(
                build_control_app(server, token=token), uds=str(args.control_socket), lifespan="off",
                **_LISTENER_OPTIONS,
            )
        ),
    ]  # fmt: skip
    if args.exit_with_stdin:
        _exit_when_stdin_closes()
    asyncio.run(_serve_together(listeners))
    return 0


async def _serve_together(listeners: list[uvicorn.Server]) -> None:
    """Run every listener; when one stops (a signal reached it), stop the others."""
    tasks = [asyncio.create_task(listener.serve()) for listener in listeners]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for listener in listeners:
        listener.should_exit = True
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    sys.exit(main())
