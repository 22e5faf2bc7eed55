"""``apex-voice run``'s request, typed, and what it is turned into: settings, backend, judge,
observer, runner and executor, ready for :func:`~harness.campaign.campaign.run_campaign`.

:class:`CampaignRequest` holds the options that decide the campaign (not how it is shown: the
command keeps ``--json``, ``--tui``, ``--verbose``). :func:`prepare_campaign` checks them in the
order a user meets the problems — usage first, then the tasks, the model, the sandbox — and builds
the campaign; a refusal says ``error: ...`` on stderr and exits 2 (usage) or 1 (the environment:
a dead endpoint or server, no sandbox). No Typer command is needed to call it.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast
from urllib.parse import urlsplit

import typer
from pydantic import BaseModel, ConfigDict, Field

from harness.agents.adapter_process import AdapterLoadError, probe_adapter
from harness.agents.env_file import EnvFileError, load_env_file
from harness.agents.registry import PREFIXES, ModelSpec, UnknownModelError, get_model
from harness.audio.user_audio_mode import UserAudioMode
from harness.campaign.campaign import CampaignCell, CampaignSettings, CellExecutor, local_cells
from harness.campaign.hosted_agent import ADAPTER_HOST_IMAGE, probe_hosted_in_container
from harness.campaign.manifest import CampaignManifest
from harness.campaign.ray_executor import RAY_INSTALL_HINT, RayExecutor, ray_installed
from harness.campaign.sandboxed_cell import SandboxedCellRunner
from harness.campaign.text_cell import TEXT_FORMS, cell_runner_class, condition_problem
from harness.conditions import ConditionDef, UnknownConditionError, get_condition
from harness.grading.judge import CachedVerdicts, SemanticJudge
from harness.grading.judge_cache import JudgeCache
from harness.results.campaign_files import MANIFEST_FILE, CampaignConfigUsed
from harness.results.measurement_identity import TaskPin
from harness.results.regrade import pending_regrader
from harness.results.result_record import ResultRecord
from harness.session.session_config import ToolMode
from harness.tasks.bundle import TaskBundle
from harness.user.llm_act_observer import LlmActClassifier
from sandbox.adapter_jail import WAYS_FORWARD, jail_problem
from sandbox.agent_container_config import AgentContainerConfig
from sandbox.backend import SandboxBackend, get_backend
from sandbox.errors import AgentImageError, SandboxUnavailableError, UnknownBackendError
from sandbox.external import ExternalBackend

from .campaign_stops import CampaignStops
from .data_option import open_data
from .interrupts import run_interruptible
from .out_dir import writable_dir_or_exit
from .preflight import dead_endpoint_problem, missing_key_problem
from .valid_packages import CheckedPackage, valid_packages_or_exit

if TYPE_CHECKING:  # audio and numpy load only for a run that speaks
    from harness.audio.acoustics import AcousticChain
    from harness.audio.speech_bank import SpeechSource

__all__ = ["MAX_PARALLEL", "TOOL_MODES", "CampaignRequest", "PreparedCampaign", "prepare_campaign"]

#: ``--parallel`` above this is refused: each session runs its own sandbox and agent.
MAX_PARALLEL = 64
TOOL_MODES = ("bridge", "native")


class CampaignRequest(BaseModel):
    """The options of ``apex-voice run`` that decide what the campaign measures and where it runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = "oracle"
    data: Path | None = None
    only: list[str] = Field(default_factory=list)
    limit: int | None = Field(default=None, ge=1)
    retry_failed: bool = False
    allow_version_change: bool = False
    extend: bool = False
    skip_invalid: bool = False
    repeats: int | None = Field(default=None, ge=1)
    out: Path | None = None
    sandbox: str | None = None
    user_audio: UserAudioMode = UserAudioMode.AUTO
    parallel: int = Field(default=1, ge=1)
    max_turns: int = Field(default=44, ge=1)
    mcp_url: str | None = None
    token_file: Path | None = None
    condition: str = "C2"
    acoustics: str | None = None
    tool_mode: str | None = None
    mcp_public_url: str | None = None
    tool_latency_ms: int = Field(default=0, ge=0)
    endpoint: str | None = None
    provider_model: str | None = None
    api_key_env: str | None = None
    env_file: Path | None = None
    trust_adapter: bool = False
    adapter_env: list[str] = Field(default_factory=list)
    agent_memory: str | None = None
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    fail_fast: bool = False
    max_cost: float | None = Field(default=None, ge=0)


