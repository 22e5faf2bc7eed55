"""The ``apex-voice`` command line: a thin layer over the library (one module per verb)."""

from __future__ import annotations

import typer

from harness import __version__

from . import (
    download_cmd,
    images_cmd,
    index_cmd,
    models_cmd,
    regrade_cmd,
    render_audio_cmd,
    results_cmd,
    run_cmd,
    sandbox_cmd,
    validate_cmd,
)

__all__ = ["app", "main"]

app = typer.Typer(
    name="apex-voice",
    help=(
        "Benchmark harness for realtime, full-duplex voice agents doing professional work.\n\n"
        "Start with `apex-voice run`: the oracle agent on the bundled demo suite, full duplex, no keys "
        "needed. `apex-voice validate` checks task packages; `apex-voice <command> --help` explains each."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command("validate")(validate_cmd.validate)
app.command("index")(index_cmd.index)
app.command("run")(run_cmd.run)
app.command("models")(models_cmd.models)
app.command("render-audio")(render_audio_cmd.render_audio)
app.command("regrade")(regrade_cmd.regrade)
app.command("results")(results_cmd.results)
app.command("download")(download_cmd.download)
app.add_typer(sandbox_cmd.app, name="sandbox")
app.add_typer(images_cmd.app, name="images")


@app.command("version")
def version() -> None:
    """Print the harness and benchmark versions."""
    typer.echo(f"apex-voice {__version__} (benchmark v1.0)")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
