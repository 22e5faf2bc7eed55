"""The harness-only control API beside the MCP endpoint.

Never listed as tools, never reachable without the bearer token (except a health probe that
reveals nothing but the task id). Request bodies are validated; a bad body is a 400 naming the
field. ``POST /control/load`` gives an empty (pooled) server its task, once; every other route
answers 409 until a task is loaded.
"""

from __future__ import annotations

import hmac
import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .bundle_upload import TaskAlreadyLoadedError, bundle_from_files
from .public_bundle import PublicBundleError

if TYPE_CHECKING:
    from .server import TaskServer

__all__ = ["control_routes"]


class GrantBody(BaseModel):
    action_type: str
    target_id: str
    media_time_ms: int
    source_event_id: str | None = None


class RevokeBody(BaseModel):
    action_type: str
    target_id: str
    media_time_ms: int


class EventBody(BaseModel):
    event_id: str
    stale_fields: list[str] = Field(default_factory=list)
    world_updates: dict[str, Any] = Field(default_factory=dict)
    media_time_ms: int


class MediaTimeBody(BaseModel):
    media_time_ms: int


class LoadBody(BaseModel):
    #: bundle file name -> its JSON text
    files: dict[str, str]


def _authorized(request: Request, token: str) -> bool:
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.encode(), token.encode())


async def _body(request: Request, model: type[BaseModel]) -> BaseModel | JSONResponse:
    try:
        return model.model_validate(json.loads(await request.body() or b"null"))
    except json.JSONDecodeError as exc:
        return JSONResponse({"error": f"request body is not JSON: {exc}"}, status_code=400)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        return JSONResponse({"error": f"{where}: {first['msg']}"}, status_code=400)


def control_routes(server: TaskServer, token: str) -> list[Route]:
    def guarded(handler, *, needs_task: bool = True):
        async def endpoint(request: Request) -> Response:
            if not _authorized(request, token):
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
        await server.persist()
        return JSONResponse({"task_id": server.task_id})

    async def snapshot(request: Request) -> Response:
        return JSONResponse(server.loaded_env().snapshot().model_dump(mode="json"))

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

    async def call(request: Request) -> Response:
        index = int(request.path_params["index"])
        log = server.loaded_env().snapshot().call_log
        if not 0 <= index < len(log):
            return JSONResponse(
                {"error": f"no call with index {index} (log has {len(log)})"}, status_code=404
            )
        return JSONResponse(log[index].model_dump(mode="json"))

    async def stream(request: Request) -> Response:
        after = int(request.query_params.get("after", "0") or 0)

        async def lines():
            async for record in server.calls.follow(after):
                yield json.dumps(record, ensure_ascii=False, default=str) + "\n"

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    return [
        Route("/control/health", health, methods=["GET"]),
        Route("/control/load", guarded(load, needs_task=False), methods=["POST"]),
        Route("/control/snapshot", guarded(snapshot), methods=["GET"]),
        Route("/control/approvals/grant", guarded(grant), methods=["POST"]),
        Route("/control/approvals/revoke", guarded(revoke), methods=["POST"]),
        Route("/control/events/apply", guarded(apply_event), methods=["POST"]),
        Route("/control/media_time", guarded(media_time), methods=["POST"]),
        Route("/control/calls/{index:int}", guarded(call), methods=["GET"]),
        Route("/control/stream", guarded(stream), methods=["GET"]),
    ]
