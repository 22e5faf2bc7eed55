"""``apex-voice tasks``: the suite's tasks, as ``--only`` and ``--limit`` see them (suite order)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel
from rich import box
from rich.console import Console
from rich.table import Column, Table

from harness.tasks.bundle import TaskBundle
from harness.tasks.errors import TaskLoadError
from harness.tasks.loader import load_task

from .data_option import DATA_HELP, ONLY_HELP, open_data

__all__ = ["TaskRow", "tasks"]


class TaskRow(BaseModel):
    """One line of ``apex-voice tasks --json``."""

    task_id: str
    version: str
    title: str
    domain: str
    profession: str
    archetype: str

    @classmethod
    def of(cls, bundle: TaskBundle) -> TaskRow:
        work = bundle.taxonomy.professional_work
        return cls(task_id=bundle.task_id, version=bundle.task.version, title=bundle.task.title,
                   domain=work.industry_setting, profession=bundle.task.profession,
                   archetype=work.primary_archetype.value)


def tasks(
    data: Annotated[Path | None, typer.Option("--data", "-d", help=DATA_HELP)] = None,
    only: Annotated[list[str] | None, typer.Option("--only", help=ONLY_HELP)] = None,
    json_output: Annotated[bool, typer.Option("--json", help="One JSON record per task on stdout.")] = False,
) -> None:
    """List the tasks (id, version, domain, title) in suite order; exit 2 when one does not load
    (`apex-voice validate` says more)."""
    source, task_dirs = open_data(data, only)
    try:
        rows = [TaskRow.of(load_task(task_dir, checksums=source.checksums)) for task_dir in task_dirs]
    except TaskLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if json_output:
        for row in rows:
            typer.echo(row.model_dump_json())
        return
    console = Console()
    table = _table(rows, console.width)
    console.print(table)
    left_out = "" if len(table.columns) == 4 else " (domains: --json, or a wider terminal)"
    count = f"{len(rows)} task" + ("" if len(rows) == 1 else "s")
    console.print(f"{count} in {source.root}{left_out}", highlight=False, soft_wrap=True, markup=False)


#: The narrowest title column worth showing; below it the domain gives way (``--json`` has it).
MIN_TITLE_WIDTH = 24


def _table(rows: list[TaskRow], width: int) -> Table:
    """Ids and versions are whole words a reader types back: never cut. The title wraps, never cut;
    the domain column is left out when it would squeeze the title below :data:`MIN_TITLE_WIDTH`."""
    def whole(header: str, values: list[str]) -> Column:
        return Column(header, no_wrap=True, min_width=max(map(len, [header, *values])))

    columns = [whole("task", [r.task_id for r in rows]), whole("version", [r.version for r in rows]),
               whole("domain", [r.domain for r in rows])]
    gaps = 2 * len(columns)  # the column separators and the title's own padding
    if sum(c.min_width or 0 for c in columns) + gaps + MIN_TITLE_WIDTH > width:
        columns.pop()
    with_domain = len(columns) == 3
    table = Table(*columns, Column("title", overflow="fold", ratio=1), expand=True,
                  box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for row in rows:
        table.add_row(row.task_id, row.version, *([row.domain] if with_domain else []), row.title)
    return table
