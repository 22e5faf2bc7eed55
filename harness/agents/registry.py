"""Which agents ``apex-voice run --model KEY`` can evaluate, and how to construct them.

Each entry names its adapter as ``"module:Class"`` and is imported only when used, so a provider's
SDK is needed only to run that provider. Credentials are checked by name before a campaign starts
(any one of ``required_env`` suffices) and never read here.

``chat:MODEL`` and ``cascade:MODEL`` name any chat-completions model as a C0 text agent or as the
brain of the cascade voice agent. Beyond the built-in entries, ``--model package.module:Class``
names an adapter that lives outside this repository, and installed packages can register entries
under the ``apex_voice.agents`` entry-point group (the entry point names a :class:`ModelSpec` or an
adapter class).

Out-of-tree code is untrusted, and :func:`get_model` does not import it: by default the spec it
returns says which code to host (``hosted_adapter``), and the campaign runs that adapter out of the
harness's process, behind the OpenAI Realtime protocol (:mod:`harness.agents.realtime_server`),
in an agent container with ``--sandbox docker`` and in a bubblewrap-sandboxed child process otherwise
(:mod:`harness.agents.adapter_process`); the class is loaded and checked there. Only
``trust_adapter=True`` (``run --trust-adapter``) imports it here, into the harness, where it
shares the harness's memory and files: the loaded task bundle with its gold and reference policy,
the grader's code, every task file on disk. Not being ``privileged`` (only built-in entries are:
they are sent the reference policy) keeps the policy out of what such an adapter is *given*, not
out of its reach (docs/security.md).

A key with a known prefix is built by that prefix's factory: a URL (``ws://``, ``wss://``) is any
OpenAI-Realtime-compatible server (pipecat, LiveKit, a local model server), run through the OpenAI
adapter at that URL with no key; ``twilio+ws://`` (``twilio+wss://``) is a telephony bot reached
as Twilio Media Streams reaches it (:mod:`harness.agents.media_stream`, docs/telephony.md);
``container:IMAGE`` is any image serving that protocol on port
8765, run per session in its own hardened container on the session's network (``--sandbox
docker``; never privileged; native tool mode; docs/agent-containers.md), and
``twilio+container:IMAGE`` an image serving Twilio Media Streams there instead (at
``/media-stream``: a telephony bot packaged as an image; docs/telephony.md). An entry with an
``agent_image`` (the native oracle) runs in that image's container under ``--sandbox docker`` and
in-process otherwise.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from typing import Any, Literal

from harness.blame.codes import AgentKind
from .agent_text import safe_text
from .realtime import REALTIME_PATH, RealtimeAdapter

__all__ = ["CONTAINER_ADAPTER", "MODELS", "OPENAI_REALTIME_WIRE", "PREFIXES", "TWILIO_WIRE", "ContainerWire", "ModelFamily",
           "ModelSpec", "UnknownModelError", "get_model"]

CONTAINER_ADAPTER = "harness.agents.container_agent:ContainerAgentAdapter"


@dataclass(frozen=True)
class ContainerWire:
    """How the harness speaks to an agent in its container: the client adapter (``"module:Class"``,
    built with ``endpoint=``) and the websocket path the image serves on port 8765."""

    client: str
    path: str

    def connect(self, url: str) -> RealtimeAdapter:
        """A fresh client of the container (or adapter host) serving this wire at ``url``."""
        module_name, _, class_name = self.client.partition(":")
        adapter: RealtimeAdapter = getattr(importlib.import_module(module_name), class_name)(endpoint=url)
        return adapter


OPENAI_REALTIME_WIRE = ContainerWire(CONTAINER_ADAPTER, REALTIME_PATH)
TWILIO_WIRE = ContainerWire("harness.agents.media_stream:TwilioMediaStreamAdapter", "/media-stream")
#: The native oracle's image (``sandbox/image_build.py`` builds it as ``native-oracle``).
NATIVE_ORACLE_IMAGE = "apex-voice/native-oracle:latest"


class UnknownModelError(KeyError):
    """No registered model has this key; the message lists the known ones."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class ModelSpec:
    key: str
    display_name: str
    provider: str
    #: ``"module:Class"`` of a :class:`RealtimeAdapter` constructed with no arguments.
    adapter: str
    #: Environment variables of which at least one must be set (empty: no credentials needed).
    required_env: tuple[str, ...] = ()
    clock: Literal["virtual", "realtime"] = "realtime"
    notes: str = ""
    #: Receives the task's reference policy (the oracle). Recorded in every ``result.json``.
    privileged: bool = False
    #: The model id requested from the provider (shown by ``apex-voice models``; ``""`` for ours).
    provider_model: str = ""
    #: How it reaches the task's tools: ``bridge`` (function calls the harness executes) and/or
    #: ``native`` (its own MCP client on the task's endpoint); the first is the default.
    tool_modes: tuple[str, ...] = ("bridge",)
    #: ``text``: a C0 text agent (``TextAgent``), not a realtime adapter.
    interface: Literal["realtime", "text"] = "realtime"
    #: Sessions of this provider a campaign may run at once (its rate limits), beside ``--parallel``.
    max_concurrent_sessions: int | None = None
    #: Keyword arguments for the adapter's constructor (endpoint, provider model, ...).
    options: dict[str, Any] = field(default_factory=dict)
    #: An image serving the OpenAI Realtime protocol on port 8765: with a docker sandbox the agent
    #: runs there, one container per session (``sandbox.agent_container``), reached through
    #: :class:`~harness.agents.container_agent.ContainerAgentAdapter` (``container_wire``).
    agent_image: str | None = None
    #: What the image serves, for ``agent_image``: OpenAI Realtime, or Twilio Media Streams.
    container_wire: ContainerWire = OPENAI_REALTIME_WIRE
    #: Whose code runs and who is behind it, which decides blame at the agent boundary
    #: (``harness.blame.origin_table``): ``builtin`` — the harness's own agent (its failures are our bugs);
    #: ``provider`` — our adapter for a provider's API (its transient failures are retried a bounded
    #: number of times, a refusal of our credentials stops the campaign); ``remote_agent`` — our
    #: client, an agent author's server or image behind it (``ws://``, ``container:``, an isolated
    #: adapter); ``external_code`` — an agent author's adapter code in this process. For the last
    #: two, everything that crosses the boundary is the agent's failure, scored.
    agent_kind: AgentKind = "external_code"
    #: An out-of-tree adapter (``"module:Class"`` or an entry point) the campaign hosts out of its
    #: process (``remote_agent``); ``adapter`` is then the client that reaches it. ``None``: none.
    hosted_adapter: str | None = None

    @property
    def container_only(self) -> bool:
        """The agent exists only as its image (``container:IMAGE``, ``twilio+container:IMAGE``): it
        needs a docker sandbox (its adapter is the client of its container, nothing in process)."""
        return self.agent_image is not None and self.adapter == self.container_wire.client

    @property
    def deterministic(self) -> bool:
        """A virtual-clock agent: every repetition of a task is identical."""
        return self.clock == "virtual"

    def missing_credentials(self) -> tuple[str, ...]:
        """The accepted variables when none of them is set, else ``()``."""
        if not self.required_env or any(os.environ.get(name, "").strip() for name in self.required_env):
            return ()
        return self.required_env

    def with_options(self, **options: Any) -> ModelSpec:
        """This spec with adapter options set (``None`` values are left out), e.g. ``--endpoint``."""
        given = {k: v for k, v in options.items() if v is not None}
        if "model" in given:
            return replace(self, options={**self.options, **given}, provider_model=given["model"])
        return replace(self, options={**self.options, **given})

    def create_adapter(self) -> RealtimeAdapter:
        """A fresh adapter (one per session attempt); constructors do no I/O."""
        module_name, _, class_name = self.adapter.partition(":")
        adapter_class = getattr(importlib.import_module(module_name), class_name)
        return adapter_class(**self.options)


