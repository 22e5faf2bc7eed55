"""``apex-voice run``: a campaign of one model over the selected tasks, then its results table.

Exit codes: 0 when every cell has a result (a model failing tasks is a measurement, not an error);
1 when infrastructure left some cell empty (run again to fill it, or ``--retry-failed``), or the
model's local endpoint is dead; 2 for usage errors.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections import Counter
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast
from urllib.parse import urlsplit

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness.agents.adapter_process import AdapterLoadError, probe_adapter
from harness.agents.env_file import EnvFileError, load_env_file
from harness.agents.registry import PREFIXES, ModelSpec, UnknownModelError, get_model
from harness.audio.user_audio_mode import UserAudioMode
from harness.campaign.campaign import (
    CampaignCell,
    CampaignResult,
    CampaignSettings,
    CellOutcome,
    CellRunner,
    local_cells,
    run_campaign,
)
from harness.campaign.lock import CampaignLockedError
from harness.campaign.manifest import CampaignManifest
from harness.campaign.ray_executor import RAY_INSTALL_HINT, RayExecutor, RayExecutorError, ray_installed
from harness.campaign.resume import ALLOW_VERSION_FLAG, EXTEND_FLAG, CampaignMismatchError
from harness.campaign.text_cell import TEXT_FORMS, cell_runner_class, condition_problem
from harness.campaign.unscored import unscored_cells
from harness.cli.out_dir import writable_dir_or_exit
from harness.conditions import BUILTIN_CONDITIONS, ConditionDef, UnknownConditionError, get_condition
from harness.grading.judge import CachedVerdicts, SemanticJudge
from harness.grading.judge_cache import JudgeCache
from harness.results.campaign_files import MANIFEST_FILE
from harness.results.denominator import PENDING
from harness.results.leaderboard import reliability
from harness.results.measurement_identity import TaskPin
from harness.results.regrade import pending_regrader
from harness.results.result_record import RESULT_FILE, ResultRecord
from harness.results.run_tree import Campaign, Run
from harness.session.session_config import ToolMode
from harness.tasks.bundle import TaskBundle
from harness.user.llm_act_observer import LlmActClassifier
from sandbox.backend import SandboxBackend, get_backend
from sandbox.errors import AgentImageError, SandboxUnavailableError, UnknownBackendError
from sandbox.external import ExternalBackend

from .console import cli_console
from .data_option import DATA_HELP, ONLY_HELP, open_data
from .interrupts import INTERRUPTED_EXIT_CODE, run_interruptible
from .main import verbose_requested
from .plain_progress import PlainProgress, wants_plain_progress
from .preflight import dead_endpoint_problem, missing_key_problem
from .results_table import task_table
from .valid_packages import not_run_lines, valid_packages_or_exit

if TYPE_CHECKING:  # audio and numpy load only for a run that speaks
    from harness.audio.acoustics import AcousticChain
    from harness.audio.speech_bank import SpeechSource

__all__ = ["run"]

#: Failed runs show at most this many explanation lines each under the table (``-v``: all).
EXPLAIN_LINES = 3
#: ``--parallel`` above this is refused: each session runs its own sandbox and agent.
MAX_PARALLEL = 64
TOOL_MODES = ("bridge", "native")


class ExecutorChoice(str, Enum):
    local = "local"
    ray = "ray"


def run(
    ctx: typer.Context,
    model: Annotated[str, typer.Option("--model", "-m", help="Registry key of the agent under test.")] = "oracle",
    data: Annotated[Path | None, typer.Option("--data", "-d", help=DATA_HELP)] = None,
    only: Annotated[list[str] | None, typer.Option("--only", help=ONLY_HELP)] = None,
    # -- issue 23: choosing cells, rerunning what failed, resuming across versions, verbosity --
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N tasks (suite order, after --only).")
    ] = None,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Run again only the cells of the --out campaign left without a "
                           "scored result (infrastructure, harness error, provider refusal, stopped, never run), over "
                           "the campaign's own plan. A scored failure is a measurement and is never rerun.")
    ] = False,
    allow_version_change: Annotated[
        bool, typer.Option(ALLOW_VERSION_FLAG, help="Resume a campaign another harness version started (the "
                           "earlier versions stay listed in campaign.json).")
    ] = False,
    extend: Annotated[
        bool, typer.Option(EXTEND_FLAG, help="Grow the --out campaign by the tasks or repetitions this start adds "
                           "(a start that plans more than its campaign is refused otherwise; fewer always resumes).")
    ] = False,
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Run the task packages that pass validation (load and lint) and "
                           "list the others as not run; without it one invalid package refuses the run.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Explain failures in full (as `apex-voice -v run`).")
    ] = False,
    # -- end issue 23 --
    repeats: Annotated[
        int | None, typer.Option("--repeats", min=1, help="Repetitions per task (default 1 for deterministic agents, else 3).")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Campaign directory (default runs/<model>).")] = None,
    sandbox: Annotated[
        str | None,
        typer.Option("--sandbox", help="Where the task's tools run: auto (default: docker when an engine answers), "
                     "docker, local, an installed backend or package.module:Class (docs/plugins.md)."),
    ] = None,
    user_audio: Annotated[
        UserAudioMode, typer.Option("--user-audio", help="How the simulated user speaks.")
    ] = UserAudioMode.AUTO,
    parallel: Annotated[int, typer.Option("--parallel", min=1, help=f"Sessions run at once (at most {MAX_PARALLEL}).")] = 1,
    max_turns: Annotated[int, typer.Option("--max-turns", min=1, help="User turns before a session is cut.")] = 44,
    json_output: Annotated[bool, typer.Option("--json", help="One result.json record per line on stdout.")] = False,
    mcp_url: Annotated[
        str | None,
        typer.Option(
            "--mcp-url",
            help="Use this already running task server (e.g. the compose stack's task-mcp) instead of "
            "starting a sandbox: exactly one task and one repetition.",
        ),
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option("--token-file", help="The control token of the --mcp-url server.")
    ] = None,
    condition: Annotated[
        str,
        typer.Option("--condition", help="; ".join(f"{c.name}: {c.title}" for c in BUILTIN_CONDITIONS.values())
                     + "; or an installed condition (docs/conditions.md, docs/plugins.md)."),
    ] = "C2",
    acoustics: Annotated[
        str | None,
        typer.Option("--acoustics", help="C3 only: a preset (light, moderate, telephone, lossy, harsh; default "
                     "moderate) or a chain such as 'reverb:rt60_s=0.5+babble:snr_db=10' (docs/conditions.md)."),
    ] = None,
    tool_mode: Annotated[
        str | None,
        typer.Option("--tool-mode", help="bridge: the harness executes the agent's function calls; native: the agent "
                     "gets the task's MCP endpoint and calls the tools itself (observed at the server). "
                     "Default: the model's first supported mode."),
    ] = None,
    mcp_public_url: Annotated[
        str | None,
        typer.Option("--mcp-public-url", help="Native tool mode with a cloud provider: the URL the provider's MCP "
                     "client uses instead of the sandbox's internal address (your tunnel or reverse proxy to it). "
                     "The per-session bearer token still guards it; see docs/security.md for the risks."),
    ] = None,
    tool_latency_ms: Annotated[
        int,
        typer.Option("--tool-latency-ms", min=0, help="Media time every tool call takes before its result reaches the "
                     "agent (virtual clock: exactly this; realtime: at least this). Both channels keep moving meanwhile."),
    ] = 0,
    endpoint: Annotated[
        str | None, typer.Option("--endpoint", help="Where the model is served: a provider's websocket URL (overrides "
                                 "its default and env variable), or the chat-completions base URL of chat:/cascade:.")
    ] = None,
    provider_model: Annotated[
        str | None, typer.Option("--provider-model", help="The model id to request from the provider.")
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option("--api-key-env", help="chat:/cascade: the variable holding the endpoint's key "
                                 "(default OPENAI_API_KEY).")
    ] = None,
    env_file: Annotated[
        Path | None, typer.Option("--env-file", help="Read provider keys from this file (default: ./.env when present).")
    ] = None,
    tui: Annotated[bool, typer.Option("--tui", help="Watch the sessions live in the terminal UI.")] = False,
    trust_adapter: Annotated[
        bool, typer.Option("--trust-adapter", help="Load an out-of-tree adapter (package.module:Class, an entry point) "
                           "into the harness's process instead of hosting it out of process: its code can then read "
                           "gold, reference and grader (docs/security.md). Recorded as agent_isolation in-process.")
    ] = False,
    adapter_env: Annotated[
        list[str] | None, typer.Option("--adapter-env", help="A variable a hosted out-of-tree adapter is given "
                                       "(repeatable); it inherits no other variable, provider keys included.")
    ] = None,
    executor: Annotated[
        ExecutorChoice, typer.Option("--executor", help="Where cells run: local (this process) or ray (tasks on a "
                                     "Ray cluster's nodes that advertise apex_sandbox; docs/scale-out.md).")
    ] = ExecutorChoice.local,
    ray_address: Annotated[
        str | None, typer.Option("--ray-address", help="--executor ray: the cluster to join (host:port, ray://..., "
                                 "auto); default: a local Ray instance on 127.0.0.1 for this campaign.")
    ] = None,
) -> None:
    """Run a campaign (resumable: cells that already have a result are loaded, not re-run).

    With no arguments: the oracle agent on the bundled demo suite, full duplex, in the best
    available sandbox, with a results table at the end. Exit 0 when every cell ran (whatever the
    model scored), 1 when infrastructure left cells empty, 2 for usage errors.
    """
    _executor_or_exit(executor, ray_address, mcp_url)
    _env_file_or_exit(env_file)
    _usage_or_exit(tool_mode=tool_mode, parallel=parallel, retry_failed=retry_failed, repeats=repeats)
    passed_env = _adapter_env_or_exit(adapter_env or [])
    definition = _condition_or_exit(condition)
    condition = definition.name  # as registered (`c0` is `C0`): every later use compares the one name
    _endpoint_or_exit(endpoint)
    spec = _model_or_exit(model, condition, endpoint=endpoint, provider_model=provider_model,
                          api_key_env=api_key_env, trust_adapter=trust_adapter, adapter_env=passed_env)
    tool_mode = tool_mode or spec.tool_modes[0]
    if tool_mode not in spec.tool_modes:
        typer.echo(f"error: {spec.key} supports --tool-mode {', '.join(spec.tool_modes)}, not {tool_mode!r}", err=True)
        raise typer.Exit(2)
    if mcp_public_url is not None:
        _public_url_or_exit(mcp_public_url, spec, tool_mode, parallel)
    chain = _acoustics_or_exit(definition, acoustics)
    source, task_dirs = open_data(data, only)
    task_dirs = task_dirs[:limit] if limit is not None else task_dirs
    out_dir = out or Path("runs") / spec.key
    retry_cells = _retry_plan_or_exit(out_dir, task_dirs, source.root, selected=bool(only) or limit is not None) \
        if retry_failed else None
    if retry_cells is not None:
        task_dirs = [d for d in task_dirs if d.name in {c.task_id for c in retry_cells}]
    bundles, invalid = valid_packages_or_exit(task_dirs, source.checksums, skip_invalid=skip_invalid)
    speech = _speech_or_exit(user_audio.value, bundles)
    _reachable_or_exit(spec)
    if mcp_url is not None:
        if sandbox is not None:
            typer.echo("error: --sandbox and --mcp-url exclude each other (--mcp-url uses a running server)", err=True)
            raise typer.Exit(2)
        if token_file is None or len(bundles) != 1 or (repeats or 1) != 1:
            typer.echo("error: --mcp-url needs --token-file, exactly one task (--only) and one repetition", err=True)
            raise typer.Exit(2)
        backend: SandboxBackend = _external_or_exit(mcp_url, token_file)
    else:
        if executor is ExecutorChoice.local and (sandbox or "auto") in ("auto", "docker"):
            _agent_image_or_exit(spec)
        # Ray's nodes each prepare their own backend (their engine builds or checks the images).
        backend = _backend_or_exit(sandbox or "auto", prepare=executor is ExecutorChoice.local)
    typer.echo(f"sandbox: {backend.name} ({backend.chosen_because})", err=True)
    if spec.agent_kind == "external_code":
        typer.echo(f"warning: {spec.key} runs in the harness's process (--trust-adapter): its code can read the loaded "
                   "tasks' gold and reference policy, patch the grader and read task files, so its scores prove "
                   "nothing (recorded as agent_isolation: in-process)", err=True)

    judge = SemanticJudge.from_env()
    if judge is None and not spec.deterministic:
        typer.echo(
            "judge: none (set APEX_VOICE_LLM_API_KEY or OPENAI_API_KEY): semantic fields are graded "
            "deterministically only, so a correct value in other words fails",
            err=True,
        )
    observer = LlmActClassifier.from_env()
    if observer is None and not spec.deterministic:
        typer.echo(
            "observer: deterministic only (set APEX_VOICE_LLM_API_KEY or OPENAI_API_KEY): the simulated user "
            "hears only the task's patterns, so a model that phrases a question its own way may go unheard "
            "and scores are not comparable with the published ones",
            err=True,
        )
    runner = cell_runner_class(condition)(
        model=spec,
        backend=backend,
        task_dirs={b.task_id: b.task_dir for b in bundles},
        speech=lambda bundle: speech[bundle.task_id],
        judge=judge,
        max_turns=max_turns,
        checksums=source.checksums,
        condition=condition,
        acoustics=chain,
        tool_latency_ms=tool_latency_ms,
        observer=observer,
        tool_mode=cast(ToolMode, tool_mode),  # one of TOOL_MODES: checked by _usage_or_exit
        adapter_env=passed_env,
        mcp_public_url=mcp_public_url,
    )
    settings = CampaignSettings(
        model=spec,
        out_dir=writable_dir_or_exit(out_dir, what="the campaign directory"),
        repeats=(max(c.rep for c in retry_cells) + 1 if retry_cells else repeats or (1 if spec.deterministic else 3)),
        identity=runner.identity(user_audio=user_audio.value),
        sandbox=backend.name,
        parallel=parallel,
        extend=extend,
        allow_version_change=allow_version_change,
    )
    golds = {b.task_id: b.gold for b in bundles}
    try:
        campaign_options: dict[str, Any] = {
            "task_pins": {b.task_id: TaskPin.of(b.task_dir, b.task.version, source.checksums) for b in bundles},
            "regrade": pending_regrader(golds.get, judge or CachedVerdicts(JudgeCache())),
            "executor": RayExecutor(ray_address) if executor is ExecutorChoice.ray else local_cells,
        }
        if retry_cells is not None:
            campaign_options["cells"] = retry_cells
        if tui and wants_plain_progress(sys.stdin, sys.stdout):  # no screen to draw on, no `q` to read
            typer.echo("warning: --tui needs a terminal on stdin and stdout; showing progress lines instead", err=True)
            tui = False
        if tui:
            from tui.live import run_campaign_in_tui

            shown = run_campaign_in_tui(settings, [b.task_id for b in bundles], runner, backend, **campaign_options)
            if shown is None:
                typer.echo("interrupted: sandboxes torn down, finished results kept (run again to resume)", err=True)
                raise typer.Exit(INTERRUPTED_EXIT_CODE)
            result = shown
        else:
            result = run_interruptible(
                _run_with_progress(
                    settings, [b.task_id for b in bundles], runner, backend, quiet=json_output, **campaign_options
                )
            )
    except CampaignLockedError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    except CampaignMismatchError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except RayExecutorError as exc:
        typer.echo(f"error: --executor ray: {exc}", err=True)
        raise typer.Exit(1) from None
    if json_output:
        for row in result.rows:
            typer.echo(row.model_dump_json())
        typer.echo(result.summary(), err=True)
        typer.echo(_denominator_line(result), err=True)
        typer.echo(_this_start_line(result), err=True)
    else:
        _print_results(result, full=verbose or verbose_requested(ctx))
    for line in not_run_lines(invalid):
        typer.echo(line, err=True)
    raise typer.Exit(0 if result.complete else 1)


def _executor_or_exit(executor: ExecutorChoice, ray_address: str | None, mcp_url: str | None) -> None:
    """``--executor ray`` needs Ray installed and a sandbox each node can start (not ``--mcp-url``)."""
    problem = None
    if executor is ExecutorChoice.local:
        problem = "--ray-address needs --executor ray" if ray_address is not None else None
    elif not ray_installed():
        problem = RAY_INSTALL_HINT
    elif mcp_url is not None:
        problem = "--executor ray starts each cell's sandbox on its node; --mcp-url names one running server"
    if problem is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)


def _endpoint_or_exit(endpoint: str | None) -> None:
    """``--endpoint`` must be a URL with a scheme and a host: anything else (the README's ``URL``
    placeholder, a bare ``localhost:8000``) would fail every session's every attempt, slowly."""
    if endpoint is None:
        return
    try:
        parts = urlsplit(endpoint)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        host = None
    if parts.scheme not in _ENDPOINT_SCHEMES or not host:
        typer.echo(f"error: --endpoint {endpoint!r} is not a URL with a scheme and a host (e.g. "
                   "http://localhost:8000/v1 for chat:/cascade:, wss://HOST/PATH for a provider)", err=True)
        raise typer.Exit(2)


