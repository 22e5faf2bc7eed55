"""Build apex-voice's images on a machine with a Docker engine but no registry.

Steps: a base image with python3 (local, pulled, or made from Debian packages), a host-built
wheelhouse per requirement set, then one offline `docker build` per image with a generated context.
Each image carries a content-hash label; an image whose hash already exists is not rebuilt, so a
second call costs a few engine queries and file hashes.

The Docker SDK is used rather than the CLI: structured build output and errors, label queries
without parsing text, no dependency on a `docker` binary, and the sandbox backends share it.
"""

from __future__ import annotations

import fcntl
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import docker
import docker.errors
from docker.models.images import Image

from sandbox.base_image import DEFAULT_BASE_IMAGE, BaseImage, ensure_base_image, probe_python
from sandbox.build_context import BuildContext
from sandbox.project_sources import ProjectSources, SourceSnapshot
from sandbox.wheelhouse import Wheelhouse, host_python, require_same_python

__all__ = [
    "ADAPTER_HOST_SOURCES",
    "AGENT_RUNTIME_REQUIREMENTS",
    "IMAGE_SPECS",
    "LABEL_BUILD_HASH",
    "LABEL_SOURCE_HASH",
    "BuildSummary",
    "ImageBuildError",
    "ImageResult",
    "ImageSpec",
    "build_images",
    "build_lock",
    "connect_docker",
    "report_to_stderr",
]

REPOSITORY_PREFIX = "apex-voice/"
LABEL_BUILD_HASH = "org.apex-voice.build-hash"
#: Digest of the project sources an image ships (mcp-server: ``mcp_servers``), so a backend can tell
#: whether the image runs the code of this checkout (``sandbox.project_sources.package_digest``).
LABEL_SOURCE_HASH = "org.apex-voice.source-hash"
LABEL_IMAGE_NAME = "org.apex-voice.image"  # set in each Dockerfile, in a cached layer
TAG_LENGTH = 12
BUILD_TIMEOUT_SECONDS = 1800
BUILD_NOISE = ("--->", "Removing intermediate container")  # legacy-builder chatter, not progress
DEFAULT_PROJECT_ROOT = Path(__file__).resolve().parents[1]


class ImageBuildError(RuntimeError):
    """`docker build` of one image failed; the message carries the engine's error line."""


@dataclass(frozen=True)
class ImageSpec:
    """What goes into one image: its Dockerfile, its dependencies and the sources it ships."""

    name: str
    dockerfile: str
    requirement_names: tuple[str, ...] | None  # None: every runtime dependency of the project
    source_packages: tuple[str, ...]  # shipped as source under src/ in the build context
    installs_project: bool  # the project wheel is built and put under project/ in the build context

    @property
    def repository(self) -> str:
        return REPOSITORY_PREFIX + self.name


#: What hosts an agent adapter behind the realtime protocol (``harness.agents.realtime_server``):
#: the agent images ship these sources, and a hosted adapter's child process imports a copy of them.
ADAPTER_HOST_SOURCES = (
    # The blame types and codes the adapters raise and report (``harness/blame``, without the table,
    # which is the session's and the campaign's); no session code.
    "harness/__init__.py", "harness/atomic_write.py", "harness/blame/__init__.py", "harness/blame/codes.py",
    "harness/blame/errors.py", "harness/agents", "harness/audio",
    "harness/tasks/__init__.py", "harness/tasks/models.py",
    "mcp_servers/__init__.py", "mcp_servers/public_models.py",
)
AGENT_RUNTIME_REQUIREMENTS = (
    "mcp", "httpx", "sniffio", "websockets", "pydantic", "pyyaml", "numpy", "scipy",
    "webrtcvad-wheels", "espeakng-loader", "hibari-tts",
)

IMAGE_SPECS: dict[str, ImageSpec] = {
    spec.name: spec
    for spec in (
        ImageSpec(
            name="mcp-server",
            dockerfile="images/Dockerfile.mcp-server",
            requirement_names=("mcp", "uvicorn", "starlette", "pydantic", "pyyaml", "jsonschema"),
            source_packages=("mcp_servers",),
            installs_project=False,
        ),
        # The agent runtime: the harness's agent code (no task data: demo_data and every task's
        # reference stay out; a privileged agent gets its task's policy over the wire, per session).
        ImageSpec(
            name="native-oracle",
            dockerfile="images/Dockerfile.native-oracle",
            requirement_names=AGENT_RUNTIME_REQUIREMENTS,
            source_packages=ADAPTER_HOST_SOURCES,
            installs_project=False,
        ),
        # The same runtime hosting an out-of-tree adapter (``--model module:Class``), whose package
        # is mounted read-only per session: no task data, no grader, no agent of its own.
        ImageSpec(
            name="adapter-host",
            dockerfile="images/Dockerfile.adapter-host",
            requirement_names=AGENT_RUNTIME_REQUIREMENTS,
            source_packages=ADAPTER_HOST_SOURCES,
            installs_project=False,
        ),
        ImageSpec(
            name="harness",
            dockerfile="images/Dockerfile.harness",
            requirement_names=None,
            source_packages=(),
            installs_project=True,
        ),
    )
}