MODELS: dict[str, ModelSpec] = {
    spec.key: spec
    for spec in (
        ModelSpec(
            key="oracle",
            display_name="Oracle (reference policy)",
            provider="apex-voice",
            adapter="harness.agents.oracle_voice:OracleVoiceAgent",
            clock="virtual",
            notes="speaks the task's reference policy; reaches PTS 1 on every valid task",
            privileged=True,
            agent_kind="builtin",
        ),
        ModelSpec(
            key="native-oracle",
            display_name="Native-MCP oracle (reference policy, its own MCP client)",
            provider="apex-voice",
            adapter="harness.agents.native_oracle:NativeOracleAgent",
            clock="virtual",
            notes="calls the task's tools itself over MCP; its calls are observed at the server; "
            f"with --sandbox docker it runs in its own container ({NATIVE_ORACLE_IMAGE}), on the "
            "realtime clock there (a session lasts its media time, 2-5 min on the demo tasks)",
            privileged=True,
            tool_modes=("native",),
            agent_image=NATIVE_ORACLE_IMAGE,
            agent_kind="builtin",
        ),
        ModelSpec(
            key="noop",
            display_name="No-op (silent)",
            provider="apex-voice",
            adapter="harness.agents.noop_voice:NoOpVoiceAgent",
            clock="virtual",
            notes="never speaks nor calls a tool; must score 0",
            agent_kind="builtin",
        ),
        ModelSpec(
            key="gpt-realtime",
            display_name="GPT-realtime-2.1",
            provider="OpenAI",
            adapter="harness.agents.providers.openai_realtime:OpenAIRealtimeAdapter",
            required_env=("OPENAI_API_KEY",),
            provider_model="gpt-realtime-2.1",
            max_concurrent_sessions=8,
            agent_kind="provider",
            notes="GA Realtime; endpoint OPENAI_REALTIME_URL or --endpoint",
            tool_modes=("bridge", "native"),
        ),
        ModelSpec(
            key="grok-voice",
            display_name="Grok-Voice-Think-2.0",
            provider="xAI",
            adapter="harness.agents.providers.grok_voice:GrokVoiceAdapter",
            required_env=("XAI_API_KEY",),
            provider_model="grok-voice-think-fast-2.0",
            max_concurrent_sessions=4,
            agent_kind="provider",
            notes="OpenAI event names, xAI session shape; endpoint XAI_REALTIME_URL or --endpoint",
            tool_modes=("bridge", "native"),
        ),
        ModelSpec(
            key="step-audio3",
            display_name="Step-Audio3",
            provider="StepFun",
            adapter="harness.agents.providers.step_audio:StepAudioAdapter",
            required_env=("STEPFUN_API_KEY",),
            provider_model="stepaudio-3-realtime-preview",
            max_concurrent_sessions=2,
            agent_kind="provider",
            notes="OpenAI beta dialect; 30-minute sessions; endpoint STEPFUN_REALTIME_URL or --endpoint",
        ),
        ModelSpec(
            key="gemini-live",
            display_name="Gemini-3.8-Live",
            provider="Google",
            adapter="harness.agents.providers.gemini_live:GeminiLiveAdapter",
            required_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            provider_model="gemini-3.8-live",
            max_concurrent_sessions=3,
            agent_kind="provider",
            notes="16 kHz in, 24 kHz out; resumes sessions on goAway/1011; endpoint GEMINI_LIVE_URL or --endpoint",
        ),
        ModelSpec(
            key="gpt-live-1",
            display_name="GPT-live-1",
            provider="OpenAI",
            adapter="harness.agents.providers.gpt_live:GptLiveAdapter",
            required_env=("OPENAI_API_KEY",),
            provider_model="gpt-live-1",
            max_concurrent_sessions=4,
            agent_kind="provider",
            notes="voice front-end; the task is delegated to a Responses backend (APEX_GPTLIVE_BACKEND, default gpt-4o) "
            "whose calls go through the harness's tool bridge (native: the backend's own MCP client); "
            "endpoint OPENAI_LIVE_URL or --endpoint",
            tool_modes=("bridge", "native"),
        ),
    )
}


