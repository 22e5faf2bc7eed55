"""``apex-voice regrade RUN_DIR...``: grade saved sessions again and say what changed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Column, Table

from harness.counted import counted
from harness.grading.judge import CachedVerdicts, SemanticJudge
from harness.grading.judge_cache import JudgeCache
from harness.results.regrade import RegradeChange, find_rep_dirs, regrade_rep_dir
from harness.tasks.errors import TaskLoadError
from harness.tasks.loader import load_task
from harness.tasks.models import GoldSpec

from .console import cli_console
from .data_option import DATA_HELP, open_data
from .interrupts import run_interruptible

__all__ = ["regrade"]


def regrade(
    run_dirs: Annotated[list[Path], typer.Argument(help="Campaign directories (or single rep directories, or a runs tree).")],
    data: Annotated[Path | None, typer.Option("--data", "-d", help=DATA_HELP + " The gold comes from here.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="One JSON line per session.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would change; write nothing.")] = False,
) -> None:
    """Re-grade saved sessions from their grading_inputs.json with the current graders and judge
    cache, fill pending judge verdicts, and rewrite result.json atomically.

    With APEX_VOICE_LLM_API_KEY (or OPENAI_API_KEY) set the judge is asked; without it only cached
    verdicts are used and anything else stays pending. Exit code 0 when every session was
    re-graded and none is left pending, 1 otherwise, 2 for a usage error.
    """
    rep_dirs: list[Path] = []
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            typer.echo(f"error: {run_dir} is not a directory", err=True)
            raise typer.Exit(2)
        found = list(find_rep_dirs(run_dir))
        if not found:
            typer.echo(f"error: {run_dir} holds no result.json (expected <task>/rep<k>/result.json)", err=True)
            raise typer.Exit(2)
        rep_dirs.extend(found)
    source, task_dirs = open_data(data, None)
    golds = _GoldByTask(task_dirs, source.checksums)
    judge = SemanticJudge.from_env() or CachedVerdicts(JudgeCache())
    changes = run_interruptible(_regrade_all(rep_dirs, golds, judge, write=not dry_run))
    if json_output:
        for change in changes:
            typer.echo(change.model_dump_json())
    else:
        _print_table(changes, dry_run=dry_run)
    trouble = any(c.problem or c.pending_after for c in changes)
    raise typer.Exit(1 if trouble else 0)


class _GoldByTask:
    """Loads a task's gold on first use; task ids are the package directory names."""

    def __init__(self, task_dirs: list[Path], checksums) -> None:
        self._dirs = {d.name: d for d in task_dirs}
        self._checksums = checksums
        self._gold: dict[str, GoldSpec | None] = {}

    def __call__(self, task_id: str) -> GoldSpec | None:
        if task_id not in self._gold:
            task_dir = self._dirs.get(task_id)
            try:
                self._gold[task_id] = load_task(task_dir, checksums=self._checksums).gold if task_dir else None
            except TaskLoadError as exc:
                typer.echo(f"warning: {exc}", err=True)
                self._gold[task_id] = None
        return self._gold[task_id]


async def _regrade_all(rep_dirs: list[Path], golds: _GoldByTask, judge, *, write: bool) -> list[RegradeChange]:
    return [await regrade_rep_dir(rep_dir, golds, judge, write=write) for rep_dir in rep_dirs]


def _value(before: object, after: object) -> str:
    def text(v: object) -> str:
        return "pending" if v is None else str(int(v)) if isinstance(v, bool) else str(v)

    return text(before) if before == after else f"{text(before)} → {text(after)}"


def _print_table(changes: list[RegradeChange], *, dry_run: bool) -> None:
    console = cli_console()
    table = Table(Column("session", overflow="fold"), *(Column(h, no_wrap=True) for h in ("PTS", "WA", "pending")),
                  Column("note", overflow="fold"))
    for c in changes:
        where = f"{c.task_id} rep{c.rep}" if c.task_id else str(c.rep_dir)
        if c.problem:
            table.add_row(where, "–", "–", "–", f"[yellow]{c.problem}[/]")
            continue
        note = "changed" + (" (dry run)" if dry_run else "") if c.changed else "unchanged"
        table.add_row(where, _value(c.pts_before, c.pts_after), _value(c.wa_before, c.wa_after),
                      _value(c.pending_before, c.pending_after), note)
    console.print(table)
    changed = sum(c.changed for c in changes)
    skipped = sum(c.problem is not None for c in changes)
    pending = sum(c.pending_after for c in changes if not c.problem)
    console.print(f"{counted(len(changes), 'session')}: {changed} changed, {skipped} not re-graded, "
                  f"{counted(pending, 'verdict')} still pending", highlight=False)