_ENDPOINT_SCHEMES = ("http", "https", "ws", "wss")


def _condition_or_exit(name: str) -> ConditionDef:
    try:
        return get_condition(name)
    except UnknownConditionError as exc:
        typer.echo(f"error: --condition: {exc}", err=True)
        raise typer.Exit(2) from None



def _usage_or_exit(*, tool_mode: str | None, parallel: int, retry_failed: bool, repeats: int | None) -> None:
    """Values no model or task can make right: one line each, exit 2."""
    problem = None
    if tool_mode is not None and tool_mode not in TOOL_MODES:
        problem = f"--tool-mode {tool_mode!r} is not a tool mode; use {' or '.join(TOOL_MODES)}"
    elif parallel > MAX_PARALLEL:
        problem = (f"--parallel {parallel}: at most {MAX_PARALLEL} sessions at once (each runs its own sandbox "
                   "and agent; more would starve this machine and the provider's rate limits)")
    elif retry_failed and repeats is not None:
        problem = "--retry-failed reruns the campaign's own plan; it takes no --repeats"
    if problem is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)


def _acoustics_or_exit(condition: ConditionDef, text: str | None) -> AcousticChain | None:
    """The degradation chain of a condition with acoustics (C3; one line and exit 2 for a bad spec);
    ``None`` in the others, where ``--acoustics`` would be ignored and is refused."""
    if not condition.acoustics:
        if text is not None:
            typer.echo(f"error: --acoustics applies to a condition with acoustics (C3) only (this run is "
                       f"{condition.name}: {condition.title})", err=True)
            raise typer.Exit(2)
        return None
    from harness.audio.acoustics import PRESETS, AcousticChain, AcousticsError

    try:
        return AcousticChain.parse(text or "moderate")
    except AcousticsError as exc:
        single_word = text is not None and not any(mark in text for mark in ":+.")
        presets = f"; or a preset: {', '.join(PRESETS)}" if single_word else ""
        typer.echo(f"error: {exc}{presets}", err=True)
        raise typer.Exit(2) from None