def _openai_compatible(url: str) -> ModelSpec:
    """Any server speaking the OpenAI Realtime protocol at ``url`` (no key, no model query)."""
    return ModelSpec(
        key=url,
        display_name=f"OpenAI-Realtime-compatible agent at {url}",
        provider="OpenAI-compatible",
        adapter="harness.agents.providers.openai_realtime:OpenAICompatibleAdapter",
        options={"endpoint": url, "model": "", "require_key": False},
        tool_modes=("bridge", "native"),
        agent_kind="remote_agent",
    )


def _container_image(key: str) -> ModelSpec:
    """``container:IMAGE``: an agent image run in its own container per session (never privileged)."""
    image = key.partition(":")[2]
    if not image:
        raise UnknownModelError("container:IMAGE needs an image name, e.g. container:my-agent:latest")
    return ModelSpec(
        key=key,
        display_name=f"agent container {image}",
        provider="agent image",
        adapter=CONTAINER_ADAPTER,
        tool_modes=("native",),
        agent_image=image,
        agent_kind="remote_agent",
        notes="an OpenAI-Realtime server on port 8765 in its own container (--sandbox docker)",
    )


def _media_stream_image(key: str) -> ModelSpec:
    """``twilio+container:IMAGE``: a telephony bot packaged as an image, run per session in its own
    container like ``container:IMAGE`` and reached as Twilio Media Streams reaches a bot."""
    image = key.partition(":")[2]
    if not image:
        raise UnknownModelError("twilio+container:IMAGE needs an image name, e.g. twilio+container:my-bot:latest")
    return ModelSpec(
        key=key,
        display_name=f"media-stream bot container {image}",
        provider="agent image",
        adapter=TWILIO_WIRE.client,
        tool_modes=("native",),
        agent_image=image,
        container_wire=TWILIO_WIRE,
        agent_kind="remote_agent",
        notes=f"Twilio Media Streams on port 8765 at {TWILIO_WIRE.path}, in its own container (--sandbox docker)",
    )


