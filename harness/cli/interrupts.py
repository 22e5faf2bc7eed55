"""Ctrl-C and SIGTERM end a command cleanly: sandboxes torn down, finished results kept.

The first signal cancels the command's task, so every ``async with`` unwinds (sandboxes torn
down); the exit code is 130 for SIGINT and 143 for SIGTERM (the shell's 128 + signal number).

The handler is a plain Python signal handler, not the event loop's: the loop's handler runs only
when the loop gets control, so a session whose loop an agent has starved (a flood of events, a
blocking adapter) would ignore the signal. A Python handler runs in the main thread between any two
bytecodes; it asks the loop to cancel and arms a deadline. If the command has not unwound
``FORCE_EXIT_AFTER_S`` later, or on a second signal (Ctrl-C pressed twice), a thread removes every
container and network this process owns and the process exits at once with the same code. A
local sandbox's task server exits by itself when the harness does (``--exit-with-stdin``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Coroutine
from types import FrameType
from typing import Any, TypeVar

import typer

__all__ = ["FORCE_EXIT_AFTER_S", "INTERRUPTED_EXIT_CODE", "TERMINATED_EXIT_CODE", "run_interruptible"]

T = TypeVar("T")

#: The shell convention for "terminated by SIGINT".
INTERRUPTED_EXIT_CODE = 130
#: The shell convention for "terminated by SIGTERM".
TERMINATED_EXIT_CODE = 143
#: How long the clean unwinding may take before the process tears down and exits by force.
FORCE_EXIT_AFTER_S = 15.0

_EXIT_CODES = {signal.SIGINT: INTERRUPTED_EXIT_CODE, signal.SIGTERM: TERMINATED_EXIT_CODE}


def _force_exit(code: int) -> None:
    """Remove this process's containers and networks, then exit without unwinding anything."""
    try:
        from sandbox.cleanup import sweep

        sweep(owner_pid=os.getpid())
    except Exception as exc:  # no engine (local sandbox), or it failed: exit all the same
        print(f"forced exit: sandbox sweep skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
    print("terminated: the command did not unwind in time; sandboxes removed by force", file=sys.stderr)
    sys.stderr.flush()
    os._exit(code)


class _Interrupts:
    """The signal handler's state: the first signal cancels, the deadline or a second one forces."""

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        self.loop = loop
        self.task = task
        self.code: int | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.code is not None:
            threading.Thread(target=_force_exit, args=(self.code,), name="forced-exit", daemon=True).start()
            return
        self.code = _EXIT_CODES[signal.Signals(signum)]
        self.loop.call_soon_threadsafe(self.task.cancel)
        deadline = threading.Timer(FORCE_EXIT_AFTER_S, _force_exit, args=(self.code,))
        deadline.daemon = True
        deadline.start()


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where SIGINT/SIGTERM cancel ``main`` so every ``async with`` unwinds.

    Plain ``asyncio.run`` dies on SIGTERM without unwinding, and a process started with SIGINT
    ignored (a background job) would not stop at all; both would leave containers behind.
    """
    interrupts: _Interrupts | None = None

    async def guarded() -> T:
        nonlocal interrupts
        task = asyncio.current_task()
        assert task is not None
        interrupts = _Interrupts(asyncio.get_running_loop(), task)
        previous = {sig: signal.signal(sig, interrupts) for sig in _EXIT_CODES}
        try:
            return await main
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    try:
        return asyncio.run(guarded())
    except (asyncio.CancelledError, KeyboardInterrupt):
        code = interrupts.code if interrupts is not None and interrupts.code is not None else INTERRUPTED_EXIT_CODE
        word = "terminated" if code == TERMINATED_EXIT_CODE else "interrupted"
        typer.echo(f"{word}: sandboxes torn down, finished results kept (run again to resume)", err=True)
        raise typer.Exit(code) from None
