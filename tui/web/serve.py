"""``apex-voice view --serve``: the viewer on 127.0.0.1, each session's page built when it is asked for.

The index is built once at start (it reads only ``result.json`` files); a session's data is built on
its first request, in a worker thread, and the last few are kept. Recordings are served from the
run directory as they are, with range requests, so the page can seek without loading them whole.
"""

from __future__ import annotations

import functools
import socket

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .campaign_index import Site
from .session_page import STEREO_FILE
from .site import STATIC_DIR, data_script, session_script

__all__ = ["HOST", "bind", "make_app", "serve"]

HOST = "127.0.0.1"
#: Session data kept in memory (a page is tens of kilobytes; going back and forth re-uses them).
_CACHED_SESSIONS = 32
_JS = "text/javascript; charset=utf-8"
_BACKLOG = 128


def make_app(site: Site) -> Starlette:
    index_text = data_script("index", site.index)

    @functools.lru_cache(maxsize=_CACHED_SESSIONS)
    def session_text(page_id: str) -> str:
        return session_script(site, page_id)

    def index(request: Request) -> Response:
        return Response(index_text, media_type=_JS, headers={"Cache-Control": "no-store"})

    def session(request: Request) -> Response:
        page_id = request.path_params["page_id"]
        if page_id not in site.sessions:
            raise HTTPException(404, f"no session {page_id}")
        return Response(session_text(page_id), media_type=_JS)

    def audio(request: Request) -> Response:
        source = site.sessions.get(request.path_params["page_id"])
        stereo = None if source is None else source.session_dir / STEREO_FILE
        if stereo is None or not stereo.is_file():
            raise HTTPException(404, "no recording")
        return FileResponse(stereo, media_type="audio/wav")

    return Starlette(routes=[
        Route("/data/index.js", index),
        Route("/data/sessions/{page_id}.js", session),
        Route("/audio/{page_id}.wav", audio),
        Mount("/", StaticFiles(directory=STATIC_DIR, html=True)),
    ])


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: a free one), bound before the server starts so a
    port in use is reported as such and the URL printed is the one served."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
        sock.listen(_BACKLOG)  # listening from now: a browser opened on the printed URL waits, never is refused
    except OSError:
        sock.close()
        raise
    return sock


def serve(site: Site, sock: socket.socket) -> None:
    """Serve on ``sock`` until interrupted (Ctrl-C)."""
    server = uvicorn.Server(uvicorn.Config(make_app(site), log_level="warning"))
    server.run(sockets=[sock])
