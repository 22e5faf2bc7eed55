"""The ``apex-voice`` command line: a thin layer over the library (one module per verb).

Verbs are registered by name with the module that implements them and a one-line summary; a verb's
module (and its numpy/scipy/docker imports) is imported only when that verb runs, so ``--help`` and
``version`` start in a fraction of a second. To add a verb, add one line to ``COMMANDS``.
"""

from __future__ import annotations

import gc
import importlib
import importlib.metadata
import logging
import sys
from enum import Enum
from typing import Annotated, Any, Literal, NamedTuple

import typer
import typer.core

from harness import __version__

__all__ = ["COMMANDS", "app", "main"]


class LazyCommand(NamedTuple):
    #: ``module:attribute``: a command function, or a ``typer.Typer`` of subcommands.
    target: str
    summary: str


COMMANDS: dict[str, LazyCommand] = {
    "validate": LazyCommand("harness.cli.validate_cmd:validate", "Check task packages: load, lint, oracle and no-op dry runs."),
    "index": LazyCommand("harness.cli.index_cmd:index", "Write a dataset's task index."),
    "run": LazyCommand("harness.cli.run_cmd:run", "Run a campaign (resumable), then print its results table."),
    "models": LazyCommand("harness.cli.models_cmd:models", "List the agents --model can name, and missing credentials."),
    "render-audio": LazyCommand("harness.cli.render_audio_cmd:render_audio", "Render a task's user speech clips."),
    "watch": LazyCommand("harness.cli.watch_cmd:watch", "Watch a campaign another process is running, in the terminal UI."),
    "replay": LazyCommand("harness.cli.replay_cmd:replay", "Replay a finished session in the terminal UI."),
    "view": LazyCommand("harness.cli.view_cmd:view", "See and hear campaigns and sessions in a browser (offline)."),
    "regrade": LazyCommand("harness.cli.regrade_cmd:regrade", "Re-grade saved sessions with the current graders."),
    "results": LazyCommand("harness.cli.results_cmd:results", "Aggregate campaigns into the published tables and plots."),
    "metrics": LazyCommand("harness.cli.metrics_cmd:metrics", "Turn-taking metrics of τ-Voice, EVA and Full-Duplex-Bench beside ours, from one recording."),
    "tasks": LazyCommand("harness.cli.tasks_cmd:tasks", "List the suite's tasks: id, version, domain, title."),
    "judge-cache": LazyCommand("harness.cli.judge_cache_cmd:app", "Export or import the judge's verdicts as published JSON."),
    "download": LazyCommand("harness.cli.download_cmd:download", "Download and verify a dataset snapshot."),
    "sandbox": LazyCommand("harness.cli.sandbox_cmd:app", "Start, probe and clean up task sandboxes."),
    "images": LazyCommand("harness.cli.images_cmd:app", "Build the Docker images the sandbox uses (offline-capable)."),
}


#: Help text is Markdown: a paragraph is rewrapped to the terminal (a docstring's line breaks no
#: longer cut sentences) and `code` shows as code, not as backticks.
HELP_MARKUP: Literal["markdown"] = "markdown"


def _load(name: str, target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    implementation: Any = getattr(importlib.import_module(module_name), attribute)
    # What the verb imported lives as long as the process: frozen, full collections stop walking it
    # (hundreds of thousands of objects: pydantic schemas, numpy; ~5 % of a validate run).
    gc.freeze()
    holder = typer.Typer(add_completion=False, rich_markup_mode=HELP_MARKUP)
    if isinstance(implementation, typer.Typer):
        implementation.rich_markup_mode = HELP_MARKUP
        holder.add_typer(implementation, name=name)  # stays a group even with one subcommand
    else:
        holder.command(name)(implementation)
        holder.callback()(lambda: None)  # a group of one, so the verb is looked up by name
    return typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]