def _media_stream(key: str) -> ModelSpec:
    """``twilio+ws://HOST:PORT/PATH``: a telephony bot reached as Twilio Media Streams reaches it
    (the harness plays the phone network; the bot calls the task's tools itself; docs/telephony.md)."""
    from .media_stream import websocket_url

    return ModelSpec(
        key=key,
        display_name=f"Twilio media-stream bot at {websocket_url(key)}",
        provider="media-stream bot",
        adapter="harness.agents.media_stream:TwilioMediaStreamAdapter",
        options={"endpoint": websocket_url(key)},
        tool_modes=("native",),
        agent_kind="remote_agent",
        notes="8 kHz mu-law over Twilio Media Streams; MCP endpoint in the start message's customParameters",
    )


#: Key prefix → the spec it builds from the whole key.
PREFIX_FACTORIES: dict[str, Callable[[str], ModelSpec]] = {
    "ws://": _openai_compatible,
    "wss://": _openai_compatible,
    "twilio+ws://": _media_stream,
    "twilio+wss://": _media_stream,
    "twilio+container:": _media_stream_image,
    "container:": _container_image,
}


ENTRY_POINT_GROUP = "apex_voice.agents"


@dataclass(frozen=True)
class ModelFamily:
    """``--model PREFIX:NAME``: one adapter for any model NAME of an API (the name is its argument)."""

    label: str
    provider: str
    adapter: str
    interface: Literal["realtime", "text"]
    notes: str

    def spec(self, prefix: str, name: str) -> ModelSpec:
        return ModelSpec(
            key=f"{prefix}:{name}",
            display_name=f"{name} ({self.label})",
            provider=self.provider,
            adapter=self.adapter,
            interface=self.interface,
            options={"model": name},
            notes=self.notes,
            agent_kind="provider",
        )


#: Model families by prefix; ``--endpoint``/``--api-key-env`` become their adapters' options.
PREFIXES: dict[str, ModelFamily] = {
    "chat": ModelFamily(
        "chat completions, text", "openai-compatible", "harness.agents.chat_agent:ChatTextAgent", "text",
        "condition C0; --endpoint URL, key from --api-key-env (default OPENAI_API_KEY)",
    ),
    "cascade": ModelFamily(
        "cascade: VAD, ASR, chat LLM, hibari", "apex-voice cascade", "harness.agents.cascade:CascadeAgent", "realtime",
        "local VAD, ASR and TTS around a chat-completions LLM (--endpoint URL)",
    ),
}


