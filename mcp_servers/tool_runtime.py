"""Executes one untrusted tool call end to end and logs it, whatever the agent sent.

Order: size limit → JSON normalization → tool lookup → argument validation (by ``jsonschema``,
against the schema the model is shown) → handler. Each step can refuse the call with a message for
the agent; every call, refused or not, becomes one :class:`ToolCallRecord` with the next index in
the call log (the grader's tool log). Nothing the agent sends can make :meth:`ToolRuntime.call` raise.

A handler that raises anything but :class:`ToolError` is a bug of ours, not a refusal: its call is
logged with ``server_fault`` (the traceback) instead of being shown to the agent as a tool error,
so whoever serves the call (the MCP server, the in-process port) fails the session loudly as the
harness's own fault rather than scoring the agent on it.

A session's call log is bounded (``MAX_LOGGED_CALLS`` calls, ``MAX_LOG_BYTES`` of records): an agent
that floods the server gets refusals (its own failure, in its own log) instead of exhausting the
server's memory; calls beyond ``MAX_LOGGED_CALLS`` are refused and only counted.

Tool latency (``ToolSpec.latency``) is deliberately not modelled: the reference computed a value it
never applied, and the sandboxed server's real round trip is what a session experiences.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
from collections.abc import Callable
from typing import Any

from .argument_validation import (
    ToolArgumentsValidator,
    arguments_problem,
    json_size,
    loggable_name,
    undeclared_args,
    without_null_optionals,
)
from .public_models import ArtifactSchema, ToolSet, ToolSpec
from .record_copy import copy_record, copy_records
from .records import ToolCallRecord
from .tool_error import ToolError
from .tool_handlers import HANDLERS, EnvironmentParts, HandlerOutcome, ToolCall, commit_action_type

__all__ = ["MAX_LOGGED_CALLS", "MAX_LOG_BYTES", "ToolRuntime"]

log = logging.getLogger(__name__)

#: Calls one session's log keeps; later calls are refused unrun and counted in ``calls_not_logged``.
MAX_LOGGED_CALLS = 2000

#: Bytes of call records (arguments and results, as JSON) one session's log keeps.
MAX_LOG_BYTES = 8 * 1024 * 1024

class _Refusal(Exception):
    """A call that ends as an ``ok=False`` record; carries what to log beside the message."""

    def __init__(self, message: str, logged_args: Any, commit_attempt: str | None = None) -> None:
        super().__init__(message)
        self.logged_args = logged_args
        self.commit_attempt = commit_attempt


class _ServerFault(Exception):
    """A handler bug, carrying what to log beside it (the cause is the handler's exception)."""

    def __init__(self, logged_args: Any, commit_attempt: str | None) -> None:
        super().__init__("tool handler failed")
        self.logged_args = logged_args
        self.commit_attempt = commit_attempt


def _fault_record(base: dict[str, Any], exc: BaseException, logged_args: Any, commit_attempt: str | None) -> ToolCallRecord:
    """The call as the server's own fault: the traceback is kept, the agent is told nothing of it."""
    log.error("task server fault in tool %s", base["name"], exc_info=exc)
    return ToolCallRecord(
        **base,
        args=logged_args,
        ok=False,
        error=f"internal error of the task server in tool {base['name']}",
        commit_attempt=commit_attempt,
        server_fault="".join(traceback.format_exception(exc)),
    )


class ToolRuntime:
    """Binds a task's tools to the built-in handlers over one session's environment parts."""

    def __init__(
        self, tools: ToolSet, parts: EnvironmentParts, wall_clock_ns: Callable[[], int] = time.time_ns
    ) -> None:
        self._tools = tools
        self._parts = parts
        self._wall_clock_ns = wall_clock_ns
        self._log: list[ToolCallRecord] = []
        self._log_bytes = 0
        self._validators: dict[str, ToolArgumentsValidator] = {}
        #: Calls refused because the log already held ``MAX_LOGGED_CALLS`` (not in the log).
        self.calls_not_logged = 0

    @property
    def call_log(self) -> list[ToolCallRecord]:
        return copy_records(self._log)

    @property
    def call_count(self) -> int:
        return len(self._log)

    def record(self, index: int) -> ToolCallRecord | None:
        return copy_record(self._log[index]) if 0 <= index < len(self._log) else None

    def records_since(self, start: int) -> list[ToolCallRecord]:
        return copy_records(self._log[start:])

    def call(self, name: Any, args: Any, media_time_ms: int = 0) -> ToolCallRecord:
        """Run and log one call; refusals are ``ok=False`` records, our own failures ``server_fault`` ones."""
        index = len(self._log)
        tool_name = loggable_name(name)
        base: dict[str, Any] = {"index": index, "name": tool_name, "media_time_ms": media_time_ms}
        if index >= MAX_LOGGED_CALLS:
            self.calls_not_logged += 1
            message = f"{tool_name}: this session already made {MAX_LOGGED_CALLS} tool calls, the most one session may make"
            return ToolCallRecord(**base, ok=False, error=message + "; the call was not run")
        try:
            base["wall_time_ns"] = self._wall_clock_ns()
            record = self._execute(base, name, args)
        except _Refusal as refusal:
            record = ToolCallRecord(
                **base,
                args=refusal.logged_args,
                ok=False,
                error=str(refusal),
                commit_attempt=refusal.commit_attempt,
            )
        except _ServerFault as fault:
            assert fault.__cause__ is not None
            record = _fault_record(base, fault.__cause__, fault.logged_args, fault.commit_attempt)
        except Exception as exc:  # a bug of ours outside the handler: logged as the server's fault
            record = _fault_record(base, exc, None, None)
        self._log.append(record)
        self._log_bytes += len(record.model_dump_json())
        return record

    def _execute(self, base: dict[str, Any], name: Any, raw_args: Any) -> ToolCallRecord:
        args = self._normalized(base["name"], raw_args)
        if self._log_bytes + json_size(args) > MAX_LOG_BYTES:
            raise _Refusal(
                f"{base['name']}: this session's call log is full ({MAX_LOG_BYTES // (1024 * 1024)} MiB of "
                "arguments and results); the call was not run",
                "<arguments not kept: the session's call log is full>",
            )
        spec = self._tools.get(name) if isinstance(name, str) else None
        if spec is None:
            available = ", ".join(t.name for t in self._tools.tools if not t.discoverable) or "none"
            raise _Refusal(f"unknown tool {json.dumps(base['name'])} (available tools: {available})", args)
        commit_attempt = commit_action_type(spec) if spec.handler == "commit" else None
        call_args = without_null_optionals(spec, args)
        handler = HANDLERS.get(spec.handler or "")
        if handler is None:
            raise _Refusal(f"{spec.name}: no handler is bound to this tool", args, commit_attempt)
        validator = self._validator(spec)
        problems = validator.problems(call_args)
        if problems:
            raise _Refusal(f"{spec.name}: " + "; ".join(problems), args, commit_attempt)
        call = ToolCall(
            spec, call_args, base["index"], base["media_time_ms"], base["wall_time_ns"], validator.fields_artifact
        )
        try:
            outcome = handler(self._parts, call)
        except ToolError as error:
            raise _Refusal(f"{spec.name}: {error}", args, commit_attempt) from None
        except Exception as exc:  # a handler bug: the server's fault, never a refusal
            raise _ServerFault(args, commit_attempt) from exc
        ignored = undeclared_args(spec, call_args)
        if ignored and isinstance(outcome.result, dict):
            # Tell the agent, so it can stop sending them; the published handlers ignore them too.
            outcome.result = {**outcome.result, "ignored_arguments": ignored}
        return self._record(base, args, outcome)

    def _validator(self, spec: ToolSpec) -> ToolArgumentsValidator:
        """The tool's argument validator, built on its first call (the artifacts' schemas never change)."""
        validator = self._validators.get(spec.name)
        if validator is None:
            validator = self._validators[spec.name] = ToolArgumentsValidator(spec, self._artifact_schema)
        return validator

    def _artifact_schema(self, artifact_id: str) -> ArtifactSchema | None:
        artifact = self._parts.workspace.get(artifact_id)
        return None if artifact is None else artifact.schema

    @staticmethod
    def _normalized(tool_name: str, raw_args: Any) -> Any:
        """A JSON-only deep copy of the arguments, or a refusal for deep, oversized or non-JSON input."""
        problem = arguments_problem(raw_args)
        if problem is not None:
            raise _Refusal(f"{tool_name}: {problem.message}", problem.logged)
        return json.loads(json.dumps(raw_args, default=str, ensure_ascii=False, allow_nan=False))

    @staticmethod
    def _record(base: dict[str, Any], args: Any, outcome: HandlerOutcome) -> ToolCallRecord:
        ok = outcome.error is None and outcome.auth_decision in (None, "AUTHORIZED")
        return ToolCallRecord(
            **base,
            args=args,
            ok=ok,
            result=outcome.result,
            error=outcome.error,
            auth_decision=outcome.auth_decision,
            mutations=outcome.mutations,
            written=outcome.written,
            commit_attempt=outcome.commit_attempt,
            approval_request=outcome.approval_request,
        )
