"""``apex-voice run``: a campaign of one model over the selected tasks, then its results table.

This module is wiring: the options (over a ``--config`` campaign file, :mod:`.campaign_config`)
become a typed :class:`~.campaign_request.CampaignRequest`,
:func:`~.campaign_request.prepare_campaign` turns it into settings, backend, judge, observer, runner
and executor, the campaign runs under a progress bar or the TUI, and :mod:`.run_report` prints what
it did.

Exit codes: 0 when every cell has a result (a model failing tasks is a measurement, not an error);
1 when infrastructure left some cell empty (run again to fill it, or ``--retry-failed``), or the
model's local endpoint is dead; 2 for usage errors.
"""

from __future__ import annotations

import sys
import time
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from harness.audio.user_audio_mode import UserAudioMode
from harness.campaign.campaign import CampaignResult
from harness.campaign.lock import CampaignLockedError
from harness.campaign.ray_executor import RayExecutorError
from harness.campaign.resume import ALLOW_VERSION_FLAG, EXTEND_FLAG, CampaignMismatchError
from harness.conditions import BUILTIN_CONDITIONS

from .campaign_config import given_on_command_line, request_with_config
from .campaign_request import MAX_PARALLEL, PreparedCampaign, prepare_campaign
from .data_option import DATA_HELP, ONLY_HELP
from .dry_run import print_dry_run
from .interrupts import INTERRUPTED_EXIT_CODE, run_interruptible
from .main import verbose_requested
from .plain_progress import wants_plain_progress
from .run_report import closing_line, denominator_line, print_results, run_with_progress, this_start_line
from .valid_packages import not_run_lines

__all__ = ["run"]

# `run --help` in groups, in the order a user decides them.
_WHAT, _AGENT, _WHERE, _CAMPAIGN, _OUTPUT = ("What to run", "The agent", "Where it runs", "The campaign directory",
                                             "Output")


class ExecutorChoice(str, Enum):
    local = "local"
    ray = "ray"