def get_model(key: str, *, trust_adapter: bool = False) -> ModelSpec:
    """The model ``key``: built in, an installed entry point, or ``module:Class``.

    An out-of-tree key is imported only with ``trust_adapter`` (an ``external_code`` spec, run in
    this process); otherwise nothing of it is imported and the spec hosts it elsewhere
    (``hosted_adapter``; whether it loads is checked there: ``adapter_process.probe_adapter``).

    Raises:
        UnknownModelError: none of these names it (the message lists the known keys), or, trusted,
            its code does not load.
    """
    if key in MODELS:
        return MODELS[key]
    prefix, _, name = key.partition(":")
    if prefix in PREFIXES and name:
        return PREFIXES[prefix].spec(prefix, name)
    for prefix, factory in PREFIX_FACTORIES.items():
        if key.startswith(prefix):
            return factory(key)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name == key:
            provider = point.dist.name if point.dist else "entry point"
            if not trust_adapter:
                return _hosted(key, key, provider=provider)
            return _spec_from_object(key, _load(key, point.load), provider=provider)
    if ":" in key and "://" not in key:
        if not trust_adapter:
            return _hosted(key, key, provider="external")
        module_name, _, class_name = key.partition(":")
        target = _load(key, lambda: getattr(importlib.import_module(module_name), class_name))
        return _spec_from_object(key, target, provider="external")
    installed = [p.name for p in entry_points(group=ENTRY_POINT_GROUP)]
    raise UnknownModelError(
        f"unknown model {key!r}; known models: {', '.join([*MODELS, *installed])} "
        f"(or {', '.join(f'{p}:MODEL' for p in PREFIXES)}, an adapter as package.module:Class, "
        "an OpenAI-Realtime server as ws://HOST:PORT/PATH, a telephony bot as twilio+ws://HOST:PORT/PATH, "
        "or an agent image as container:IMAGE (twilio+container:IMAGE for a telephony bot's))"
    )


def _load(key: str, load: Callable[[], object]) -> object:
    """Import an agent author's code: anything it raises (a ``SyntaxError``, its own exceptions at
    import time) is one clear error naming the key."""
    try:
        return load()
    except Exception as exc:
        raise UnknownModelError(f"cannot load adapter {key!r}: {type(exc).__name__}: {exc}") from None


def _hosted(key: str, target: str, *, provider: str) -> ModelSpec:
    """An out-of-tree adapter run out of process, reached through the container agent's client.

    Its name, tool modes and whether it loads at all are learned from the host (``--check``);
    until then it is named by its key and may be asked for either tool mode.
    """
    return ModelSpec(
        key=key,
        display_name=key,
        provider=provider,
        adapter=CONTAINER_ADAPTER,
        hosted_adapter=target,
        tool_modes=("bridge", "native"),
        agent_kind="remote_agent",
        notes="an out-of-tree adapter, hosted out of process behind the OpenAI Realtime protocol",
    )


def _spec_from_object(key: str, target: object, *, provider: str) -> ModelSpec:
    """A spec for an out-of-tree entry: a ModelSpec as given (never privileged), or an adapter class."""
    if isinstance(target, ModelSpec):
        # Never privileged, and never trusted as ours: its code is the agent author's (its text too).
        fields: dict[str, Any] = {name: safe_text(value) if type(value) is str else value
                                  for name, value in target.__dict__.items()}
        return ModelSpec(**{**fields, "key": key, "privileged": False, "agent_kind": "external_code"})
    if isinstance(target, type) and issubclass(target, RealtimeAdapter):
        return ModelSpec(
            key=key,
            display_name=safe_text(str(getattr(target, "model_id", target.__name__))),
            provider=provider,
            adapter=f"{target.__module__}:{target.__qualname__}",
            clock=getattr(target, "clock_mode", "realtime"),
        )
    raise UnknownModelError(f"{key!r} is neither a RealtimeAdapter subclass nor a ModelSpec")