def _reachable_or_exit(spec: ModelSpec) -> None:
    """Refuse before any session a model that cannot answer: no key for the default chat endpoint
    (exit 2, like any missing key), or a dead local endpoint (exit 1, like a dead --mcp-url)."""
    problem = missing_key_problem(spec)
    if problem is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)
    problem = dead_endpoint_problem(spec)
    if problem is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(1)


def _agent_image_or_exit(spec: ModelSpec) -> None:
    """An agent image of the user's own (``container:IMAGE``) that is not on the engine: said once,
    before any sandbox is built or session started (the campaign found it at its first cell, then
    listed every other cell as not run). Ours are built when missing; without an engine the
    backend's own check speaks."""
    image = spec.agent_image
    if image is None or spec.hosted_adapter is not None:
        return
    import docker.errors

    from sandbox.agent_container import ensure_agent_image
    from sandbox.image_build import REPOSITORY_PREFIX

    if image.startswith(REPOSITORY_PREFIX):
        return
    try:
        ensure_agent_image(image)
    except AgentImageError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    except docker.errors.DockerException:
        return


def _retry_plan_or_exit(out_dir: Path, task_dirs: list[Path], root: Path, *, selected: bool) -> list[CampaignCell]:
    """``--retry-failed``: the campaign's planned cells (those of the selected tasks when --only or
    --limit narrows them); says how many of them have no scored result and will run again."""
    try:
        manifest = CampaignManifest.model_validate_json((out_dir / MANIFEST_FILE).read_bytes())
    except FileNotFoundError:
        typer.echo(f"error: --retry-failed: {out_dir} holds no {MANIFEST_FILE} (nothing ran there yet)", err=True)
        raise typer.Exit(2) from None
    except (OSError, ValueError) as exc:
        typer.echo(f"error: --retry-failed: {out_dir / MANIFEST_FILE} cannot be read: {exc}", err=True)
        raise typer.Exit(2) from None
    available = {d.name for d in task_dirs}
    missing = sorted(set(manifest.planned_cells) - available)
    if not manifest.planned_cells or (missing and not selected):
        why = (f"plans {', '.join(missing)}, not in {root} (pass its --data)" if manifest.planned_cells
               else "records no planned cells (an older harness wrote it): run its command again instead")
        typer.echo(f"error: --retry-failed: the campaign in {out_dir} {why}", err=True)
        raise typer.Exit(2)
    cells = sorted(CampaignCell(rep, task) for task, reps in manifest.planned_cells.items() if task in available
                   for rep in reps)
    empty = sum(ResultRecord.read(cell.rep_dir(out_dir)) is None for cell in cells)
    if empty:
        kept = len(cells) - empty
        typer.echo(f"--retry-failed: {empty} of {len(cells)} planned cells to run again ({kept} scored "
                   f"cell{'' if kept == 1 else 's'} kept)", err=True)
    else:
        typer.echo(f"--retry-failed: nothing to run again, every planned cell of {out_dir} has a scored result",
                   err=True)
    return cells


