"""Ctrl-C and SIGTERM end a command cleanly: sandboxes torn down, finished results kept."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

import typer

__all__ = ["INTERRUPTED_EXIT_CODE", "run_interruptible"]

T = TypeVar("T")

#: The shell convention for "terminated by SIGINT".
INTERRUPTED_EXIT_CODE = 130


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where SIGINT/SIGTERM cancel ``main`` so every ``async with`` unwinds.

    Plain ``asyncio.run`` dies on SIGTERM without unwinding, and a process started with SIGINT
    ignored (a background job) would not stop at all; both would leave containers behind.
    """

    async def guarded() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        try:
            return await main
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    try:
        return asyncio.run(guarded())
    except (asyncio.CancelledError, KeyboardInterrupt):
        typer.echo("interrupted: sandboxes torn down, finished results kept (run again to resume)", err=True)
        raise typer.Exit(INTERRUPTED_EXIT_CODE) from None
