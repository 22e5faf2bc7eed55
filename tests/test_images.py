"""Offline image builds: the pure pieces, then real builds against a Docker engine (marker `docker`)."""

from __future__ import annotations

import ast
import fcntl
import importlib.metadata
import io
import os
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from sandbox.base_image import PythonTarget
from sandbox.build_context import BuildContext
from sandbox.debian_rootfs import DebianMirrors, mirrors_from_deb822, mmdebstrap_command
from sandbox.image_build import IMAGE_SPECS, LABEL_BUILD_HASH, build_images, build_lock
from sandbox.project_sources import ProjectSources, SourceSnapshot, normalized_name
from sandbox.wheelhouse import PythonMismatchError, require_same_python
from tests.waiting import eventually

PROJECT_ROOT = Path(__file__).resolve().parents[1]
HOST = PythonTarget(3, 11, "x86_64")


async def test_a_build_waiting_for_another_says_so_before_it_waits(tmp_path: Path) -> None:
    """Issue 23 walk: a run waited 91 s in silence on the lock of another process's build."""
    said: list[str] = []
    entered = threading.Event()

    def second_build() -> None:
        with build_lock(tmp_path, said.append):
            entered.set()

    with open(tmp_path / ".build.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # the other build
        waiter = threading.Thread(target=second_build)
        waiter.start()
        await eventually(lambda: said)
        assert not entered.is_set()
        assert said == [f"waiting for another apex-voice process to finish building images (it holds "
                        f"{tmp_path / '.build.lock'})"]
    waiter.join(10)
    assert entered.is_set() and said[-1].startswith("the other build finished; waited ")


def test_a_build_with_the_lock_free_says_nothing_about_it(tmp_path: Path) -> None:
    said: list[str] = []
    with build_lock(tmp_path, said.append):
        pass
    assert said == []


def test_wheelhouses_are_prepared_one_at_a_time_then_images_build_two_at_a_time(tmp_path, monkeypatch) -> None:
    """Two specs may share a wheelhouse directory, so wheels come first, in turn; the builds, each
    mostly one pip install on one core, then run side by side."""
    import sandbox.image_build as image_build

    events: list[str] = []
    both_building = threading.Barrier(image_build.PARALLEL_BUILDS, timeout=10)

    def wheelhouse(self, spec):
        events.append(f"wheels {spec.name}")

    def ensure(self, spec):
        events.append(f"build {spec.name}")
        if spec.name in ("mcp-server", "native-oracle"):  # the first two are in flight together
            both_building.wait()
        return image_build.ImageResult(spec.name, f"apex-voice/{spec.name}:x", "sha256:x", "x", True, 0.0)

    monkeypatch.setattr(image_build._ImageBuilder, "wheelhouse", wheelhouse)
    monkeypatch.setattr(image_build._ImageBuilder, "ensure", ensure)
    monkeypatch.setattr(image_build, "ensure_base_image", lambda *args: object())
    monkeypatch.setattr(image_build.ProjectSources, "load", staticmethod(lambda root: object()))
    monkeypatch.setattr(image_build, "_dangling_ids", lambda client: set())  # no engine: no stage left to tidy
    summary = build_images(client=object(), cache_dir=tmp_path, report=lambda line: None)  # type: ignore[arg-type]
    assert [r.name for r in summary.images] == list(IMAGE_SPECS)  # in the specs' order, however they finished
    assert events[: len(IMAGE_SPECS)] == [f"wheels {name}" for name in IMAGE_SPECS]
    assert sorted(events[len(IMAGE_SPECS):]) == sorted(f"build {name}" for name in IMAGE_SPECS)


def test_python_mismatch_names_both_interpreters_and_the_image() -> None:
    with pytest.raises(PythonMismatchError) as caught:
        require_same_python(HOST, PythonTarget(3, 12, "x86_64"), "python:3.12-slim")
    message = str(caught.value)
    assert "python:3.12-slim" in message
    assert "Python 3.12 on x86_64" in message and "Python 3.11 on x86_64" in message


def test_same_python_passes() -> None:
    require_same_python(HOST, PythonTarget(3, 11, "x86_64"), "apex-voice/base:bookworm-py311")


def test_mirrors_come_from_the_stanzas_serving_the_suite() -> None:
    sources = (
        "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\n"
        "Types: deb\n# comment: with a colon\nURIs: http://mirror.example/security\n"
        "Suites: bookworm-security\nComponents: main\n"
    )
    assert mirrors_from_deb822(sources) == DebianMirrors(
        "http://mirror.example/debian", "http://mirror.example/security"
    )


def test_mirrors_of_another_distribution_fall_back_to_debian() -> None:
    sources = "Types: deb\nURIs: http://archive.ubuntu.com/ubuntu\nSuites: noble noble-updates\n"
    assert mirrors_from_deb822(sources) == DebianMirrors()


def test_mmdebstrap_recipe_is_the_slim_essential_one_with_security_updates() -> None:
    command = mmdebstrap_command(Path("/tmp/out.tar"), DebianMirrors("http://m/debian", "http://m/security"))
    assert "--variant=essential" in command
    assert "--include=python3,python3-venv,ca-certificates,libstdc++6" in command
    assert "--dpkgopt=path-exclude=/usr/share/doc/*" in command
    assert command[-3:] == [
        "deb http://m/debian bookworm main",
        "deb http://m/debian bookworm-updates main",
        "deb http://m/security bookworm-security main",
    ]


def test_mcp_server_requirements_use_pyproject_specifiers() -> None:
    project = ProjectSources.load(PROJECT_ROOT)
    requirements = project.requirements(IMAGE_SPECS["mcp-server"].requirement_names)
    declared = set(project.dependencies)
    assert len(requirements) == 6 and set(requirements) <= declared
    assert any(requirement.startswith("mcp") for requirement in requirements)
    assert not any(requirement.startswith("typer") for requirement in requirements)


#: Imported by ``mcp_servers`` only to preload a declared package's own internals (anyio: the backend
#: uvicorn and starlette run on), so they come with what is declared.
PRELOADED_INTERNALS = {"anyio"}


def _third_party_imports(package: str) -> dict[str, str]:
    """Top-level module -> ``file:line`` of each non-stdlib absolute import in ``package``'s sources."""
    found: dict[str, str] = {}
    for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top not in (package, "__future__"):
                    found.setdefault(top, f"{path.relative_to(PROJECT_ROOT)}:{node.lineno}")
    return found


def test_the_mcp_server_image_declares_every_package_the_server_imports() -> None:
    """The image installs only its declared requirements (and what they pull in): a package the
    server imports but the image does not declare works today by accident of another's dependencies."""
    declared = {normalized_name(name) for name in IMAGE_SPECS["mcp-server"].requirement_names or ()}
    distributions = importlib.metadata.packages_distributions()
    undeclared = {
        module: where
        for module, where in _third_party_imports("mcp_servers").items()
        if module not in PRELOADED_INTERNALS
        and not {normalized_name(dist) for dist in distributions.get(module, [module])} & declared
    }
    assert not undeclared, f"mcp_servers imports packages the mcp-server image does not declare: {undeclared}"
    assert "jsonschema" in _third_party_imports("mcp_servers")


def test_undeclared_requirement_is_named() -> None:
    project = ProjectSources.load(PROJECT_ROOT)
    with pytest.raises(ValueError, match="no-such-package not declared"):
        project.requirements(["no_such_package"])


def test_content_hash_changes_with_each_input() -> None:
    context = BuildContext(dockerfile=b"FROM x\n", requirements=("mcp>=2.3",))
    reference = context.content_hash("sha256:base", [("a.whl", "1")], "src")
    assert reference == context.content_hash("sha256:base", [("a.whl", "1")], "src")
    assert reference != context.content_hash("sha256:other", [("a.whl", "1")], "src")
    assert reference != context.content_hash("sha256:base", [("a.whl", "2")], "src")
    assert reference != context.content_hash("sha256:base", [("a.whl", "1")], "changed")
    edited = BuildContext(dockerfile=b"FROM y\n", requirements=("mcp>=2.3",))
    assert reference != edited.content_hash("sha256:base", [("a.whl", "1")], "src")


def test_context_tar_holds_exactly_what_the_dockerfile_copies(tmp_path: Path) -> None:
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    wheel.write_bytes(b"wheel")
    project_wheel = tmp_path / "apex_voice-0.1.0-py3-none-any.whl"
    project_wheel.write_bytes(b"project")
    sources = SourceSnapshot((("pkg/module.py", b"VALUE = 1\n"),))
    context = BuildContext(b"FROM x\n", ("demo==1.0",), [wheel], sources, [project_wheel])
    buffer = io.BytesIO()
    context.write_tar(buffer)
    with tarfile.open(fileobj=buffer) as archive:
        names = archive.getnames()
        requirements = archive.extractfile("requirements.txt").read()
        module = archive.extractfile("src/pkg/module.py").read()
    assert names == [
        "Dockerfile",
        "requirements.txt",
        "wheelhouse/demo-1.0-py3-none-any.whl",
        "project/apex_voice-0.1.0-py3-none-any.whl",
        "src/pkg/module.py",
    ]
    assert requirements == b"demo==1.0\n" and module == b"VALUE = 1\n"


def test_snapshot_digest_follows_file_contents(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "1.0"\n[tool.setuptools.packages.find]\ninclude = ["pkg*"]\n'
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("A = 1\n")
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"cache")
    project = ProjectSources.load(tmp_path)
    before = project.snapshot(project.build_inputs)
    assert [relative for relative, _ in before.files] == ["pyproject.toml", "pkg/a.py"]
    (tmp_path / "pkg" / "a.py").write_text("A = 2\n")
    assert project.snapshot(project.build_inputs).digest() != before.digest()


# --- real engine -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def docker_client():
    """The engine, or a skip; under CI=true a missing engine is a failure, not a skip."""
    docker = pytest.importorskip("docker")
    try:
        client = docker.from_env(use_context=False)
        client.ping()
    except Exception as error:  # noqa: BLE001 - any failure to reach the engine means "no engine"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no Docker engine answers: {error}")
        pytest.skip(f"no docker engine: {error}")
    return client


@pytest.fixture(scope="module")
def built(docker_client):
    return build_images(client=docker_client)


def _run_as_service_user(client, image: str, code: str) -> str:
    output = client.containers.run(
        image, ["python", "-c", code], user="10001:10001", remove=True, network_disabled=True
    )
    return output.decode().strip()


@pytest.mark.docker
def test_mcp_server_image_imports_its_stack_as_uid_10001(docker_client, built) -> None:
    mcp_server = next(result for result in built.images if result.name == "mcp-server")
    code = "import os, mcp_servers, mcp, uvicorn, starlette, pydantic, yaml, jsonschema; print(os.getuid())"
    assert _run_as_service_user(docker_client, mcp_server.reference, code) == "10001"


@pytest.mark.docker
def test_mcp_server_image_ships_no_harness_and_runs_the_server_module(docker_client, built) -> None:
    image = docker_client.images.get("apex-voice/mcp-server:latest")
    config = image.attrs["Config"]
    assert config["User"] == "10001:10001"
    assert "8080/tcp" in config["ExposedPorts"]
    assert config["Cmd"][:3] == ["python", "-m", "mcp_servers"]
    assert config["Labels"][LABEL_BUILD_HASH] and config["Labels"]["org.apex-voice.image"] == "mcp-server"
    code = "import importlib.util as u; print(u.find_spec('harness') is None)"
    assert _run_as_service_user(docker_client, "apex-voice/mcp-server:latest", code) == "True"


@pytest.mark.docker
def test_harness_image_imports_the_whole_project(docker_client, built) -> None:
    # The CLI pulls in the native wheels (numpy, scipy, soundfile, webrtcvad): they must load.
    code = (
        "import harness.cli.main, numpy, scipy.signal, soundfile, webrtcvad, espeakng_loader; "
        "import harness; print(harness.__name__)"
    )
    assert _run_as_service_user(docker_client, "apex-voice/harness:latest", code) == "harness"


@pytest.mark.docker
def test_second_build_is_all_cached(docker_client, built) -> None:
    build_images(client=docker_client, report=lambda _line: None)  # catches up with any edit since `built`
    lines: list[str] = []
    again = build_images(client=docker_client, report=lines.append)
    assert again.all_cached
    assert sum("cached, skipped build" in line for line in lines) == len(IMAGE_SPECS)
    assert {result.name for result in again.images} == set(IMAGE_SPECS)
