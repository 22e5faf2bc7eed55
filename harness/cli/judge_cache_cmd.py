"""``apex-voice judge-cache export|import``: the judge's verdicts in the published JSON format.

The verdicts live in SQLite (``harness/grading/judge_cache.py``); the published ``{key: bool}`` file
is how they travel: export to share or publish them, import another machine's or the published one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from harness.grading.judge_cache import JudgeCache, NotAVerdictFile

__all__ = ["app"]

app = typer.Typer(
    help="Export or import the judge's cached verdicts in the published JSON format.",
    no_args_is_help=True,
    add_completion=False,
)

_JSON_HELP = "Print the counts as one JSON object."


@app.command("export")
def export(
    out: Annotated[Path, typer.Argument(help="The JSON file to write (replaced atomically).")],
    json_output: Annotated[bool, typer.Option("--json", help=_JSON_HELP)] = False,
) -> None:
    """Write every cached verdict as the published flat JSON object {md5-key: bool}, keys sorted.

    The verdicts live in `judge_cache.sqlite3` beside the configured path, $APEX_VOICE_JUDGE_CACHE
    (default `~/.cache/apex_voice/judge_cache.json`: where a published JSON cache dropped in is
    imported from). Exit code 0 when written, 1 when the file cannot be written.
    """
    cache = JudgeCache()
    try:
        count = cache.export_json(out)
    except OSError as exc:
        typer.echo(f"error: cannot write {out}: {exc.strerror or exc}", err=True)
        raise typer.Exit(1) from None
    finally:
        cache.close()
    if json_output:
        typer.echo(json.dumps({"exported": count, "file": str(out), "store": str(cache.store_path)}))
    else:
        typer.echo(f"exported {count} verdicts from {cache.store_path} to {out}")


@app.command("import")
def import_(
    source: Annotated[Path, typer.Argument(help="A judge cache in the published JSON format.")],
    json_output: Annotated[bool, typer.Option("--json", help=_JSON_HELP)] = False,
) -> None:
    """Add the verdicts of a published-format file that the cache lacks; verdicts already cached stay
    (a verdict a session was graded with never changes), and those that disagree are counted.

    Exit code 0 when imported, 2 when the file is missing or is not a {key: bool} JSON object.
    """
    cache = JudgeCache()
    try:
        added = cache.import_json(source)
    except (NotAVerdictFile, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        typer.echo(f"error: {source}: {reason}", err=True)
        raise typer.Exit(2) from None
    finally:
        cache.close()
    if json_output:
        typer.echo(json.dumps({"offered": added.offered, "added": added.added, "disagreeing": added.disagreeing,
                               "store": str(cache.store_path)}))
        return
    typer.echo(f"imported {added.added} of {added.offered} verdicts from {source} into {cache.store_path}")
    if added.disagreeing:
        typer.echo(f"warning: {added.disagreeing} verdicts of {source} disagree with cached ones; "
                   "the cached ones stand", err=True)