@dataclass(frozen=True)
class ImageResult:
    """One image after `build_images`: `reference` is `apex-voice/<name>:<hash>` (also `:latest`)."""

    name: str
    reference: str
    image_id: str
    build_hash: str
    cached: bool
    seconds: float


@dataclass(frozen=True)
class BuildSummary:
    base: BaseImage
    images: tuple[ImageResult, ...]

    @property
    def all_cached(self) -> bool:
        return not self.base.built and all(image.cached for image in self.images)


def report_to_stderr(line: str) -> None:
    print(f"[images] {line}", file=sys.stderr, flush=True)


def connect_docker() -> docker.DockerClient:
    """The engine from DOCKER_HOST or the default socket, ignoring any CLI context (docker >= 7.2)."""
    return docker.from_env(use_context=False)


#: Images built at once (each build's ``pip install`` keeps about one core busy).
PARALLEL_BUILDS = 2


@dataclass
class _ImageBuilder:
    client: docker.DockerClient
    project: ProjectSources
    base: BaseImage
    cache_dir: Path
    report: Callable[[str], None]

    python_checked: bool = False
    _python_lock: threading.Lock = field(default_factory=threading.Lock)

    def require_compatible_python(self) -> None:
        """Probe the base once, and only when something has to be built."""
        with self._python_lock:
            if not self.python_checked:
                require_same_python(
                    host_python(), probe_python(self.client, self.base.reference), self.base.reference
                )
                self.python_checked = True

    def wheelhouse(self, spec: ImageSpec) -> Wheelhouse:
        """The spec's wheels, downloaded and built first when missing (two specs may share a set)."""
        wheelhouse = Wheelhouse.for_requirements(
            self.project.requirements(spec.requirement_names), self.cache_dir
        )
        if not wheelhouse.complete:
            self.require_compatible_python()
            wheelhouse.build(self.report)
        return wheelhouse

    def ensure(self, spec: ImageSpec) -> ImageResult:
        started = time.monotonic()
        wheelhouse = self.wheelhouse(spec)
        sources = self.project.snapshot(spec.source_packages)
        wheel_sources = self.project.snapshot(self.project.build_inputs if spec.installs_project else ())
        context = BuildContext(
            dockerfile=(self.project.root / spec.dockerfile).read_bytes(),
            requirements=wheelhouse.requirements,
            wheels=wheelhouse.wheels(),
            sources=sources,
        )
        build_hash = context.content_hash(
            self.base.image_id, wheelhouse.file_digests(), sources.digest() + wheel_sources.digest()
        )
        reference = f"{spec.repository}:{build_hash[:TAG_LENGTH]}"
        source_hash = (sources.digest() if spec.source_packages else wheel_sources.digest())
        existing = self.client.images.list(
            filters={"label": [f"{LABEL_BUILD_HASH}={build_hash}", f"{LABEL_SOURCE_HASH}={source_hash}"]}
        )
        if existing:
            image, cached = existing[0], True
            self.report(f"{spec.name}: cached, skipped build ({reference})")
        else:
            self.require_compatible_python()
            labels = {LABEL_BUILD_HASH: build_hash, LABEL_SOURCE_HASH: source_hash}
            image, cached = self._build(spec, context, wheel_sources, reference, labels), False
        image.tag(spec.repository, build_hash[:TAG_LENGTH])
        image.tag(spec.repository, "latest")
        self._remove_superseded(spec, image.id)
        return ImageResult(spec.name, reference, image.id, build_hash, cached, time.monotonic() - started)

    def _remove_superseded(self, spec: ImageSpec, current_id: str) -> None:
        """Drop older builds of this image so source edits do not pile up images; one still used by
        a container stays (the engine refuses), which is reported, not fatal."""
        for old in self.client.images.list(filters={"label": f"{LABEL_IMAGE_NAME}={spec.name}"}):
            if old.id == current_id:
                continue
            try:
                for reference in old.tags or [old.id]:
                    self.client.images.remove(reference)
                self.report(f"{spec.name}: removed superseded {', '.join(old.tags) or old.short_id}")
            except docker.errors.APIError as error:
                self.report(f"{spec.name}: kept superseded {old.short_id} ({error.explanation or error})")

    def _build(
        self,
        spec: ImageSpec,
        context: BuildContext,
        wheel_sources: SourceSnapshot,
        reference: str,
        labels: dict[str, str],
    ) -> Image:
        self.report(f"{spec.name}: building {reference} FROM {self.base.reference}")
        with (
            tempfile.TemporaryDirectory(prefix="apex-voice-build-") as scratch,
            tempfile.TemporaryFile() as tar,
        ):
            if spec.installs_project:
                context.project_wheels.append(self.project.build_wheel(wheel_sources, Path(scratch)))
            context.write_tar(tar)
            stream = self.client.api.build(
                fileobj=tar,
                custom_context=True,
                tag=reference,
                labels=labels,
                buildargs={"BASE_IMAGE": self.base.reference},
                network_mode="none",
                pull=False,
                rm=True,
                forcerm=True,
                decode=True,
                timeout=BUILD_TIMEOUT_SECONDS,
            )
            for chunk in stream:
                if "error" in chunk:
                    raise ImageBuildError(f"building {reference} failed: {chunk['error'].strip()}")
                line = chunk.get("stream", "").rstrip()
                if line and not line.lstrip().startswith(BUILD_NOISE):
                    self.report(f"{spec.name}: {line}")
        return self.client.images.get(reference)


