"""The harness-only control API beside the MCP endpoint.

Never listed as tools, never reachable without the bearer token (except a health probe that
reveals nothing but the task id). Request bodies are validated; a bad body is a 400 naming the
field. ``GET /control/tools`` and ``POST /control/call`` are how the harness lists and calls the
tools for an agent it bridges: one request per call, carrying the call's media time, which no MCP
caller can set (the agent reaches ``/mcp`` only, never this listener). ``POST /control/load`` gives an empty (pooled) server its task, once; every other route
answers 409 until a task is loaded.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import BaseModel, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .argument_validation import ArgumentsProblem, safe_text
from .bearer import bearer_matches
from .bundle_upload import TaskAlreadyLoadedError, bundle_from_files
from .public_bundle import PublicBundleError

if TYPE_CHECKING:
    from .task_server import TaskServer

__all__ = ["MAX_MEDIA_TIME_MS", "control_routes"]

#: A week of media time: far beyond any session, far below anything that breaks arithmetic.
MAX_MEDIA_TIME_MS = 7 * 24 * 3600 * 1000

#: A media time as the control plane accepts it: a JSON integer (not NaN, not 1e400) in range.
MediaTimeMs = Annotated[int, Field(strict=True, ge=0, le=MAX_MEDIA_TIME_MS)]


class GrantBody(BaseModel):
    action_type: str
    target_id: str
    media_time_ms: MediaTimeMs
    source_event_id: str | None = None


class RevokeBody(BaseModel):
    action_type: str
    target_id: str
    media_time_ms: MediaTimeMs


class EventBody(BaseModel):
    event_id: str
    stale_fields: list[str] = Field(default_factory=list)
    world_updates: dict[str, Any] = Field(default_factory=dict)
    media_time_ms: MediaTimeMs


class MediaTimeBody(BaseModel):
    media_time_ms: MediaTimeMs


class RefusedArguments(BaseModel):
    """Arguments the harness could not send (a lone surrogate, NaN, too deep, too large): the
    ``message`` and ``logged`` of its ``ArgumentsProblem``, logged as that call's refusal."""

    message: str
    logged: str | None = None


class CallBody(BaseModel):
    """One tool call the harness makes for the agent it bridges, with the media time it happened at."""

    name: str
    #: Any JSON value: what the model sent, an object or not (the environment refuses a non-object
    #: exactly as in process).
    arguments: Any = None
    refused: RefusedArguments | None = None
    media_time_ms: MediaTimeMs


class SnapshotSinceBody(BaseModel):
    #: Records of each log the caller already holds (``EnvironmentSnapshot.cursor()``).
    cursor: dict[str, Annotated[int, Field(ge=0)]]


class LoadBody(BaseModel):
    #: bundle file name -> its JSON text
    files: dict[str, str]


BodyT = TypeVar("BodyT", bound=BaseModel)

#: Forwarded refusal texts are cut to this: they can only make the harness's own call fail.
_MAX_FORWARDED_CHARS = 500


def _bad_request(message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=400)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


async def _body(request: Request, model: type[BodyT]) -> BodyT | JSONResponse:
    """The validated body; NaN/Infinity and text that is not valid Unicode are refused (400)."""
    try:
        data = json.loads(await request.body() or b"null", parse_constant=_reject_constant)
        json.dumps(data, ensure_ascii=False).encode("utf-8")  # a lone surrogate cannot be persisted
        return model.model_validate(data)
    except UnicodeError as exc:
        return _bad_request(f"request body holds text that is not valid Unicode: {exc}")
    except ValueError as exc:  # JSONDecodeError, or a NaN/Infinity constant
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            return _bad_request(f"{where}: {first['msg']}")
        return _bad_request(f"request body is not JSON: {exc}")