@dataclass
class PreparedCampaign:
    """Everything ``run_campaign`` takes, built from a :class:`CampaignRequest`."""

    settings: CampaignSettings
    task_ids: list[str]
    runner: SandboxedCellRunner
    #: Closed by whoever runs the campaign once it ends (its warm spares).
    backend: SandboxBackend
    #: ``run_campaign``'s keyword arguments: ``executor``, ``task_pins``, ``regrade`` (and ``cells``
    #: for ``--retry-failed``).
    options: dict[str, Any] = field(default_factory=dict)
    #: Task packages that failed validation and were skipped (``--skip-invalid``).
    invalid: list[CheckedPackage] = field(default_factory=list)
    #: Each task's time budget: the most media time a session of it lasts (``run --dry-run``'s bound).
    time_budget_s: dict[str, int] = field(default_factory=dict)


def _note(line: str) -> None:
    typer.echo(line, err=True)


def prepare_campaign(
    request: CampaignRequest, *, note: Callable[[str], None] = _note, dry_run: bool = False,
    config: CampaignConfigUsed | None = None,
) -> PreparedCampaign:
    """Check ``request`` and build its campaign; ``note`` hears the lines a user should read on the
    way (the sandbox chosen, a missing judge or observer, an in-process adapter's warning).

    ``dry_run`` checks the same but prepares nothing that a run would: no image built, no campaign
    directory created, no judge cache opened. ``config`` is recorded in ``campaign.json``."""
    r = request
    _executor_or_exit(r.executor, r.ray_address, r.mcp_url)
    _env_file_or_exit(r.env_file)
    _usage_or_exit(tool_mode=r.tool_mode, parallel=r.parallel, retry_failed=r.retry_failed, repeats=r.repeats)
    passed_env = _adapter_env_or_exit(r.adapter_env)
    definition = _condition_or_exit(r.condition)
    condition = definition.name  # as registered (`c0` is `C0`): every later use reads the one registration
    _endpoint_or_exit(r.endpoint)
    source, task_dirs = open_data(r.data, r.only or None)  # before the model: a hosted one must not hold a task
    task_dirs = task_dirs[:r.limit] if r.limit is not None else task_dirs
    spec = _model_or_exit(r.model, condition, endpoint=r.endpoint, provider_model=r.provider_model,
                          api_key_env=r.api_key_env, trust_adapter=r.trust_adapter, adapter_env=passed_env,
                          sandbox=r.sandbox, task_dirs=task_dirs)
    if passed_env and spec.hosted_adapter is None and not spec.container_only:
        typer.echo(f"error: --adapter-env is for an out-of-tree adapter (package.module:Class) or an agent image "
                   f"(container:IMAGE, twilio+container:IMAGE), not {spec.key!r}", err=True)
        raise typer.Exit(2)
    tool_mode = r.tool_mode or spec.tool_modes[0]
    if tool_mode not in spec.tool_modes:
        typer.echo(f"error: {spec.key} supports --tool-mode {', '.join(spec.tool_modes)}, not {tool_mode!r}", err=True)
        raise typer.Exit(2)
    if r.mcp_public_url is not None:
        _public_url_or_exit(r.mcp_public_url, spec, tool_mode, r.parallel)
    chain = _acoustics_or_exit(definition, r.acoustics)
    out_dir = r.out or Path("runs") / spec.key
    retry_cells = _retry_plan_or_exit(out_dir, task_dirs, source.root, selected=bool(r.only) or r.limit is not None) \
        if r.retry_failed else None
    if retry_cells is not None:
        task_dirs = [d for d in task_dirs if d.name in {c.task_id for c in retry_cells}]
    bundles, invalid = valid_packages_or_exit(task_dirs, source.checksums, skip_invalid=r.skip_invalid)
    speech = _speech_or_exit(r.user_audio.value, bundles)
    _reachable_or_exit(spec)
    backend = _sandbox_or_exit(r, spec, tasks=len(bundles), prepare=not dry_run)
    agent_limits = _agent_limits_or_exit(r.agent_memory, spec, backend)
    if not dry_run:  # the dry run's plan says it
        note(f"sandbox: {backend.name} ({backend.chosen_because})")
    if spec.agent_kind == "external_code":
        note(f"warning: {spec.key} runs in the harness's process (--trust-adapter): its code can read the loaded "
             "tasks' gold and reference policy, patch the grader and read task files, so its scores prove "
             "nothing (recorded as agent_isolation: in-process)")
    judge = SemanticJudge.from_env()
    if judge is None and not spec.deterministic:
        note("judge: none (set APEX_VOICE_LLM_API_KEY or OPENAI_API_KEY): semantic fields are graded "
             "deterministically only, so a correct value in other words fails")
    observer = LlmActClassifier.from_env()
    if observer is None and not spec.deterministic:
        note("observer: deterministic only (set APEX_VOICE_LLM_API_KEY or OPENAI_API_KEY): the simulated user "
             "hears only the task's patterns, so a model that phrases a question its own way may go unheard "
             "and scores are not comparable with the published ones")
    runner = cell_runner_class(condition)(
        model=spec, backend=backend, task_dirs={b.task_id: b.task_dir for b in bundles},
        speech=lambda bundle: speech[bundle.task_id], judge=judge, max_turns=r.max_turns,
        checksums=source.checksums, condition=condition, acoustics=chain, tool_latency_ms=r.tool_latency_ms,
        observer=observer, tool_mode=cast(ToolMode, tool_mode),  # one of TOOL_MODES: checked by _usage_or_exit
        adapter_env=passed_env, mcp_public_url=r.mcp_public_url, agent_limits=agent_limits,
    )
    settings = CampaignSettings(
        model=spec,
        out_dir=out_dir if dry_run else writable_dir_or_exit(out_dir, what="the campaign directory"),
        repeats=(max(c.rep for c in retry_cells) + 1 if retry_cells else r.repeats or (1 if spec.deterministic else 3)),
        identity=runner.identity(user_audio=r.user_audio.value),
        sandbox=backend.name, parallel=r.parallel, extend=r.extend, allow_version_change=r.allow_version_change,
        config=config,
    )
    options: dict[str, Any] = {
        "task_pins": {b.task_id: TaskPin.of(b.task_dir, b.task.version, source.checksums) for b in bundles},
    }
    if not dry_run:
        golds = {b.task_id: b.gold for b in bundles}
        executor: CellExecutor = RayExecutor(r.ray_address) if r.executor == "ray" else local_cells
        options["executor"] = executor
        options["regrade"] = pending_regrader(golds.get, judge or CachedVerdicts(JudgeCache()))
    if retry_cells is not None:
        options["cells"] = retry_cells
    if r.fail_fast or r.max_cost is not None:
        options["stop_when"] = CampaignStops(fail_fast=r.fail_fast, max_cost=r.max_cost)
    return PreparedCampaign(settings, [b.task_id for b in bundles], runner, backend, options, invalid,
                            {b.task_id: b.task.time_budget_s for b in bundles})


