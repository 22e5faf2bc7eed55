"""Serve an ASGI app on a free loopback port in a thread, for tests that need a real HTTP server."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

__all__ = ["serve_on_loopback"]


@contextmanager
def serve_on_loopback(app) -> Iterator[str]:
    """Yields ``http://127.0.0.1:<port>`` while ``app`` is served; stops the server on exit."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        threading.Event().wait(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()