def _env_file_or_exit(path: Path | None) -> None:
    if path is not None and not path.is_file():
        typer.echo(f"error: --env-file {path}: no such file", err=True)
        raise typer.Exit(2)
    default = Path(".env")
    try:
        if path is not None or default.is_file():
            load_env_file(path or default)
    except (EnvFileError, OSError, UnicodeDecodeError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _adapter_env_or_exit(names: list[str]) -> dict[str, str]:
    """``--adapter-env NAME``: the named variables, each of which must be set."""
    missing = [name for name in names if name not in os.environ]
    if missing:
        typer.echo(f"error: --adapter-env {missing[0]} is not set", err=True)
        raise typer.Exit(2)
    return {name: os.environ[name] for name in names}


def _model_or_exit(
    key: str, condition: str, *, endpoint: str | None, provider_model: str | None, api_key_env: str | None,
    trust_adapter: bool = False, adapter_env: dict[str, str] | None = None,
) -> ModelSpec:
    try:
        spec = get_model(key, trust_adapter=trust_adapter)
    except UnknownModelError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if trust_adapter and spec.agent_kind != "external_code":
        typer.echo(f"error: --trust-adapter applies to out-of-tree adapters (package.module:Class), not {key!r}", err=True)
        raise typer.Exit(2)
    if spec.hosted_adapter is not None:
        spec = _hosted_or_exit(spec, endpoint=endpoint, provider_model=provider_model, adapter_env=adapter_env or {})
        endpoint = provider_model = None
    if api_key_env is not None and key.partition(":")[0] not in PREFIXES:
        typer.echo(f"error: --api-key-env applies to {', '.join(f'{p}:MODEL' for p in PREFIXES)}, not {key!r}", err=True)
        raise typer.Exit(2)
    spec = spec.with_options(endpoint=endpoint, model=provider_model, api_key_env=api_key_env)
    problem = condition_problem(spec, condition)
    if problem:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)
    missing = spec.missing_credentials()
    if missing:
        typer.echo(f"error: {spec.display_name} needs {' or '.join(missing)}.", err=True)
        raise typer.Exit(2)
    if get_condition(condition).session == "text" and spec.key in TEXT_FORMS:
        # Its text form is made per task (text_agent_for): building the voice agent here would only
        # load the audio stack a text session never uses.
        if endpoint is not None or provider_model is not None:
            typer.echo(f"error: model {key!r} takes no --endpoint or --provider-model", err=True)
            raise typer.Exit(2)
        return spec
    try:
        spec.create_adapter()
    except TypeError:
        typer.echo(f"error: model {key!r} takes no --endpoint or --provider-model", err=True)
        raise typer.Exit(2) from None
    except (ImportError, AttributeError) as exc:
        typer.echo(f"error: the adapter of model {key!r} ({spec.adapter}) cannot be loaded: {exc}", err=True)
        raise typer.Exit(2) from None
    return spec


