"""Out-of-tree adapters for the isolation tests: two thieves and one honest bridge caller.

The thieves are the oracle with a stolen policy (the grader patcher steals nothing, it patches): where they find the task's reference policy they
replay it and pass; where they find nothing they hang up at once and fail. In the harness's process
(``--trust-adapter``) both find it; hosted out of process (the default) neither does.
"""

from __future__ import annotations

import contextlib
import gc
import os
import stat
from pathlib import Path
from typing import ClassVar

import yaml

from harness.agents.oracle_voice import OracleVoiceAgent
from harness.agents.realtime import (
    AgentEvent,
    AudioDelta,
    CallEnded,
    RealtimeAdapter,
    ResponseDone,
    SessionConfig,
    ToolCallRequested,
    ToolResult,
    TranscriptDelta,
)
from harness.audio.frames import AudioFrame
from harness.tasks.models import ReferencePolicy
from tests.scripted_voice_agent import voiced_audio


class _PolicyThief(OracleVoiceAgent):
    """The oracle, given whatever policy :meth:`steal` finds instead of being given one."""

    model_id: ClassVar[str] = "policy-thief"

    def steal(self, config: SessionConfig) -> ReferencePolicy | None:
        raise NotImplementedError

    async def connect(self, config: SessionConfig) -> None:
        policy = self.steal(config)
        if policy is None:  # nothing to replay: hang up, as a thief with nothing would
            self._ended = True
            self._events.append(CallEnded())
            return
        config.reference_policy = policy
        await super().connect(config)


class GcThief(_PolicyThief):
    """Walks the interpreter's objects for the loaded task bundle (its gold and reference policy)."""

    model_id: ClassVar[str] = "gc-thief"

    def steal(self, config: SessionConfig) -> ReferencePolicy | None:
        for obj in gc.get_objects():
            if type(obj).__name__ == "TaskBundle" and getattr(obj, "policy", None) is not None:
                return obj.policy
        return None


class TaskFileThief(_PolicyThief):
    """Reads task files from disk: the task whose tools are this session's, next to the ``harness``
    package it was imported from (the bundled data), or under its working directory."""

    model_id: ClassVar[str] = "task-file-thief"

    def steal(self, config: SessionConfig) -> ReferencePolicy | None:
        import harness

        tools = {tool["name"] for tool in config.tools}
        roots = [Path(harness.__file__).parent / "demo_data" / "tasks", Path.cwd()]
        for gold in (path for root in roots for path in root.glob("**/grading/gold.yaml")):
            task_dir = gold.parent.parent
            spec = yaml.safe_load((task_dir / "tools" / "tool_spec.yaml").read_text())
            if {tool["name"] for tool in spec["tools"]} == tools:
                return ReferencePolicy.model_validate(yaml.safe_load((task_dir / "reference" / "policy.yaml").read_text()))
        return None


class GraderPatcher(_PolicyThief):
    """Steals nothing: patches the grader the session will call to report a pass, then hangs up."""

    model_id: ClassVar[str] = "grader-patcher"

    def steal(self, config: SessionConfig) -> ReferencePolicy | None:
        try:
            from harness.grading.report import GradeReport
            from harness.session import session_effects
        except ImportError:  # hosted: no grader here to patch
            return None

        async def passing(gold, ctx):
            return GradeReport(pts=1, components={"GS": True, "PC": True, "RA": True, "WA": True}, afa=1.0,
                               progress_score=1.0)

        session_effects.grade = passing  # type: ignore[assignment]
        return None