def _sandbox_or_exit(r: CampaignRequest, spec: ModelSpec, *, tasks: int, prepare: bool = True) -> SandboxBackend:
    """The running server of ``--mcp-url``, or the backend ``--sandbox`` names (prepared here for
    the local executor; Ray's nodes each prepare their own: their engine builds or checks the images).
    ``prepare=False`` (a dry run): chosen, never prepared, no agent image built."""
    if r.mcp_url is not None:
        if r.sandbox is not None:
            typer.echo("error: --sandbox and --mcp-url exclude each other (--mcp-url uses a running server)", err=True)
            raise typer.Exit(2)
        if r.token_file is None or tasks != 1 or (r.repeats or 1) != 1:
            typer.echo("error: --mcp-url needs --token-file, exactly one task (--only) and one repetition", err=True)
            raise typer.Exit(2)
        return _external_or_exit(r.mcp_url, r.token_file)
    if prepare and r.executor == "local" and (r.sandbox or "auto") in ("auto", "docker"):
        _agent_image_or_exit(spec)
    return _backend_or_exit(r.sandbox or "auto", prepare=prepare and r.executor == "local")


def _executor_or_exit(executor: Literal["local", "ray"], ray_address: str | None, mcp_url: str | None) -> None:
    """``--executor ray`` needs Ray installed and a sandbox each node can start (not ``--mcp-url``)."""
    problem = None
    if executor == "local":
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


