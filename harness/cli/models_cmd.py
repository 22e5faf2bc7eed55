"""``apex-voice models``: every agent ``run --model`` accepts, and the credentials each still needs."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Annotated

import typer
from pydantic import BaseModel
from rich.table import Column, Table
from rich.text import Text

from harness.agents.registry import (
    ENTRY_POINT_GROUP,
    MODELS,
    PREFIX_FACTORIES,
    PREFIXES,
    ModelSpec,
    UnknownModelError,
    get_model,
)

from .console import cli_console

__all__ = ["ModelRow", "models"]


class ModelRow(BaseModel):
    """One line of ``apex-voice models --json``; ``family`` rows stand for every ``PREFIX:MODEL`` key."""

    key: str
    display_name: str
    provider: str
    provider_model: str
    clock: str
    tool_modes: list[str]
    required_env: list[str]
    missing_credentials: list[str]
    max_concurrent_sessions: int | None
    family: bool = False
    notes: str = ""

    @classmethod
    def of(cls, spec: ModelSpec, *, family: bool = False) -> ModelRow:
        return cls(
            key=spec.key,
            display_name=spec.display_name,
            provider=spec.provider,
            provider_model=spec.provider_model,
            clock=spec.clock,
            tool_modes=list(spec.tool_modes),
            required_env=list(spec.required_env),
            missing_credentials=list(spec.missing_credentials()),
            max_concurrent_sessions=spec.max_concurrent_sessions,
            family=family,
            notes=spec.notes,
        )


#: What follows each key prefix of :data:`PREFIX_FACTORIES` (a server address, or an image).
_PREFIX_ARGUMENTS = {"ws://": "HOST:PORT/PATH", "wss://": "HOST:PORT/PATH", "twilio+ws://": "HOST:PORT/PATH",
                     "twilio+wss://": "HOST:PORT/PATH", "twilio+container:": "IMAGE", "container:": "IMAGE"}
#: The placeholder a family row shows for the model name its key takes.
FAMILY_MODEL = "MODEL"


def _specs() -> list[ModelSpec]:
    specs = list(MODELS.values())
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            specs.append(get_model(point.name))
        except (UnknownModelError, ImportError, AttributeError) as exc:
            typer.echo(f"warning: entry point {point.name!r} cannot be loaded: {exc}", err=True)
    return specs


def _rows() -> list[ModelRow]:
    """Every registered model, then one row per model family (``chat:MODEL``, ``cascade:MODEL``)."""
    rows = [ModelRow.of(spec) for spec in _specs()]
    for prefix, family in PREFIXES.items():
        row = ModelRow.of(family.spec(prefix, FAMILY_MODEL), family=True)
        rows.append(row.model_copy(update={"provider_model": FAMILY_MODEL}))
    return rows


#: Columns left out, in this order, when the table would not fit the terminal; keys, model ids and
#: credentials are what a user types, so they are never cut.
_OPTIONAL_COLUMNS = ("provider", "clock", "tools")


def _cells(row: ModelRow) -> dict[str, Text]:
    missing = " or ".join(row.missing_credentials)
    return {
        "key": Text(row.key),
        "provider": Text(row.provider),
        "provider model": Text(row.provider_model or "–"),
        "clock": Text(row.clock),
        "tools": Text(", ".join(row.tool_modes)),
        "missing credentials": Text(missing or "none", style="red" if missing else "green"),
    }


#: Per column: its share of the table's frame (one divider and two padding spaces).
_FRAME = 3


def fitting_table(rows: list[ModelRow], width: int) -> Table:
    """The table with every column that fits ``width``: no cell is ever cut; the credentials wrap
    between variables, and the lesser columns are dropped (provider, then clock, then tools)."""
    cells = [_cells(row) for row in rows]
    names = list(cells[0]) if cells else ["key"]
    longest = {name: max([len(name), *(c[name].cell_len for c in cells)]) for name in names}
    longest_var = max([len("none"), *(len(v) for r in rows for v in r.missing_credentials)])
    columns = list(names)
    for drop in (None, *_OPTIONAL_COLUMNS):
        if drop is not None:
            columns.remove(drop)
        needed = 1 + sum(longest[n] + _FRAME for n in columns if n != "missing credentials") + longest_var + _FRAME
        if needed <= width:
            break
    table = Table(*(Column(n, no_wrap=n != "missing credentials", overflow="fold",
                           min_width=longest_var if n == "missing credentials" else longest[n]) for n in columns))
    for row_cells in cells:
        table.add_row(*(row_cells[n] for n in columns))
    hidden = [n for n in names if n not in columns]
    if hidden:  # never silently: say what the width left out and where to see it
        table.caption = f"not shown at this width: {', '.join(hidden)} (see them wider, or with --json)"
        table.caption_justify = "left"
    return table


def models(
    json_output: Annotated[bool, typer.Option("--json", help="One JSON record per model on stdout.")] = False,
) -> None:
    """List the agents ``run --model`` accepts: provider, provider model id, clock, tool modes and
    the environment variables still missing (any one of a model's variables suffices)."""
    rows = _rows()
    if json_output:
        for row in rows:
            typer.echo(row.model_dump_json())
        return
    console = cli_console()
    console.print(fitting_table(rows, console.width))
    families = ", ".join(f"{p}:{FAMILY_MODEL}" for p in PREFIXES)
    servers = " or ".join(f"{p}{_PREFIX_ARGUMENTS.get(p, '...')}" for p in PREFIX_FACTORIES
                          if p.endswith("://") and "+" not in p)
    phones = " or ".join(f"{p}{_PREFIX_ARGUMENTS.get(p, '...')}" for p in PREFIX_FACTORIES if p.startswith("twilio+"))
    images = " or ".join(f"{p}{_PREFIX_ARGUMENTS.get(p, '...')}" for p in PREFIX_FACTORIES if not p.endswith("://"))
    console.print(
        Text(f"{families}: any model name of that API (--endpoint URL). Also: any OpenAI-Realtime-compatible server "
             f"as {servers} (no key), a telephony bot speaking Twilio Media Streams as {phones}, an agent image as "
             f"{images}, or an adapter class as package.module:Class."),
        soft_wrap=False,
    )