def _hosted_or_exit(
    spec: ModelSpec, *, endpoint: str | None, provider_model: str | None, adapter_env: dict[str, str]
) -> ModelSpec:
    """A hosted adapter, loaded once in a child as its sessions will load it (exit 2 when it does not)."""
    assert spec.hosted_adapter is not None
    if endpoint is not None or provider_model is not None:
        typer.echo("error: --endpoint and --provider-model are options of in-process adapters; a hosted adapter "
                   "takes no constructor arguments (or use --trust-adapter)", err=True)
        raise typer.Exit(2)
    try:
        hosted = probe_adapter(spec.hosted_adapter, env=adapter_env)
    except AdapterLoadError as exc:
        typer.echo(f"error: the adapter {spec.key!r} cannot be hosted: {exc}", err=True)
        raise typer.Exit(2) from None
    return replace(spec, display_name=hosted.display_name, tool_modes=hosted.tool_modes)


def _speech_or_exit(mode: str, bundles: list[TaskBundle]) -> dict[str, SpeechSource]:
    """Each task's speech source, resolved up front so a mode that cannot serve a task is a usage error."""
    from harness.audio.espeak import user_voice
    from harness.audio.speech_bank import SpeechSourceError, open_speech_source

    try:
        return {
            bundle.task_id: open_speech_source(
                bundle.task_dir, mode, voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id
            )
            for bundle in bundles
        }
    except SpeechSourceError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _public_url_or_exit(url: str, spec: ModelSpec, tool_mode: str, parallel: int) -> None:
    """``--mcp-public-url`` only where a provider's MCP client will use it, and only a usable URL."""
    problem = None
    parts = urlsplit(url)
    if tool_mode != "native":
        problem = "is for --tool-mode native (in bridge mode the provider never sees the endpoint)"
    elif _mcp_client(spec) != "provider":
        problem = f"is for a cloud provider's MCP client; {spec.key} calls the tools with its own client"
    elif parts.scheme not in ("http", "https") or not parts.hostname:
        problem = f"{url!r} is not an http(s) URL with a host"
    elif parallel != 1:
        problem = "needs --parallel 1: one public URL reaches one session's server at a time"
    if problem is not None:
        typer.echo(f"error: --mcp-public-url {problem}", err=True)
        raise typer.Exit(2)
    if parts.scheme == "http":
        typer.echo("warning: --mcp-public-url is plain http: the bearer token crosses the network in clear text",
                   err=True)


