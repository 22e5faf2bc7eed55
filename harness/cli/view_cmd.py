"""``apex-voice view RUN_OR_CAMPAIGN_DIR``: campaigns and sessions in a browser, offline.

The viewer lives in the top-level ``tui`` package (``tui/web``), imported here only when the
command runs, as ``replay`` does for the terminal UI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["DEFAULT_PORT", "view"]

DEFAULT_PORT = 8765


def _usage(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def view(
    source: Annotated[Path, typer.Argument(
        help="A campaign directory (`run --out`), a directory of campaigns, a rep directory or a session directory.")],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Write the viewer as a folder of static files (open its index.html; zip it to share).")] = None,
    serve: Annotated[bool, typer.Option(
        "--serve", help="Serve the viewer on 127.0.0.1 (the default when --out is not given).")] = False,
    port: Annotated[int, typer.Option(
        "--port", min=0, max=65535, help="Port for --serve (0: any free port).")] = DEFAULT_PORT,
    as_json: Annotated[bool, typer.Option(
        "--json", help="With --out: print what was written as one JSON object.")] = False,
) -> None:
    """See and hear sessions in a browser: the campaign's cells, each session's waveforms with the transcript, tool calls, barge-ins, approvals and gates in step with playback, and why it failed.

    Works offline: the pages ship with apex-voice, no CDN. `--out DIR` writes a folder anyone can open from the disk (recordings included); `--serve` (the default) serves it on http://127.0.0.1:PORT/ and builds each session's page when it is opened.

    In a session: space play/pause, ← / → 5 s, Shift+← / → 1 s, n / p next / previous tool call, Home / End, ? every key. Exit code 0 when written (or served until Ctrl-C), 2 for a usage error.
    """
    from tui.web.campaign_index import ViewerInputError, read_site
    from tui.web.site import OutDirError, export_site

    if out is not None and serve:
        _usage("give --out DIR or --serve, not both")
    if as_json and out is None:
        _usage("--json goes with --out (the server prints its address)")
    try:
        site = read_site(source)
    except (ViewerInputError, FileNotFoundError) as exc:
        _usage(str(exc))
    if out is not None:
        try:
            summary = export_site(site, out)
        except OutDirError as exc:
            _usage(str(exc))
        if as_json:
            typer.echo(json.dumps({"out": str(summary.out), "cells": summary.cells, "sessions": summary.sessions,
                                   "recordings": summary.recordings, "index_bytes": summary.index_bytes}))
        else:
            typer.echo(f"wrote {summary.out / 'index.html'}: {summary.cells} cells, {summary.sessions} sessions, "
                       f"{summary.recordings} recordings")
        return
    from tui.web.serve import HOST, bind
    from tui.web.serve import serve as serve_site

    try:
        sock = bind(port)
    except OSError as exc:
        _usage(f"--port {port}: cannot listen on {HOST} ({exc.strerror or exc})")
    typer.echo(f"serving {site.index.title} at http://{HOST}:{sock.getsockname()[1]}/  (Ctrl-C to stop)")
    try:
        serve_site(site, sock)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how a server is stopped: not a failure