@contextmanager
def build_lock(cache_dir: Path, report: Callable[[str], None]) -> Iterator[None]:
    """Hold the cache's build lock; when another process holds it, say so before waiting (its build
    can take minutes, and a wait without a word looks like a hang)."""
    path = cache_dir / ".build.lock"
    with open(path, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            report(f"waiting for another apex-voice process to finish building images (it holds {path})")
            started = time.monotonic()
            fcntl.flock(lock, fcntl.LOCK_EX)
            report(f"the other build finished; waited {time.monotonic() - started:.1f} s")
        yield


def _dangling_ids(client: docker.DockerClient) -> set[str]:
    return {image.id for image in client.images.list(filters={"dangling": True})}


def _remove_build_stages(client: docker.DockerClient, stage_ids: set[str], report: Callable[[str], None]) -> None:
    """The untagged images this build's multi-stage Dockerfiles left (their ``install`` stages, half a
    gigabyte each): shown as ``<none>`` by ``docker images`` and piling up with every source edit.
    Only images that appeared during this build, under the build lock, are touched."""
    removed = 0
    for image_id in stage_ids:
        try:
            client.images.remove(image_id)
            removed += 1
        except docker.errors.APIError:
            pass  # a child still uses it, or another build removed it first: nothing left to tidy here
    if removed:
        report(f"removed {removed} intermediate build stage image(s)")


def build_images(
    names: Iterable[str] | None = None,
    *,
    base_image: str | None = None,
    project_root: Path = DEFAULT_PROJECT_ROOT,
    cache_dir: Path | None = None,
    client: docker.DockerClient | None = None,
    report: Callable[[str], None] = report_to_stderr,
) -> BuildSummary:
    """Ensure the base image and the named images (all of IMAGE_SPECS by default) exist locally.

    `base_image` defaults to $BASE_IMAGE, then to apex-voice's own Debian base. Wheels and the base
    rootfs are cached under `cache_dir` (default `<project>/build/images`).
    """
    selected = list(IMAGE_SPECS) if names is None else list(names)
    unknown = [name for name in selected if name not in IMAGE_SPECS]
    if unknown:
        raise ValueError(f"unknown image {', '.join(unknown)}; known: {', '.join(IMAGE_SPECS)}")
    client = client or connect_docker()
    cache_dir = cache_dir or project_root / "build" / "images"
    requested_base = base_image or os.environ.get("BASE_IMAGE") or DEFAULT_BASE_IMAGE
    cache_dir.mkdir(parents=True, exist_ok=True)
    # One build at a time per cache: a concurrent build would prune images the other one uses.
    with build_lock(cache_dir, report):
        base = ensure_base_image(client, requested_base, cache_dir, report)
        builder = _ImageBuilder(client, ProjectSources.load(project_root), base, cache_dir, report)
        specs = [IMAGE_SPECS[name] for name in selected]
        for spec in specs:  # one at a time: two specs may share a wheelhouse directory
            builder.wheelhouse(spec)
        stages_before = _dangling_ids(client)
        # Then the images side by side: a build is mostly one pip install, on one core.
        with ThreadPoolExecutor(max_workers=PARALLEL_BUILDS, thread_name_prefix="image-build") as pool:
            results = tuple(pool.map(builder.ensure, specs))
        _remove_build_stages(client, _dangling_ids(client) - stages_before, report)
    for result in results:
        report(
            f"{result.name}: {'cached' if result.cached else 'built'} {result.reference} in {result.seconds:.1f} s"
        )
    return BuildSummary(base, results)