def run(
    ctx: typer.Context,
    model: Annotated[str, typer.Option("--model", "-m", rich_help_panel=_WHAT, help="Registry key of the agent under test.")] = "oracle",
    data: Annotated[Path | None, typer.Option("--data", "-d", rich_help_panel=_WHAT, help=DATA_HELP)] = None,
    only: Annotated[list[str] | None, typer.Option("--only", rich_help_panel=_WHAT, help=ONLY_HELP)] = None,
    # -- issue 23: choosing cells, rerunning what failed, resuming across versions, verbosity --
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, rich_help_panel=_WHAT, help="Only the first N tasks (suite order, after --only).")
    ] = None,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", rich_help_panel=_CAMPAIGN, help="Run again only the cells of the --out campaign left without a "
                           "scored result (infrastructure, harness error, provider refusal, stopped, never run), over "
                           "the campaign's own plan. A scored failure is a measurement and is never rerun.")
    ] = False,
    allow_version_change: Annotated[
        bool, typer.Option(ALLOW_VERSION_FLAG, rich_help_panel=_CAMPAIGN, help="Resume a campaign another harness version started (the "
                           "earlier versions stay listed in campaign.json).")
    ] = False,
    extend: Annotated[
        bool, typer.Option(EXTEND_FLAG, rich_help_panel=_CAMPAIGN, help="Grow the --out campaign by the tasks or repetitions this start adds "
                           "(a start that plans more than its campaign is refused otherwise; fewer always resumes).")
    ] = False,
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", rich_help_panel=_CAMPAIGN, help="Run the task packages that pass validation (load and lint) and "
                           "list the others as not run; without it one invalid package refuses the run.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", rich_help_panel=_OUTPUT, help="Explain failures in full (as `apex-voice -v run`).")
    ] = False,
    # -- end issue 23 --
    repeats: Annotated[
        int | None, typer.Option("--repeats", min=1, rich_help_panel=_WHAT, help="Repetitions per task (default 1 for deterministic agents, else 3).")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", rich_help_panel=_CAMPAIGN, help="Campaign directory (default runs/<model>).")] = None,
    sandbox: Annotated[
        str | None,
        typer.Option("--sandbox", rich_help_panel=_WHERE, help="Where the task's tools run: auto (default: docker when an engine answers), "
                     "docker, local, an installed backend or package.module:Class (docs/plugins.md)."),
    ] = None,
    user_audio: Annotated[
        UserAudioMode, typer.Option("--user-audio", rich_help_panel=_WHAT, help="How the simulated user speaks.")
    ] = UserAudioMode.AUTO,
    parallel: Annotated[int, typer.Option("--parallel", min=1, rich_help_panel=_WHERE, help=f"Sessions run at once (at most {MAX_PARALLEL}).")] = 1,
    max_turns: Annotated[int, typer.Option("--max-turns", min=1, rich_help_panel=_WHAT, help="User turns before a session is cut.")] = 44,
    json_output: Annotated[bool, typer.Option("--json", rich_help_panel=_OUTPUT, help="One result.json record per line on stdout.")] = False,
    mcp_url: Annotated[
        str | None,
        typer.Option(
            "--mcp-url",
            rich_help_panel=_WHERE, help="Use this already running task server (e.g. the compose stack's task-mcp) instead of "
            "starting a sandbox: exactly one task and one repetition.",
        ),
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option("--token-file", rich_help_panel=_WHERE, help="The control token of the --mcp-url server.")
    ] = None,
    condition: Annotated[
        str,
        typer.Option("--condition", rich_help_panel=_WHAT, help="; ".join(f"{c.name}: {c.title}" for c in BUILTIN_CONDITIONS.values())
                     + "; or an installed condition (docs/conditions.md, docs/plugins.md)."),
    ] = "C2",
    acoustics: Annotated[
        str | None,
        typer.Option("--acoustics", rich_help_panel=_WHAT, help="C3 only: a preset (light, moderate, telephone, lossy, harsh; default "
                     "moderate) or a chain such as 'reverb:rt60_s=0.5+babble:snr_db=10' (docs/conditions.md)."),
    ] = None,
    tool_mode: Annotated[
        str | None,
        typer.Option("--tool-mode", rich_help_panel=_AGENT, help="bridge: the harness executes the agent's function calls; native: the agent "
                     "gets the task's MCP endpoint and calls the tools itself (observed at the server). "
                     "Default: the model's first supported mode."),
    ] = None,
    mcp_public_url: Annotated[
        str | None,
        typer.Option("--mcp-public-url", rich_help_panel=_AGENT, help="Native tool mode with a cloud provider: the URL the provider's MCP "
                     "client uses instead of the sandbox's internal address (your tunnel or reverse proxy to it). "
                     "The per-session bearer token still guards it; see docs/security.md for the risks."),
    ] = None,
    tool_latency_ms: Annotated[
        int,
        typer.Option("--tool-latency-ms", min=0, rich_help_panel=_AGENT, help="Media time every tool call takes before its result reaches the "
                     "agent (virtual clock: exactly this; realtime: at least this). Both channels keep moving meanwhile."),
    ] = 0,
    endpoint: Annotated[
        str | None, typer.Option("--endpoint", rich_help_panel=_AGENT, help="Where the model is served: a provider's websocket URL (overrides "
                                 "its default and env variable), or the chat-completions base URL of chat:/cascade:.")
    ] = None,
    provider_model: Annotated[
        str | None, typer.Option("--provider-model", rich_help_panel=_AGENT, help="The model id to request from the provider.")
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option("--api-key-env", rich_help_panel=_AGENT, help="chat:/cascade: the variable holding the endpoint's key "
                                 "(default OPENAI_API_KEY).")
    ] = None,
    env_file: Annotated[
        Path | None, typer.Option("--env-file", rich_help_panel=_AGENT, help="Read provider keys from this file (default: ./.env when present).")
    ] = None,
    tui: Annotated[bool, typer.Option("--tui", rich_help_panel=_OUTPUT, help="Watch the sessions live in the terminal UI.")] = False,
    trust_adapter: Annotated[
        bool, typer.Option("--trust-adapter", rich_help_panel=_AGENT, help="Load an out-of-tree adapter (package.module:Class, an entry point) "
                           "into the harness's process instead of hosting it out of process: its code can then read "
                           "gold, reference and grader (docs/security.md). Recorded as agent_isolation in-process.")
    ] = False,
    adapter_env: Annotated[
        list[str] | None, typer.Option("--adapter-env", rich_help_panel=_AGENT, help="A variable given to a hosted out-of-tree adapter or to "
                                       "an agent image (container:IMAGE, twilio+container:IMAGE), with its value from this "
                                       "environment (repeatable); neither inherits any other variable, provider keys included.")
    ] = None,
    agent_memory: Annotated[
        str | None, typer.Option("--agent-memory", metavar="SIZE", rich_help_panel=_AGENT, help="The memory limit of each agent "
                                 "container (an agent image, the native oracle or a hosted adapter under --sandbox docker), "
                                 "e.g. 768m or 2g; default 512m, no swap. An agent that outgrows it is killed: its failure, "
                                 "and result.json says so (sandbox.agent_container.ended.oom_killed).")
    ] = None,
    executor: Annotated[
        ExecutorChoice, typer.Option("--executor", rich_help_panel=_WHERE, help="Where cells run: local (this process) or ray (tasks on a "
                                     "Ray cluster's nodes that advertise apex_sandbox; docs/scale-out.md).")
    ] = ExecutorChoice.local,
    ray_address: Annotated[
        str | None, typer.Option("--ray-address", rich_help_panel=_WHERE, help="--executor ray: the cluster to join (host:port, ray://..., "
                                 "auto); default: a local Ray instance on 127.0.0.1 for this campaign.")
    ] = None,
    # -- issue 36 §3: conventions from neighbouring tools --
    config: Annotated[
        Path | None, typer.Option("--config", "-c", metavar="FILE", rich_help_panel=_WHAT, help="A campaign file: these options as YAML keys (max_turns: 20; "
                                  "docs/campaign-file.md). An option given on the command line wins over the file.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", rich_help_panel=_CAMPAIGN, help="Print the cells that would run (and those resumed), the sandbox, the "
                           "estimated wall time and, for a priced model, cost; start and write nothing.")
    ] = False,
    fail_fast: Annotated[
        bool, typer.Option("--fail-fast", "-x", rich_help_panel=_CAMPAIGN, help="Start no further cell once one does not pass (a scored "
                           "failure or no score); the rest are recorded as stopped.")
    ] = False,
    max_cost: Annotated[
        float | None, typer.Option("--max-cost", min=0, metavar="USD", rich_help_panel=_CAMPAIGN, help="Start no further cell once the "
                                   "campaign's recorded cost passes this many USD (priced models; docs/campaign-file.md).")
    ] = None,
) -> None:
    """Run a campaign (resumable: cells that already have a result are loaded, not re-run).

    With no arguments: the oracle agent on the bundled demo suite, full duplex, in the best
    available sandbox, with a results table at the end. Exit 0 when every cell ran (whatever the
    model scored), 1 when infrastructure left cells empty, 2 for usage errors.
    """
    flags = dict(
        model=model, data=data, only=only or [], limit=limit, retry_failed=retry_failed,
        allow_version_change=allow_version_change, extend=extend, skip_invalid=skip_invalid, repeats=repeats,
        out=out, sandbox=sandbox, user_audio=user_audio, parallel=parallel, max_turns=max_turns, mcp_url=mcp_url,
        token_file=token_file, condition=condition, acoustics=acoustics, tool_mode=tool_mode,
        mcp_public_url=mcp_public_url, tool_latency_ms=tool_latency_ms, endpoint=endpoint,
        provider_model=provider_model, api_key_env=api_key_env, env_file=env_file, trust_adapter=trust_adapter,
        adapter_env=adapter_env or [], agent_memory=agent_memory, executor=executor.value, ray_address=ray_address, fail_fast=fail_fast,
        max_cost=max_cost,
    )
    request, used = request_with_config(config, flags, given_on_command_line(ctx, flags))
    prepared = prepare_campaign(request, dry_run=dry_run, config=used)
    if dry_run:
        print_dry_run(prepared, as_json=json_output)
        raise typer.Exit(0)
    started = time.monotonic()
    if tui and wants_plain_progress(sys.stdin, sys.stdout):  # no screen to draw on, no `q` to read
        typer.echo("warning: --tui needs a terminal on stdin and stdout; showing progress lines instead", err=True)
        tui = False
    result = _run(prepared, tui=tui, quiet=json_output)
    if json_output:
        for row in result.rows:
            typer.echo(row.model_dump_json())
        for line in (result.summary(), denominator_line(result), this_start_line(result)):
            typer.echo(line, err=True)
    else:
        print_results(result, full=verbose or verbose_requested(ctx))
    typer.echo(closing_line(result, time.monotonic() - started), err=json_output)
    for line in not_run_lines(prepared.invalid):
        typer.echo(line, err=True)
    raise typer.Exit(0 if result.complete else 1)


def _run(prepared: PreparedCampaign, *, tui: bool, quiet: bool) -> CampaignResult:
    """The campaign, under the TUI or a progress bar; its refusals as one line and an exit code."""
    try:
        if not tui:
            return run_interruptible(run_with_progress(prepared.settings, prepared.task_ids, prepared.runner,
                                                       prepared.backend, quiet=quiet, **prepared.options))
        from tui.live import run_campaign_in_tui

        shown = run_campaign_in_tui(prepared.settings, prepared.task_ids, prepared.runner, prepared.backend,
                                    **prepared.options)
    except CampaignLockedError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    except CampaignMismatchError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except RayExecutorError as exc:
        typer.echo(f"error: --executor ray: {exc}", err=True)
        raise typer.Exit(1) from None
    if shown is None:
        typer.echo("interrupted: sandboxes torn down, finished results kept (run again to resume)", err=True)
        raise typer.Exit(INTERRUPTED_EXIT_CODE)
    return shown