def _conventional_metavar(self: Any, ctx: Any) -> str | None:
    """``--model MODEL``, and a flag with no value shown, as command-line tools write them; typer
    prints the Python type (``<str>``, ``<bool>``). An Enum's ``a|b|c`` stays: it teaches more."""
    if self.metavar is not None:
        return str(self.metavar)
    if self.is_flag or self.count:
        return None
    if self.type_descriptor.is_choice:
        return _typer_metavar(self, ctx)
    return (self.name or "value").upper().replace("_", "-") + ("..." if self.nargs != 1 else "")


# One place for every verb, the lazy ones and the help option included (typer builds that one itself).
# A typer without the hook keeps its own display (help is cosmetic: never a reason to fail).
if hasattr(typer.core.TyperOption, "display_type_rich"):
    _typer_metavar = typer.core.TyperOption.display_type_rich
    typer.core.TyperOption.display_type_rich = _conventional_metavar  # type: ignore[method-assign]
    # An argument's name is shown already (``RUNS_DIRS...``); its Python type is noise.
    typer.core.TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]


class _LazyVerb(typer.core.TyperCommand):
    """Stands in for a verb in the help listing; running it loads and runs the real command."""

    def __init__(self, name: str, spec: LazyCommand) -> None:
        super().__init__(name, help=spec.summary, short_help=spec.summary)
        self.target = spec.target

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        return _load(self.name or "", self.target).make_context(info_name, args, parent=parent, **extra)


class _LazyGroup(typer.core.TyperGroup):
    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in super().list_commands(ctx) if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        spec = COMMANDS.get(cmd_name)
        return _LazyVerb(cmd_name, spec) if spec is not None else super().get_command(ctx, cmd_name)


app = typer.Typer(
    name="apex-voice",
    cls=_LazyGroup,
    help=(
        "Benchmark harness for realtime, full-duplex voice agents doing professional work.\n\n"
        "Start with `apex-voice run`: the oracle agent on the bundled demo suite, full duplex, no keys "
        "needed. `apex-voice validate` checks task packages; `apex-voice <command> --help` explains each."
    ),
    no_args_is_help=True,
    add_completion=True,  # --install-completion, --show-completion (README); the lazy verbs complete too
    pretty_exceptions_enable=False,
    rich_markup_mode=HELP_MARKUP,
)


class LogLevel(str, Enum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


class _CurrentStderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a record is emitted (a test runner swaps it)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _set_log_level(level: int) -> None:
    """The root logger at ``level``, printing to stderr (one handler, however often this is called)."""
    root = logging.getLogger()
    root.setLevel(level)
    # Every control request's "HTTP Request: POST ..." line is noise at -v (dozens a session); -v is
    # for what the harness decides. --log-level debug shows them.
    for chatty in ("httpx", "httpcore"):
        logging.getLogger(chatty).setLevel(max(level, logging.WARNING) if level > logging.DEBUG else level)
    if not any(isinstance(handler, _CurrentStderr) for handler in root.handlers):
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)


def installed_version() -> str:
    """The version of the installed distribution (a source checkout without one: the package's own)."""
    try:
        return importlib.metadata.version("apex-voice")
    except importlib.metadata.PackageNotFoundError:
        return __version__


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"apex-voice {installed_version()}")
        raise typer.Exit(0)


@app.callback()
def _root(
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log what the harness does (retries included) and explain "
                           "failures in full.")
    ] = False,
    log_level: Annotated[
        LogLevel | None, typer.Option("--log-level", help="The harness's log level on stderr (-v: info).")
    ] = None,
    show_version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """The verbs below; a callback keeps this a group even before the lazy verbs load."""
    if log_level is not None or verbose:
        _set_log_level(getattr(logging, (log_level or LogLevel.info).value.upper()))


def verbose_requested(ctx: typer.Context) -> bool:
    """Whether ``apex-voice -v`` was given (for verbs that show more with it)."""
    return bool(ctx.find_root().params.get("verbose"))


@app.command("version")
def version() -> None:
    """Print the harness and benchmark versions."""
    typer.echo(f"apex-voice {__version__} (benchmark v1.0)")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
