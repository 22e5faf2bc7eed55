"""``apex-voice render-audio``: pre-render every package's user speech and refresh SHA256SUMS."""

from __future__ import annotations

import time
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress

from harness.audio.render import PackageRender, render_package
from harness.tasks.checksums import ChecksumManifest
from harness.tasks.errors import TaskLoadError

from .console import cli_console
from .data_option import DATA_HELP, ONLY_HELP, open_data
from .interrupts import run_interruptible

__all__ = ["VoiceEngine", "render_audio"]


class VoiceEngine(str, Enum):
    ESPEAK = "espeak"


async def _render_all(task_dirs: list[Path], force: bool, console: Console) -> list[PackageRender]:
    results: list[PackageRender] = []
    with Progress(console=console, transient=True) as progress:
        bar = progress.add_task("rendering", total=len(task_dirs))
        for task_dir in task_dirs:
            progress.update(bar, description=f"rendering {task_dir.name}")
            results.append(await render_package(task_dir, force=force))
            progress.advance(bar)
    return results


def render_audio(
    data: Annotated[Path | None, typer.Option("--data", "-d", help=DATA_HELP)] = None,
    only: Annotated[list[str] | None, typer.Option("--only", help=ONLY_HELP)] = None,
    force: Annotated[bool, typer.Option("--force", help="Re-render packages whose audio is up to date.")] = False,
    voice_engine: Annotated[
        VoiceEngine, typer.Option("--voice-engine", help="Synthesizer for the user's speech.")
    ] = VoiceEngine.ESPEAK,
) -> None:
    """Render user/audio/ (clips, index.jsonl, meta.json) for task packages, then refresh the
    dataset's SHA256SUMS. Packages whose audio is already up to date are skipped.
    """
    source, task_dirs = open_data(data, only)
    console = cli_console(stderr=True)
    started = time.perf_counter()
    try:
        results = run_interruptible(_render_all(task_dirs, force, console))
        if source.checksums is not None and any(not r.skipped for r in results):
            ChecksumManifest.write(source.checksums.root)
    except (TaskLoadError, ValueError, RuntimeError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    rendered = [r for r in results if not r.skipped]
    typer.echo(
        f"{len(rendered)} package(s) rendered, {len(results) - len(rendered)} up to date; "
        f"{sum(r.clips_written for r in rendered)} clips, "
        f"{sum(r.audio_seconds for r in rendered):.1f} s of audio, {time.perf_counter() - started:.1f} s wall"
    )
