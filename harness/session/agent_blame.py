"""Every call into the agent under test, bounded, and blamed by origin where it is made.

What an exception out of the agent means is the origin table's to say
(:mod:`harness.blame.origin_table`, by the model's ``agent_kind``); this module makes the calls —
bounded by the session's watchdog and each by its own bound, abandoned when they swallow their
cancellation — and asks the table about whatever they raise. Only the harness stopping itself (our
cancellation, the user's Ctrl-C) is decided here, before the table: only the running task knows.
Voice (:mod:`.agent_boundary`) and text (:mod:`.text_runner`) sessions share these calls.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Generic, NoReturn, TypeVar

from harness.agents.agent_text import safe_text
from harness.agents.limits import AGENT_LIMITS, AgentLimits
from harness.blame.codes import AgentKind, FailureCode
from harness.blame.errors import AgentFailure
from harness.blame.origin_table import agent_raised

__all__ = ["AgentCalls", "describe"]

T = TypeVar("T")

#: A detail longer than this is cut (an agent's exception message is its own text, of any size).
DETAIL_CHARS = 500


def describe(exc: BaseException) -> str:
    """``"<Type>: <message>"``, bounded and made safe (:mod:`harness.agents.agent_text`), even for
    an exception whose ``__str__`` raises."""
    try:
        message = str(exc)
        name = type(exc).__name__
    except BaseException:  # noqa: BLE001 - a hostile __str__ must not escape the boundary
        message, name = "<unprintable>", "Exception"
    if type(message) is not str or type(name) is not str:  # a str subclass could lie about its length
        message, name = "<unprintable>", "Exception"
    text = f"{name}: {message}" if message else name
    return safe_text(text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS] + "…")


def _ours_to_unwind(exc: BaseException) -> bool:
    """The harness itself is stopping (the user's Ctrl-C, our own cancellation): never the agent's.

    Our cancellation shows as the session task's pending ``cancelling()`` count, whatever the
    adapter turned it into. A ``KeyboardInterrupt`` is the user's only while Python's default SIGINT
    handler is installed (it raises one wherever the main thread is, adapter code included); under
    ``asyncio.run`` or ``run_interruptible`` a Ctrl-C cancels the task instead, so a
    ``KeyboardInterrupt`` there came from code — the agent's.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        return True
    return isinstance(exc, KeyboardInterrupt) and signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _raise_blamed(kind: AgentKind, exc: BaseException, call: str) -> NoReturn:
    """Raise what ``exc``, raised by the agent's ``call``, means (the origin table's ``RAISED``)."""
    if _ours_to_unwind(exc):
        if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
            raise exc
        raise asyncio.CancelledError() from exc
    blamed = agent_raised(kind, exc, call, describe(exc))
    if blamed is exc:
        raise exc
    raise blamed from exc


async def _awaited(run: Callable[[], Awaitable[T]]) -> T:
    """``await run()`` as a coroutine of our own, so :meth:`AgentCalls.wait` can step it (the
    ``await`` keeps every error of the language's, a non-awaitable included)."""
    return await run()


def _returned(done: StopIteration, coroutine: Coroutine[Any, Any, T]) -> T:
    """What ``coroutine`` returned, carried by the ``StopIteration`` that ended it (typed ``Any``)."""
    value: T = done.value
    return value


class _Abandoned(Exception):
    """The call swallowed its bound's cancellation and did not return in the grace after it."""


class _Resumed(Generic[T]):
    """The rest of a coroutine stepped to its first suspension: awaiting this passes what it awaits
    to the task and what the task sends or throws (a timeout's cancellation) back into it.

    Once ``timeout`` has fired and its cancellation is thrown in, the coroutine has ``abandon_s``
    to return; if it is still suspended then (it swallowed the cancellation), the task is
    cancelled once more and this time the coroutine is closed and dropped (:class:`_Abandoned`),
    so an agent's call can never hold the session past its bound plus ``abandon_s``.
    """

    __slots__ = ("_abandon_s", "_abandoning", "_coroutine", "_handle", "_suspended", "_timeout")

    def __init__(self, coroutine: Coroutine[Any, Any, T], suspended: Any, timeout: asyncio.Timeout,
                 abandon_s: float) -> None:
        self._coroutine, self._suspended, self._timeout, self._abandon_s = coroutine, suspended, timeout, abandon_s
        self._handle: asyncio.TimerHandle | None = None
        self._abandoning = False

    def _abandon(self, task: asyncio.Task[Any]) -> None:
        self._abandoning = True
        task.cancel()

    def __await__(self) -> Generator[Any, Any, T]:
        coroutine, suspended = self._coroutine, self._suspended
        try:
            while True:
                try:
                    sent = yield suspended
                except GeneratorExit:
                    coroutine.close()
                    raise
                except BaseException as exc:  # noqa: BLE001 - thrown in by the task: the coroutine's to handle
                    if isinstance(exc, asyncio.CancelledError) and self._handle is not None:
                        # In its grace, cancelled again: by our timer (abandoned), or by the harness
                        # stopping (ours to unwind, at once: the call had its chance).
                        self._drop(None if self._abandoning else exc)
                    if self._handle is None and self._timeout.expired():
                        task = asyncio.current_task()
                        assert task is not None
                        self._handle = asyncio.get_running_loop().call_later(self._abandon_s, self._abandon, task)
                    try:
                        suspended = coroutine.throw(exc)
                    except StopIteration as done:
                        return _returned(done, coroutine)
                else:
                    try:
                        suspended = coroutine.send(sent)
                    except StopIteration as done:
                        return _returned(done, coroutine)
        finally:
            if self._handle is not None:
                self._handle.cancel()

    def _drop(self, ours: BaseException | None) -> NoReturn:
        """Close the coroutine (whatever it does about it); raise the harness's own cancellation
        ``ours``, or take back our timer's and raise :class:`_Abandoned`."""
        try:
            self._coroutine.close()
        except BaseException:  # noqa: BLE001, S110 - it ignored GeneratorExit or raised: dropped all the same
            pass
        if ours is not None:
            raise ours
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        raise _Abandoned


class AgentCalls:
    """Every call into one agent, blamed by origin and bounded twice: by the session's watchdog,
    and each call by ``limits.agent_call_s`` (``close()`` by ``agent_close_s``).

    ``deadline`` is on the event loop's clock (``loop.time()``); an await past it, or a call
    suspended longer than its bound, ends the session as the agent's ``hung`` failure, whatever the
    agent's kind. A call that swallows the cancellation is abandoned ``agent_abandon_s`` later. A
    synchronous method that never returns cannot be interrupted in this process (the reason
    out-of-tree adapters run out of it).
    """

    def __init__(self, kind: AgentKind, deadline: float, limits: AgentLimits = AGENT_LIMITS) -> None:
        self.kind = kind
        self.deadline = deadline
        self.limits = limits

    @classmethod
    def for_session(cls, kind: AgentKind, time_budget_s: float, limits: AgentLimits) -> AgentCalls:
        """Calls watched from now: the task's time budget times ``watchdog_factor``, plus the grace."""
        span = time_budget_s * limits.watchdog_factor + limits.watchdog_grace_s
        return cls(kind, asyncio.get_running_loop().time() + span, limits)

    def sync(self, call: str, run: Callable[[], T]) -> T:
        try:
            return run()
        except BaseException as exc:  # noqa: BLE001 - blamed by origin, never swallowed
            _raise_blamed(self.kind, exc, call)

    async def wait(self, call: str, run: Callable[[], Awaitable[T]], *, bound_s: float | None = None) -> T:
        """Await ``run()`` for ``bound_s`` (default: ``agent_call_s``, or until the watchdog if sooner).

        The call runs at once up to its first suspension; only if it suspends does the rest run
        under an ``asyncio.timeout``. A call that completes without suspending (an in-process
        agent's ``send_audio``, every frame) is one no watchdog could interrupt anyway — a timeout
        fires only at a suspension — so it returns as it would under the timeout, without arming
        and cancelling one (about 6 µs a call, and a cancelled timer left in the loop's heap).
        """
        steps = _awaited(run)
        try:
            suspended = steps.send(None)
        except StopIteration as done:
            return _returned(done, steps)
        except BaseException as exc:  # noqa: BLE001 - blamed by origin, never swallowed
            _raise_blamed(self.kind, exc, call)
        now = asyncio.get_running_loop().time()
        if bound_s is not None:
            deadline = now + bound_s
        else:
            bound_s = self.limits.agent_call_s
            deadline = min(self.deadline, now + bound_s)
        passed = None if deadline == self.deadline else bound_s  # None: the watchdog fires first
        timeout = asyncio.timeout_at(deadline)
        try:
            async with timeout:
                result = await _Resumed(steps, suspended, timeout, self.limits.agent_abandon_s)
        except _Abandoned:
            raise self.hung(call, passed, abandoned=True) from None
        except BaseException as exc:  # noqa: BLE001 - blamed by origin, never swallowed
            if timeout.expired() and not _ours_to_unwind(exc):
                raise self.hung(call, passed) from None
            _raise_blamed(self.kind, exc, call)
        if timeout.expired():  # it swallowed the cancellation and returned late
            raise self.hung(call, passed)
        return result

    async def close(self, run: Callable[[], Awaitable[object]]) -> AgentFailure | None:
        """Close the agent: its failure to close is returned (to be recorded), never raised.

        Our own bugs and our own cancellation still propagate (``builtin``/``provider`` blame).
        """
        try:
            await self.wait("close", run, bound_s=self.limits.agent_close_s)
        except AgentFailure as failure:
            return failure
        return None

    def check(self, where: str) -> None:
        """The loop's own watch: past the deadline (the media clock stalled against the wall) is ``hung``."""
        if asyncio.get_running_loop().time() >= self.deadline:
            raise self.hung(where)

    def hung(self, where: str, bound_s: float | None = None, *, abandoned: bool = False) -> AgentFailure:
        """``bound_s``: the call's own bound passed (``None``: the session's watchdog fired)."""
        if bound_s is None:
            detail = f"{where}: the session's wall-clock watchdog fired"
        else:
            detail = f"{where}() did not return within {bound_s:g} s"
        if abandoned:
            detail += f", nor {self.limits.agent_abandon_s:g} s after it was cancelled: abandoned"
        return AgentFailure(FailureCode.HUNG, detail)