def _mcp_client(spec: ModelSpec) -> str:
    """Whose MCP client the model's adapter uses in native mode (``agent`` or ``provider``)."""
    module_name, _, class_name = spec.adapter.partition(":")
    return str(getattr(getattr(importlib.import_module(module_name), class_name), "mcp_client", "agent"))


def _external_or_exit(mcp_url: str, token_file: Path) -> SandboxBackend:
    """The running server behind ``--mcp-url``, checked before any session (one line each: a
    missing token file exits 2, a server that does not answer 1)."""
    try:
        backend = ExternalBackend.from_token_file(mcp_url, token_file)
    except OSError as exc:
        typer.echo(f"error: --token-file {token_file}: {exc.strerror or exc}", err=True)
        raise typer.Exit(2) from None
    try:
        run_interruptible(backend.check())
    except SandboxUnavailableError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    return backend


def _backend_or_exit(name: str, *, prepare: bool = True) -> SandboxBackend:
    try:
        backend = get_backend(name)
        if prepare:
            backend.prepare()  # e.g. build the docker image, with progress, before any session starts
        return backend
    except UnknownBackendError as exc:
        typer.echo(f"error: --sandbox: {exc}", err=True)
        raise typer.Exit(2) from None
    except SandboxUnavailableError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


async def _run_with_progress(
    settings: CampaignSettings, task_ids: list[str], runner: CellRunner, backend: SandboxBackend, *, quiet: bool,
    **campaign_options: Any,
) -> CampaignResult:
    cells = campaign_options.get("cells")
    total = len(cells) if cells is not None else len(set(task_ids)) * settings.repeats
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        if wants_plain_progress(sys.stdout, sys.stderr):  # a pipe or a CI log: a line per cell as it finishes
            plain = PlainProgress(total, sys.stderr)
            return await run_campaign(settings, task_ids, runner, on_cell=plain, on_start=plain.started,
                                      **campaign_options)
        with Progress(*columns, console=cli_console(stderr=True), transient=True, disable=quiet) as progress:
            bar = progress.add_task(f"{settings.model.key}", total=total)

            def advance(outcome: CellOutcome) -> None:
                progress.update(bar, advance=1, description=f"{settings.model.key}: {outcome.cell} {outcome.status}")

            return await run_campaign(settings, task_ids, runner, on_cell=advance, **campaign_options)
    finally:
        await backend.aclose()  # the warm spares it started for sessions that will not come