def control_routes(server: TaskServer, token: str) -> list[Route]:
    def guarded(handler, *, needs_task: bool = True):
        async def endpoint(request: Request) -> Response:
            if not bearer_matches(request.headers.get("authorization"), token):
                return JSONResponse({"error": "missing or wrong bearer token"}, status_code=401)
            if needs_task and server.env is None:
                return JSONResponse({"error": "no task is loaded on this server yet"}, status_code=409)
            return await handler(request)

        return endpoint

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "task_id": server.task_id})

    async def load(request: Request) -> Response:
        body = await _body(request, LoadBody)
        if isinstance(body, JSONResponse):
            return body
        try:
            server.refuse_second_load()
            server.load(bundle_from_files(body.files))
        except PublicBundleError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except TaskAlreadyLoadedError as exc:
            return JSONResponse({"error": str(exc)}, status_code=409)
        return JSONResponse({"task_id": server.task_id})

    async def snapshot(request: Request) -> Response:
        return JSONResponse(server.loaded_env().snapshot().model_dump(mode="json"))

    async def snapshot_since(request: Request) -> Response:
        body = await _body(request, SnapshotSinceBody)
        if isinstance(body, JSONResponse):
            return body
        try:
            delta = server.loaded_env().snapshot_since(body.cursor)
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(delta.model_dump(mode="json"))

    async def grant(request: Request) -> Response:
        body = await _body(request, GrantBody)
        if isinstance(body, JSONResponse):
            return body
        token_ = server.loaded_env().grant_approval(
            body.action_type, body.target_id, body.media_time_ms, body.source_event_id
        )
        await server.persist()
        return JSONResponse(token_.model_dump(mode="json"))

    async def revoke(request: Request) -> Response:
        body = await _body(request, RevokeBody)
        if isinstance(body, JSONResponse):
            return body
        revoked = server.loaded_env().revoke_approval(body.action_type, body.target_id, body.media_time_ms)
        await server.persist()
        return JSONResponse({"revoked": revoked})

    async def apply_event(request: Request) -> Response:
        body = await _body(request, EventBody)
        if isinstance(body, JSONResponse):
            return body
        server.loaded_env().apply_event(
            body.event_id,
            stale_fields=body.stale_fields,
            world_updates=body.world_updates,
            media_time_ms=body.media_time_ms,
        )
        await server.persist()
        return JSONResponse({"ok": True})

    async def media_time(request: Request) -> Response:
        body = await _body(request, MediaTimeBody)
        if isinstance(body, JSONResponse):
            return body
        server.media_time_ms = body.media_time_ms
        # The call count lets a harness wait until its call stream has caught up (native agents).
        return JSONResponse({"media_time_ms": server.media_time_ms, "calls": server.loaded_env().call_count})

    async def tools(request: Request) -> Response:
        return JSONResponse(server.loaded_env().tool_schemas())

    async def call_tool(request: Request) -> Response:
        body = await _body(request, CallBody)
        if isinstance(body, JSONResponse):
            return body
        args: Any = body.arguments
        if body.refused is not None:
            logged = body.refused.logged
            args = ArgumentsProblem(
                safe_text(body.refused.message)[:_MAX_FORWARDED_CHARS],
                safe_text(logged)[:_MAX_FORWARDED_CHARS] if logged is not None else None,
            )
        # A call our handler failed on comes back with its ``server_fault`` set: the harness raises
        # it as its own bug (``harness.session.tool_faults``), so it is answered like any record.
        _, record_json = await server.call_tool(body.name, args, media_time_ms=body.media_time_ms)
        return JSONResponse(record_json)

    async def call(request: Request) -> Response:
        index = int(request.path_params["index"])
        env = server.loaded_env()
        record = env.call_record(index)
        if record is None:
            return JSONResponse(
                {"error": f"no call with index {index} (log has {env.call_count})"}, status_code=404
            )
        return JSONResponse(record.model_dump(mode="json"))

    async def stream(request: Request) -> Response:
        after_text = request.query_params.get("after", "0") or "0"
        if not after_text.isascii() or not after_text.isdigit():
            return _bad_request(f"after: must be a non-negative integer, got {after_text[:40]!r}")
        after = int(after_text)

        async def lines():
            async for record in server.calls.follow(after):
                yield json.dumps(record, ensure_ascii=False, default=str) + "\n"

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    return [
        Route("/control/health", health, methods=["GET"]),
        Route("/control/load", guarded(load, needs_task=False), methods=["POST"]),
        Route("/control/snapshot", guarded(snapshot), methods=["GET"]),
        Route("/control/snapshot/since", guarded(snapshot_since), methods=["POST"]),
        Route("/control/approvals/grant", guarded(grant), methods=["POST"]),
        Route("/control/approvals/revoke", guarded(revoke), methods=["POST"]),
        Route("/control/events/apply", guarded(apply_event), methods=["POST"]),
        Route("/control/media_time", guarded(media_time), methods=["POST"]),
        Route("/control/tools", guarded(tools), methods=["GET"]),
        Route("/control/call", guarded(call_tool), methods=["POST"]),
        Route("/control/calls/{index:int}", guarded(call), methods=["GET"]),
        Route("/control/stream", guarded(stream), methods=["GET"]),
    ]
