"""Run a protocol fake on its own event loop in a thread, for code under test that owns its loop
(the CLI calls ``asyncio.run`` itself)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["in_thread"]



@contextmanager
def in_thread(fake: Any) -> Iterator[Any]:
    """``with in_thread(OpenAIRealtimeFake(...)) as fake:`` — started, serving, stopped on exit."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="protocol-fake", daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(fake.__aenter__(), loop).result(timeout=120)
        try:
            yield fake
        finally:
            asyncio.run_coroutine_threadsafe(fake.__aexit__(None, None, None), loop).result(timeout=30)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
