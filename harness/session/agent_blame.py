"""Blame by origin: what an exception out of the agent under test means, decided where we called it.

The agent's code (``external_code``) or the server behind our client (``remote_agent``) can raise
anything — our own infrastructure types included — so for them the exception's *type* says nothing
about whose fault it is: it crossed the agent boundary, so it is the agent's failure
(:class:`~harness.errors.AgentFailure`), graded and scored. Only the harness's own agents
(``builtin``) and our provider adapters (``provider``) keep typed blame, because their code is ours.
Voice (:mod:`.agent_boundary`) and text (:mod:`.text_runner`) sessions share this one policy.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Literal, NoReturn, TypeVar

from harness.agents.agent_text import safe_text
from harness.agents.limits import AgentLimits
from harness.errors import AgentFailure, HarnessBug, ProviderError, ProviderTransient

__all__ = ["AGENTS_OWN", "AgentCalls", "AgentKind", "blame_malformed", "blame_raised", "describe"]

T = TypeVar("T")

#: ``ModelSpec.agent_kind``: whose code runs and who is behind it.
AgentKind = Literal["builtin", "provider", "remote_agent", "external_code"]
#: Kinds whose code is the agent author's (or whose server is): what crosses is the agent's failure.
AGENTS_OWN = ("remote_agent", "external_code")
#: A detail longer than this is cut (an agent's exception message is its own text, of any size).
DETAIL_CHARS = 500
#: ``close()`` gets at least this long, even past the watchdog, so a provider's socket is shut.
CLOSE_GRACE_S = 5.0


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


def blame_raised(kind: AgentKind, exc: BaseException, call: str) -> BaseException:
    """The exception the session raises for ``exc``, raised by the agent's ``call``.

    ``builtin``: unchanged (our bug, or our own typed failure). ``provider``: provider failures keep
    their campaign meaning (retried, or stopping the campaign); anything else is a bug in our
    adapter, except an :class:`~harness.errors.AgentFailure` it raised: our adapter classified the
    model's own failure (a chat model's ``context_length_exceeded``), scored as such. ``remote_agent``: our client's own bug passes; its typed provider failures mean the
    agent behind it dropped (``closed``) or refused (``refused``) the session. ``external_code``:
    every exception, ``BaseException`` included, is the agent's.
    """
    if _ours_to_unwind(exc):
        return exc if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)) else asyncio.CancelledError()
    if kind == "builtin":
        return exc
    if kind == "provider":
        if isinstance(exc, (ProviderTransient, ProviderError, HarnessBug, AgentFailure)) or not isinstance(exc, Exception):
            return exc
        bug = HarnessBug(f"our provider adapter failed in {call}: {describe(exc)}")
        bug.__cause__ = exc
        return bug
    if kind == "remote_agent":
        if isinstance(exc, HarnessBug):
            return exc
        if isinstance(exc, ProviderTransient):
            return AgentFailure("closed", f"{call}: {describe(exc)}")
        if isinstance(exc, ProviderError):
            return AgentFailure("refused", f"{call}: {describe(exc)}")
    return AgentFailure("raised", f"{call}: {describe(exc)}")


def blame_malformed(kind: AgentKind, failure: AgentFailure, what: str) -> BaseException:
    """A check that failed on what the agent handed over: the agent's, unless the code is ours."""
    if kind in AGENTS_OWN:
        return failure
    return HarnessBug(f"our {kind} agent {what}: {failure}")


def _raise_blamed(kind: AgentKind, exc: BaseException, call: str) -> NoReturn:
    blamed = blame_raised(kind, exc, call)
    if blamed is exc:
        raise exc
    raise blamed from exc


async def _awaited(run: Callable[[], Awaitable[T]]) -> T:
    """``await run()`` as a coroutine of our own, so :meth:`AgentCalls.wait` can step it (the
    ``await`` keeps every error of the language's, a non-awaitable included)."""
    return await run()


class _Resumed:
    """The rest of a coroutine stepped to its first suspension: awaiting this passes what it awaits
    to the task and what the task sends or throws (a timeout's cancellation) back into it."""

    __slots__ = ("_coroutine", "_suspended")

    def __init__(self, coroutine: Coroutine[Any, Any, Any], suspended: Any) -> None:
        self._coroutine, self._suspended = coroutine, suspended

    def __await__(self) -> Generator[Any, Any, Any]:
        coroutine, suspended = self._coroutine, self._suspended
        while True:
            try:
                sent = yield suspended
            except GeneratorExit:
                coroutine.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - thrown in by the task: the coroutine's to handle
                try:
                    suspended = coroutine.throw(exc)
                except StopIteration as done:
                    return done.value
            else:
                try:
                    suspended = coroutine.send(sent)
                except StopIteration as done:
                    return done.value


class AgentCalls:
    """Every call into one agent, blamed by origin and bounded by the session's watchdog.

    ``deadline`` is on the event loop's clock (``loop.time()``); an await past it ends the session
    as the agent's ``hung`` failure, whatever the agent's kind. A synchronous method that never
    returns cannot be interrupted in this process (the reason out-of-tree adapters run out of it).
    """

    def __init__(self, kind: AgentKind, deadline: float) -> None:
        self.kind = kind
        self.deadline = deadline

    @classmethod
    def for_session(cls, kind: AgentKind, time_budget_s: float, limits: AgentLimits) -> AgentCalls:
        """Calls watched from now: the task's time budget times ``watchdog_factor``, plus the grace."""
        span = time_budget_s * limits.watchdog_factor + limits.watchdog_grace_s
        return cls(kind, asyncio.get_running_loop().time() + span)

    def sync(self, call: str, run: Callable[[], T]) -> T:
        try:
            return run()
        except BaseException as exc:  # noqa: BLE001 - blamed by origin, never swallowed
            _raise_blamed(self.kind, exc, call)

    async def wait(self, call: str, run: Callable[[], Awaitable[T]], *, deadline: float | None = None) -> T:
        """Await ``run()`` until the deadline.

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
            return done.value
        except BaseException as exc:  # noqa: BLE001 - blamed by origin, never swallowed
            _raise_blamed(self.kind, exc, call)
        timeout = asyncio.timeout_at(self.deadline if deadline is None else deadline)
        try:
            async with timeout:
                result = await _Resumed(steps, suspended)
        except BaseException as exc:  # noqa: BLE001 - blamed by origin, never swallowed
            if timeout.expired():
                raise self.hung(call) from None
            _raise_blamed(self.kind, exc, call)
        if timeout.expired():  # it swallowed the watchdog's cancellation and returned late
            raise self.hung(call)
        return result

    async def close(self, run: Callable[[], Awaitable[object]]) -> AgentFailure | None:
        """Close the agent: its failure to close is returned (to be recorded), never raised.

        Our own bugs and our own cancellation still propagate (``builtin``/``provider`` blame).
        """
        loop_time = asyncio.get_running_loop().time()
        try:
            await self.wait("close", run, deadline=max(self.deadline, loop_time + CLOSE_GRACE_S))
        except AgentFailure as failure:
            return failure
        return None

    def check(self, where: str) -> None:
        """The loop's own watch: past the deadline (the media clock stalled against the wall) is ``hung``."""
        if asyncio.get_running_loop().time() >= self.deadline:
            raise self.hung(where)

    def hung(self, where: str) -> AgentFailure:
        return AgentFailure("hung", f"{where}: the session's wall-clock watchdog fired")