def _mark(flag: bool | None) -> str:
    return "–" if flag is None else ("[green]1[/]" if flag else "[red]0[/]")


_RESULT_HEADERS = ["task", "rep", "PTS", "GS", "PC", "RA", "WA", "AFA", "turns", "outcome"]


def _print_results(result: CampaignResult, *, full: bool = False) -> None:
    console = cli_console()
    rows = [_table_row(outcome) for outcome in result.outcomes]
    console.print(task_table(_RESULT_HEADERS, rows, console.width))
    for outcome in result.outcomes:
        for line in _failure_lines(outcome, result.settings.out_dir, full=full):
            console.print(line, highlight=False, soft_wrap=True, markup=False)
    console.print(result.summary(), highlight=False, soft_wrap=True)
    console.print(_denominator_line(result), highlight=False, soft_wrap=True, markup=False)
    console.print(_this_start_line(result), highlight=False, soft_wrap=True, markup=False)


def _this_start_line(result: CampaignResult) -> str:
    """What this start did: cells resumed from the directory, sessions run, records regraded."""
    counts = Counter(outcome.status for outcome in result.outcomes)
    ran = sum(counts[status] for status in ("ran", "infra_failed", "harness_error", "provider_error"))
    text = f"{result.settings.model.key}: resumed {counts['loaded'] + counts['regraded']}, ran {ran}"
    if counts["regraded"]:
        text += f", regraded {counts['regraded']}"
    if counts["stopped"]:
        text += f", not run {counts['stopped']}"
    return text


