"""``apex-voice validate``: load, lint and dry-run every selected task package."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from harness.validate import ValidationReport, validate_task

from .data_option import DATA_HELP, ONLY_HELP, open_data

__all__ = ["validate"]


def validate(
    data: Annotated[Path | None, typer.Option("--data", "-d", help=DATA_HELP)] = None,
    only: Annotated[list[str] | None, typer.Option("--only", help=ONLY_HELP)] = None,
    json_output: Annotated[bool, typer.Option("--json", help="One JSON report per task per line.")] = False,
) -> None:
    """Check task packages: they load, pass the cross-file lint, the oracle reaches PTS 1 and an
    inactive agent does not.

    Exit code 0 when every package is valid, 1 when some is not, 2 for a usage error.
    """
    source, task_dirs = open_data(data, only)
    reports = asyncio.run(_validate_all(source.checksums, task_dirs, show_progress=not json_output))
    if json_output:
        for report in reports:
            typer.echo(report.model_dump_json())
    else:
        _print_table(reports)
    raise typer.Exit(0 if all(r.ok for r in reports) else 1)


async def _validate_all(checksums, task_dirs: list[Path], *, show_progress: bool) -> list[ValidationReport]:
    reports: list[ValidationReport] = []
    with Progress(console=Console(stderr=True), transient=True, disable=not show_progress) as progress:
        bar = progress.add_task("validating", total=len(task_dirs))
        for task_dir in task_dirs:
            progress.update(bar, description=f"validating {task_dir.name}")
            reports.append(await validate_task(task_dir, checksums=checksums))
            progress.advance(bar)
    return reports


def _mark(flag: bool) -> str:
    return "[green]yes[/]" if flag else "[red]no[/]"


def _print_table(reports: list[ValidationReport]) -> None:
    console = Console()
    table = Table("task", "loads", "lint", "oracle PTS 1", "no-op fails", "valid")
    for r in reports:
        table.add_row(r.task_id, _mark(r.loaded), _mark(r.lint_ok), _mark(r.oracle_pass), _mark(r.noop_fail), _mark(r.ok))
    console.print(table)
    for r in reports:
        if not r.ok:
            console.print(f"[red]FAIL[/] {r.task_id}: " + "; ".join(r.problems), highlight=False, soft_wrap=True)
        for warning in r.warnings:
            console.print(f"[yellow]warn[/] {r.task_id}: {warning}", highlight=False, soft_wrap=True)
    valid = sum(r.ok for r in reports)
    console.print(f"{valid}/{len(reports)} task packages valid", highlight=False)
