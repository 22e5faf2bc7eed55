"""``apex-voice sandbox probe|cleanup``: check that a task's tools are served, and remove leftovers."""

from __future__ import annotations

import json
import secrets
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from harness.session.mcp_environment import McpEnvironment
from harness.tasks.errors import TaskLoadError
from harness.tasks.loader import load_task
from mcp_servers.public_models import ToolClass, ToolSet
from sandbox.backend import SandboxEnvironment, get_backend
from sandbox.errors import ControlRequestError, SandboxUnavailableError
from sandbox.external import ExternalBackend

from .data_option import DATA_HELP, open_data
from .interrupts import run_interruptible

__all__ = ["app", "cleanup", "export", "probe"]

app = typer.Typer(help="Start, probe and clean up task sandboxes.", no_args_is_help=True, add_completion=False)

READ_CLASSES = (ToolClass.read_only, ToolClass.retrieval)
#: Why the probe calls a tool with no arguments: the refusal is the answer it wants.
EMPTY_ARGUMENTS = "empty arguments, so the server must refuse it: required parameters missing"


def _read_tool(tools: list[dict[str, Any]], spec: ToolSet | None) -> tuple[str | None, str]:
    """The tool to probe and why: a read tool of the spec, else one that refuses empty arguments.

    Without a spec (``--mcp-url``) the server may be a live session's: only a call that the server
    refuses for missing arguments is certain not to change its state.
    """
    if spec is not None:
        for tool in spec.tools:
            if tool.tool_class in READ_CLASSES:
                return tool.name, f"{tool.tool_class.value} tool"
    for listed in tools:
        if listed["parameters"].get("required"):
            return listed["name"], EMPTY_ARGUMENTS
    return None, "no read tool and no tool with required parameters: call skipped"