def _as_campaign(result: CampaignResult) -> Campaign:
    """This start's cells as ``results`` reads a campaign: its plan, its records and why cells are empty."""
    planned: dict[str, list[int]] = {}
    campaign = Campaign(key=result.settings.model.key, display_name=result.settings.model.display_name,
                        path=result.settings.out_dir)
    for outcome in result.outcomes:
        cell = outcome.cell
        planned.setdefault(cell.task_id, []).append(cell.rep)
        if outcome.record is not None:
            run = Run(cell.task_id, cell.rep, outcome.record, cell.rep_dir(result.settings.out_dir))
            campaign.runs.setdefault(cell.task_id, {})[cell.rep] = run
    campaign.manifest = {"planned_cells": planned,
                         "unscored_cells": [c.model_dump() for c in unscored_cells(result.outcomes)]}
    return campaign


def _denominator_line(result: CampaignResult) -> str:
    """This start's figure as ``apex-voice results`` counts it: every planned cell, unscored ones failing."""
    rel = reliability(_as_campaign(result), result.settings.repeats)
    pct = rel.pct(rel.pass1_mean)
    text = (f"{result.settings.model.key}: pass@1 {'–' if pct is None else f'{pct:.1f}'} % over {rel.n_planned} "
            f"planned cells ({rel.n_scored} scored)")
    if rel.complete:
        return f"{text}: complete"
    pending = sum(cell.reason == PENDING for cell in rel.unscored)
    scored_only = rel.scored_only_pass1_pct
    return (f"{text}: INCOMPLETE, {len(rel.unscored)} unscored counted as failures ({pending} pending the judge "
            f"until `apex-voice regrade`); scored cells only: pass@1 {'–' if scored_only is None else f'{scored_only:.1f}'} %")


#: The outcome column of a cell left without a record (it counts as a failure).
_EMPTY_LABELS = {"harness_error": "[red]HARNESS ERROR[/]", "stopped": "[yellow]NOT RUN[/]",
                 "provider_error": "[red]PROVIDER REFUSED[/]"}


def _table_row(outcome: CellOutcome) -> list[str]:
    cell, row = outcome.cell, outcome.record
    if row is None:
        label = _EMPTY_LABELS.get(outcome.status, "[yellow]INFRA ERROR[/]")
        return [cell.task_id, str(cell.rep), "[red]0[/]", "–", "–", "–", "–", "–", "–", label]
    gates = [_mark(row.components.get(gate)) for gate in ("GS", "PC", "RA", "WA")]
    afa = "–" if row.afa is None else f"{row.afa:.2f}"
    outcome_text = "[red]ERROR[/]" if row.error else (row.outcome or "")
    if row.agent_failure:
        outcome_text += f" (agent: {row.agent_failure.get('kind', '?')})"
    if row.pending:
        outcome_text = "[yellow]PENDING JUDGE[/]"
    return [cell.task_id, str(cell.rep), _mark(None if row.pending else row.pts == 1), *gates, afa,
            str(row.turns or 0), outcome_text]


def _failure_lines(outcome: CellOutcome, out_dir: Path, *, full: bool = False) -> list[str]:
    """A failed cell's explanation: its first lines, and where the rest are (``full``: all of it)."""
    cell: CampaignCell = outcome.cell
    row = outcome.record
    if row is None:
        if outcome.status == "stopped":
            return []
        last = outcome.error or (outcome.infra_errors[-1] if outcome.infra_errors else "no result")
        return [f"{cell}: left empty after {outcome.attempts} attempt(s): {last}"]
    if row.passed:
        return []
    lines = (row.explain if full else row.explain[:EXPLAIN_LINES]) or [row.error or f"{row.outcome} ({row.reason})"]
    more = len(row.explain) - len(lines) if row.explain else 0
    cut = [f"    … {more} more lines in {cell.rep_dir(out_dir) / RESULT_FILE} (-v shows them)"] if more > 0 else []
    return [f"{cell}: {lines[0]}", *(f"    {line}" for line in lines[1:]), *cut]