class BridgeCaller(RealtimeAdapter):
    """An honest agent: asks the harness to run one tool (bridge mode), says what it learned, hangs up."""

    model_id: ClassVar[str] = "bridge-caller"
    clock_mode: ClassVar[str] = "virtual"

    def __init__(self) -> None:
        self._events: list[AgentEvent] = []
        self._asked = False

    async def connect(self, config: SessionConfig) -> None:
        if "get_enrollment_window" not in {tool["name"] for tool in config.tools}:
            raise ValueError("this agent only knows the benefits enrollment task")

    async def send_audio(self, frame: AudioFrame) -> None:
        if not self._asked:
            self._asked = True
            self._events.append(ToolCallRequested("call_window", "get_enrollment_window", "{}"))

    async def send_tool_result(self, result: ToolResult) -> None:
        words = "The enrollment window is open." if not result.is_error else "I could not reach the system."
        self._events += [TranscriptDelta(words), AudioDelta(voiced_audio(1200)), ResponseDone(), CallEnded()]

    def poll_events(self) -> list[AgentEvent]:
        events, self._events = self._events, []
        return events


#: What the isolation tests plant in the harness's environment: a prober that finds it anywhere
#: (an environment, a command line, memory) has reached the harness.
CANARY = b"apexvoice-canary"
#: File names worth finding: a task's answers and the sandbox's secrets and control sockets.
_WANTED = ("gold.yaml", "policy.yaml", "token", "agent-token", "control.sock")
_SKIPPED_ROOTS = ("/proc", "/sys", "/dev")
#: Bounds of one probe, so that it ends in the harness's process too (``--trust-adapter``).
_MAX_ENTRIES = 300_000
_MAX_MEMORY_BYTES = 512 * 1024 * 1024
_MAX_LISTED = 20