#: ``--agent-memory``: a size as Docker takes it (bytes, or k, m, g).
_MEMORY_SIZE = re.compile(r"(\d+)([kmg]?)", re.IGNORECASE)
_MEMORY_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}
#: The least ``--agent-memory`` takes: the container's ``/tmp`` tmpfs alone may hold 64 MiB of it.
MIN_AGENT_MEMORY = 128 * 2**20


def _agent_limits_or_exit(size: str | None, spec: ModelSpec, backend: SandboxBackend) -> AgentContainerConfig | None:
    """``--agent-memory SIZE``: the agent containers' limits, for a model that runs in one here."""
    if size is None:
        return None
    match = _MEMORY_SIZE.fullmatch(size.strip())
    problem = None
    if match is None:
        problem = f"{size!r} is not a size (e.g. 768m, 2g)"
    elif int(match[1]) * _MEMORY_UNITS[match[2].lower()] < MIN_AGENT_MEMORY:
        problem = f"{size}: at least 128m (the container's /tmp alone may hold 64m)"
    image = ADAPTER_HOST_IMAGE if spec.hosted_adapter is not None else spec.agent_image
    if problem is None and (image is None or not backend.runs_agent_containers):
        problem = (f"applies to an agent run in a container under --sandbox docker (container:IMAGE, "
                   f"twilio+container:IMAGE, native-oracle, a hosted adapter); {spec.key} runs "
                   f"{'in the ' + backend.name + ' sandbox' if image is not None else 'outside any container'}")
    if problem is not None:
        typer.echo(f"error: --agent-memory {problem}", err=True)
        raise typer.Exit(2)
    assert image is not None
    return AgentContainerConfig(image=image, mem_limit=size.strip().lower())


def _adapter_env_or_exit(names: list[str]) -> dict[str, str]:
    """``--adapter-env NAME``: the named variables, each of which must be set."""
    missing = [name for name in names if name not in os.environ]
    if missing:
        typer.echo(f"error: --adapter-env {missing[0]} is not set", err=True)
        raise typer.Exit(2)
    return {name: os.environ[name] for name in names}


def _model_or_exit(
    key: str, condition: str, *, endpoint: str | None, provider_model: str | None, api_key_env: str | None,
    trust_adapter: bool = False, adapter_env: dict[str, str] | None = None, sandbox: str | None = None,
    task_dirs: Sequence[Path] = (),
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
        spec = _hosted_or_exit(spec, endpoint=endpoint, provider_model=provider_model, adapter_env=adapter_env or {},
                               sandbox=sandbox, task_dirs=task_dirs)
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
    if spec.container_only:  # its client is made per session, for its container's address
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
    spec: ModelSpec, *, endpoint: str | None, provider_model: str | None, adapter_env: dict[str, str],
    sandbox: str | None = None, task_dirs: Sequence[Path] = (),
) -> ModelSpec:
    """A hosted adapter, loaded once as its sessions will load it: in the OS sandbox, or, where none
    can be made, in the adapter-host container of ``--sandbox docker`` (never on the host). Exit 2
    when it does not load, when its package holds one of ``task_dirs``, when it would run without
    Docker where no OS sandbox can be made, or when Docker cannot run its container."""
    assert spec.hosted_adapter is not None
    if endpoint is not None or provider_model is not None:
        typer.echo("error: --endpoint and --provider-model are options of in-process adapters; a hosted adapter "
                   "takes no constructor arguments (or use --trust-adapter)", err=True)
        raise typer.Exit(2)
    problem = jail_problem()
    if problem is not None and sandbox != "docker":
        typer.echo(f"error: the adapter {spec.key!r} cannot be sandboxed on this machine: {problem}. "
                   f"Either {WAYS_FORWARD}", err=True)
        raise typer.Exit(2)
    try:
        if problem is None:
            hosted = probe_adapter(spec.hosted_adapter, env=adapter_env, task_dirs=task_dirs)
        else:
            hosted = probe_hosted_in_container(spec.hosted_adapter, task_dirs=task_dirs, environment=adapter_env)
    except (AdapterLoadError, SandboxUnavailableError) as exc:
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