async def _mcp_tool_names(sandbox: SandboxEnvironment) -> list[str]:
    """The tools ``/mcp`` lists, through the MCP SDK as an agent sees them (the harness's own bridge
    lists and calls on the control plane, so this is the probe of the agent's door)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    try:
        async with (
            httpx2.AsyncClient(headers=sandbox.mcp_headers(), trust_env=False) as http,
            Client(streamable_http_client(sandbox.mcp_url, http_client=http)) as client,
        ):
            return [tool.name for tool in (await client.list_tools()).tools]
    except (MCPError, httpx2.HTTPError, OSError) as exc:
        raise SandboxUnavailableError(f"tools/list at {sandbox.mcp_url}: {exc!r}") from exc


async def _probe(
    task: Path | None, backend_name: str, mcp_url: str | None, token_file: Path | None
) -> dict[str, Any]:
    timings: dict[str, float] = {}
    spec: ToolSet | None = None
    backend = None
    with tempfile.TemporaryDirectory(prefix="apexvoice-probe-") as tmp:
        if mcp_url is not None:
            assert token_file is not None
            starter = ExternalBackend.from_token_file(mcp_url, token_file).start(Path(tmp), "probe", task_id="external")
        else:
            assert task is not None
            bundle = load_task(task)
            spec = bundle.tools
            bundle.public_bundle().write(Path(tmp) / "public")
            backend = get_backend(backend_name)
            starter = backend.start(Path(tmp) / "public", "probe", task_id=bundle.task_id)
        t0 = time.monotonic()
        async with starter as sandbox, McpEnvironment(sandbox) as env:
            timings["start_to_ready_s"] = time.monotonic() - t0
            t1 = time.monotonic()
            tools = await env.list_tools()
            timings["list_tools_s"] = time.monotonic() - t1
            t1 = time.monotonic()
            mcp_tools = await _mcp_tool_names(sandbox)
            timings["mcp_list_tools_s"] = time.monotonic() - t1
            name, why = _read_tool(tools, spec)
            call: dict[str, Any] = {"tool": name, "why": why}
            if name is not None:
                t2 = time.monotonic()
                record = await env.call_tool(name, {}, 0)
                timings["call_s"] = time.monotonic() - t2
                call.update(ok=record.ok, index=record.index, output=record.output)
            t3 = time.monotonic()
            snapshot = await env.snapshot()
            timings["snapshot_s"] = time.monotonic() - t3
            t4 = time.monotonic()
            summary = {
                "backend": sandbox.backend,
                "mcp_url": sandbox.mcp_url,
                "metadata": sandbox.metadata,
                "tools": [t["name"] for t in tools],
                "mcp_tools": mcp_tools,
                "call": call,
                "snapshot": {
                    "artifacts": {aid: a.lifecycle for aid, a in snapshot.artifacts.items()},
                    "calls": len(snapshot.call_log),
                    "versions": len(snapshot.versions),
                    "approvals": len(snapshot.approval_log),
                    "recovered": env.snapshot_recovered,
                },
            }
        timings["teardown_s"] = time.monotonic() - t4
        if backend is not None:
            await backend.aclose()
    summary["timings"] = {k: round(v, 4) for k, v in timings.items()}
    return summary


def _print_summary(summary: dict[str, Any]) -> None:
    typer.echo(f"backend     {summary['backend']}  ({summary['mcp_url']})")
    typer.echo(f"tools       {', '.join(summary['tools'])}")
    if summary["mcp_tools"] != summary["tools"]:
        typer.echo(f"warning     /mcp lists other tools: {', '.join(summary['mcp_tools']) or 'none'}")
    call = summary["call"]
    if call["tool"] is None:
        typer.echo(f"read call   {call['why']}")
    else:
        if call["ok"]:
            verdict = "ok"
        elif call["why"] == EMPTY_ARGUMENTS:  # the refusal it asked for: the server checks what it is sent
            verdict = "refused, as intended (the server checks arguments; not an error):"
        else:
            verdict = "refused"
        typer.echo(f"read call   {call['tool']} ({call['why']}): {verdict} {json.dumps(call['output'])[:160]}")
    snap = summary["snapshot"]
    typer.echo(
        f"snapshot    artifacts {snap['artifacts']}, calls {snap['calls']}, versions {snap['versions']}, "
        f"approvals {snap['approvals']}{', RECOVERED from state file' if snap['recovered'] else ''}"
    )
    # The keys are in seconds (``--json`` keeps them so); the line names each step and prints milliseconds.
    steps = (f"{key.removesuffix('_s')} {seconds * 1000:.1f} ms" for key, seconds in summary["timings"].items())
    typer.echo("timings     " + ", ".join(steps))


def _task_package(task: str, data: Path | None) -> Path:
    """A package directory given as such, else the task id looked up as every other verb does."""
    if data is None and Path(task).is_dir():
        return Path(task)
    _, (package,) = open_data(data, [task])
    return package


@app.command("probe")
def probe(
    task: Annotated[str | None, typer.Option("--task", help="The task to serve: its id (as `--only` names it, "
                                            "from --data) or its package directory.")] = None,
    data: Annotated[Path | None, typer.Option("--data", "-d", help=DATA_HELP)] = None,
    backend: Annotated[str, typer.Option("--backend", help="auto, docker, local, an installed backend or package.module:Class.")] = "auto",
    mcp_url: Annotated[
        str | None, typer.Option("--mcp-url", help="Probe a running server instead (e.g. http://task-mcp:8080/mcp).")
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option("--token-file", help="Control token of the --mcp-url server.")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
) -> None:
    """Start a task's MCP server, list its tools, make one read call, print the snapshot and timings.

    Exit code 0 when the server answered, 1 when the sandbox failed, 2 for a usage error.
    """
    if (mcp_url is None) == (task is None):
        typer.echo("error: give either --task TASK_ID_OR_DIR or --mcp-url URL (with --token-file)", err=True)
        raise typer.Exit(2)
    if mcp_url is not None and token_file is None:
        typer.echo("error: --mcp-url needs --token-file", err=True)
        raise typer.Exit(2)
    package = None if task is None else _task_package(task, data)
    try:
        summary = run_interruptible(_probe(package, backend, mcp_url, token_file))
    except (TaskLoadError, ValueError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except (SandboxUnavailableError, ControlRequestError) as exc:
        typer.echo(f"sandbox failed: {exc}", err=True)
        raise typer.Exit(1) from None
    if json_output:
        typer.echo(json.dumps(summary, default=str))
    else:
        _print_summary(summary)


@app.command("cleanup")
def cleanup(
    run_id: Annotated[str | None, typer.Option("--run-id", help="This run's sandboxes, live or not.")] = None,
    everything: Annotated[
        bool, typer.Option("--all", help="Every labelled sandbox, including live ones of running campaigns.")
    ] = False,
    firewall: Annotated[
        bool, typer.Option("--firewall", help="Also remove the host firewall rule the docker backend installs.")
    ] = False,
) -> None:
    """Remove sandbox leftovers: containers, networks and private folders whose harness is gone.

    Without options only leftovers of harness processes that no longer exist (on this host, this
    boot) are removed, so running campaigns keep theirs. Exit 1 when something could not be removed.
    """
    from sandbox.cleanup import sweep

    if run_id is not None and everything:
        typer.echo("error: give --run-id or --all, not both", err=True)
        raise typer.Exit(2)
    try:
        report = sweep(run_id, everything=everything)
    except Exception as exc:  # the engine did not answer
        typer.echo(f"error: cannot reach the Docker engine: {str(exc).splitlines()[0][:200]}", err=True)
        raise typer.Exit(1) from None
    typer.echo(
        f"removed {len(report.containers)} containers, {len(report.networks)} networks, "
        f"{len(report.folders)} private folders"
    )
    failures = list(report.errors)
    if firewall:
        from sandbox.host_guard import remove_host_guard

        for line in remove_host_guard():
            typer.echo(f"firewall: {line}")
            failures += [line] if "cannot remove" in line else []
    for error in report.errors:
        typer.echo(f"  failed: {error}", err=True)
    raise typer.Exit(1 if failures else 0)


@app.command("export")
def export(
    task: Annotated[Path, typer.Option("--task", help="Task package directory.")],
    out: Annotated[Path, typer.Option("--out", help="Directory to write the public bundle into.")],
    token_file: Annotated[
        Path | None, typer.Option("--token-file", help="Also create this control token file (kept if present).")
    ] = None,
) -> None:
    """Write a task's public bundle (never gold, reference or user files) for a server started elsewhere.

    The compose stack runs this once, so its ``task-mcp`` service mounts only the public part.
    Files are world-readable: the server container runs as another user.
    """
    try:
        bundle = load_task(task)
    except TaskLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    out.mkdir(parents=True, exist_ok=True)
    bundle.public_bundle().write(out)
    for path in [out, *out.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    if token_file is not None and not token_file.exists():
        token_file.parent.mkdir(parents=True, exist_ok=True)
        token_file.write_text(secrets.token_urlsafe(32), encoding="utf-8")
        token_file.chmod(0o644)
    typer.echo(f"wrote the public bundle of {bundle.task_id} to {out}")