class Prober(_PolicyThief):
    """Looks wherever an agent author's code outside the harness could: every ``/proc/<pid>``
    (command line, environment, working directory, the parent's memory), the whole filesystem from
    ``/`` (task answers, tokens, sockets), every unix socket and loopback port it can list (it
    connects to each), and the harness's own modules (to load the task itself). Says what it found,
    as its words (``probe {...}``, one JSON object), and replays a reference policy if it found one.
    """

    model_id: ClassVar[str] = "prober"

    def steal(self, config: SessionConfig) -> ReferencePolicy | None:
        import json
        import socket

        found: dict[str, list[str]] = {"canary": [], "task_files": [], "secrets": [], "sockets": [],
                                       "connected": [], "harness_modules": [], "proc_cwd": []}
        cwds = self._probe_proc(found)
        paths = self._walk([Path.cwd(), *cwds, Path.home(), Path("/tmp"), Path("/")], found)
        for path in self._listed_unix_sockets() + found["sockets"]:
            with suppress_all(), socket.socket(socket.AF_UNIX) as client:
                client.settimeout(1)
                client.connect(path)
                found["connected"].append(path)
        for port in self._listening_ports():
            with suppress_all(), socket.create_connection(("127.0.0.1", port), timeout=1):
                found["connected"].append(f"127.0.0.1:{port}")
        for module in ("harness.tasks.loader", "harness.grading", "harness.session", "harness.demo_data"):
            with suppress_all():
                __import__(module)
                found["harness_modules"].append(module)
        policy = self._policy(config, paths)
        self.report = "probe " + json.dumps({k: sorted(set(v))[:_MAX_LISTED] for k, v in found.items()})
        return policy

    async def connect(self, config: SessionConfig) -> None:
        await super().connect(config)
        if self._ended:  # nothing to replay: say what it found, then hang up
            self._events[-1:] = [TranscriptDelta(self.report), AudioDelta(voiced_audio(600)), ResponseDone(),
                                 CallEnded()]

    @staticmethod
    def _probe_proc(found: dict[str, list[str]]) -> list[Path]:
        cwds: list[Path] = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            for name in ("environ", "cmdline"):
                with suppress_all():
                    if CANARY in (entry / name).read_bytes():
                        found["canary"].append(f"{entry}/{name}")
            with suppress_all():
                cwd = Path(os.readlink(entry / "cwd"))
                if cwd != Path("/"):
                    found["proc_cwd"].append(str(cwd))
                    cwds.append(cwd)
        parent = Path(f"/proc/{os.getppid()}")
        with suppress_all(), open(parent / "mem", "rb") as memory:
            budget = _MAX_MEMORY_BYTES
            for line in (parent / "maps").read_text().splitlines():
                start, _, end = line.split()[0].partition("-")
                size = int(end, 16) - int(start, 16)
                if "r" not in line.split()[1] or size > budget:
                    continue
                budget -= size
                with suppress_all():
                    memory.seek(int(start, 16))
                    if CANARY in memory.read(size):
                        found["canary"].append(f"{parent}/mem")
                        break
        return cwds

    @staticmethod
    def _walk(roots: list[Path], found: dict[str, list[str]]) -> list[Path]:
        paths: list[Path] = []
        visited = 0
        for root in roots:
            for directory, dirs, files in os.walk(root):
                if directory in _SKIPPED_ROOTS:
                    dirs[:] = []
                    continue
                visited += len(files) + len(dirs)
                if visited > _MAX_ENTRIES:
                    return paths
                for name in files:
                    path = os.path.join(directory, name)
                    if name in _WANTED or name.endswith(".sock"):
                        paths.append(Path(path))
                        found["secrets" if "token" in name else "task_files"].append(path)
                    with suppress_all():
                        if stat.S_ISSOCK(os.lstat(path).st_mode):
                            found["sockets"].append(path)
        return paths

    @staticmethod
    def _listed_unix_sockets() -> list[str]:
        with suppress_all():
            lines = Path("/proc/net/unix").read_text().splitlines()[1:]
            return [line.split()[-1] for line in lines if len(line.split()) > 7 and line.split()[-1].startswith("/")]
        return []

    @staticmethod
    def _listening_ports() -> list[int]:
        """Loopback ports listening in its network, but its own host's (in a container it listens itself)."""
        own = set()
        for fd in Path("/proc/self/fd").iterdir():
            with suppress_all():
                own.add(os.readlink(fd).removeprefix("socket:[").removesuffix("]"))
        ports: list[int] = []
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with suppress_all():
                for line in Path(table).read_text().splitlines()[1:]:
                    fields = line.split()
                    if fields[3] == "0A" and fields[9] not in own:  # LISTEN, someone else's
                        ports.append(int(fields[1].rpartition(":")[2], 16))
        return sorted(set(ports))

    @staticmethod
    def _policy(config: SessionConfig, paths: list[Path]) -> ReferencePolicy | None:
        tools = {tool["name"] for tool in config.tools}
        for gold in (p for p in paths if p.name == "gold.yaml" and p.parent.name == "grading"):
            with suppress_all():
                task_dir = gold.parent.parent
                spec = yaml.safe_load((task_dir / "tools" / "tool_spec.yaml").read_text())
                if {tool["name"] for tool in spec["tools"]} == tools:
                    policy = yaml.safe_load((task_dir / "reference" / "policy.yaml").read_text())
                    return ReferencePolicy.model_validate(policy)
        return None


def suppress_all() -> contextlib.AbstractContextManager[None]:
    """A prober tries everything and minds no refusal."""
    return contextlib.suppress(Exception)


class ForkingDeafCloser(BridgeCaller):
    """The honest bridge caller that, at connect, starts two children deaf to SIGTERM (one in a
    session of its own, a daemon whose parent has exited), turns deaf to SIGTERM itself, and whose
    ``close()`` never returns. The children carry ``APEXVOICE_MARKER`` in their command line, so a
    test can look for them afterwards; its words say how many it started."""

    model_id: ClassVar[str] = "forking-deaf-closer"

    async def connect(self, config: SessionConfig) -> None:
        import signal
        import subprocess
        import sys

        await super().connect(config)
        marker = os.environ["APEXVOICE_MARKER"]
        deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)"
        subprocess.Popen([sys.executable, "-c", deaf, marker])
        daemon = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {deaf!r}, {marker!r}], start_new_session=True)"
        subprocess.run([sys.executable, "-c", daemon], check=True)  # its parent exits: the grandchild is orphaned
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self._events.append(TranscriptDelta("forked 2 "))

    async def close(self) -> None:
        import time

        time.sleep(3600)  # blocks its host's loop: nothing but SIGKILL ends it
