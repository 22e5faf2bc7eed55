"""``apex-voice run`` refuses what it would otherwise ignore or wait on in silence (issue 23 items 3, 5).

Every case is one line on stderr and an exit code, before any sandbox or session starts.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from tests.conftest import DEMO_DATA

DEMO_TASK = "demo_warranty_advice_001"


def _run(*args: str, out=None):
    extra = ["--out", str(out)] if out is not None else []
    return CliRunner().invoke(app, ["run", "--data", str(DEMO_DATA), "--only", DEMO_TASK, *extra, *args])


def _error_line(result) -> str:
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    return line


@pytest.fixture
def dead_port() -> Iterator[int]:
    """A local port bound but not listening: a connection to it is refused, and nobody else takes it."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield bound.getsockname()[1]


def test_acoustics_outside_c3_is_a_usage_error(tmp_path):
    result = _run("--acoustics", "harsh", out=tmp_path)
    assert result.exit_code == 2
    assert _error_line(result) == ("error: --acoustics applies to a condition with acoustics (C3) only "
                                   "(this run is C2: full duplex, clean audio both ways)")
    assert not (tmp_path / "campaign.json").exists()


def test_an_unknown_acoustics_preset_lists_the_presets_and_processors(tmp_path):
    result = _run("--condition", "C3", "--acoustics", "harsher", out=tmp_path)
    assert result.exit_code == 2
    line = _error_line(result)
    assert "'harsher'" in line and "light, moderate, telephone, lossy, harsh" in line and "reverb" in line


def test_parallel_has_an_upper_bound_with_its_reason(tmp_path):
    result = _run("--parallel", "10000", out=tmp_path)
    assert result.exit_code == 2
    assert _error_line(result).startswith("error: --parallel 10000: at most 64 sessions at once")


def test_an_unknown_tool_mode_lists_the_valid_ones(tmp_path):
    result = _run("--tool-mode", "bogus", out=tmp_path)
    assert result.exit_code == 2
    assert _error_line(result) == "error: --tool-mode 'bogus' is not a tool mode; use bridge or native"


def test_a_dead_local_agent_endpoint_fails_fast_naming_it(tmp_path, dead_port):
    url = f"ws://127.0.0.1:{dead_port}/"
    result = _run("--model", url, "--sandbox", "local", out=tmp_path)
    assert result.exit_code == 1, result.output
    line = _error_line(result)
    assert line.startswith(f"error: {url}: nothing is listening at 127.0.0.1:{dead_port} (connection refused)")
    assert "OpenAI" not in result.output
    assert not (tmp_path / DEMO_TASK / "rep0" / "result.json").exists()


def test_a_dead_local_chat_endpoint_fails_fast_naming_the_model(tmp_path, dead_port):
    base = f"http://localhost:{dead_port}/v1"
    result = _run("--condition", "C0", "--model", "chat:tiny", "--endpoint", base, "--sandbox", "local", out=tmp_path)
    assert result.exit_code == 1, result.output
    assert _error_line(result).startswith(
        f"error: chat:tiny ({base}/chat/completions): nothing is listening at localhost:{dead_port} "
        "(connection refused)"
    )
    assert "OpenAI" not in result.output


def _resolver(errno: int):
    def getaddrinfo(host, *args, **kwargs):
        raise socket.gaierror(errno, "Name or service not known" if errno == socket.EAI_NONAME else "try again")

    return getaddrinfo


def test_a_remote_endpoint_whose_host_name_is_not_known_fails_fast_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(socket, "getaddrinfo", _resolver(socket.EAI_NONAME))
    url = "wss://agent.example.invalid/v1/realtime"
    result = _run("--model", url, "--sandbox", "local", out=tmp_path)
    assert result.exit_code == 1, result.output
    assert _error_line(result) == (
        f"error: {url}: the host name agent.example.invalid is not known (the resolver says: Name or service "
        "not known); check the URL, or this machine's network and DNS"
    )
    assert not (tmp_path / "campaign.json").exists()


def test_a_resolver_that_fails_for_a_while_is_left_to_the_sessions_retries(monkeypatch):
    from harness.agents.registry import get_model
    from harness.cli.preflight import dead_endpoint_problem

    monkeypatch.setattr(socket, "getaddrinfo", _resolver(socket.EAI_AGAIN))
    assert dead_endpoint_problem(get_model("wss://agent.example.invalid/v1/realtime")) is None


def test_a_chat_model_on_the_default_endpoint_without_a_key_is_refused_up_front(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = _run("--condition", "C0", "--model", "chat:gpt-4o", "--sandbox", "local", out=tmp_path)
    assert result.exit_code == 2, result.output
    assert _error_line(result) == (
        "error: chat:gpt-4o needs OPENAI_API_KEY for https://api.openai.com/v1/chat/completions "
        "(set it in the environment or .env, or serve the model elsewhere: --endpoint URL)"
    )
    assert not (tmp_path / "campaign.json").exists()


async def test_an_openai_compatible_agent_is_not_called_openai_when_it_fails(dead_port):
    """A ``ws://`` agent that stops answering mid-campaign is named for what it is, with its URL."""
    from harness.agents.providers.errors import ProviderUnavailable
    from harness.agents.registry import get_model

    url = f"ws://127.0.0.1:{dead_port}/"
    adapter = get_model(url).create_adapter()
    with pytest.raises(ProviderUnavailable) as failed:
        await adapter._open()
    assert str(failed.value).startswith(f"OpenAI-Realtime-compatible agent: cannot connect to {url}")
    assert adapter.metadata()["provider"] == "OpenAI-Realtime-compatible agent"


@pytest.mark.parametrize("endpoint", ["URL", "localhost:8000/v1", "http://", "ftp://host/v1", "http://host:port/v1"])
def test_an_endpoint_that_is_not_a_url_is_a_usage_error(tmp_path, endpoint):
    """The README's ``--endpoint URL`` typed as shown ran 30 cells of 3 failing attempts each (18 minutes)."""
    result = _run("--condition", "C0", "--model", "chat:MODEL", "--endpoint", endpoint, out=tmp_path)
    assert result.exit_code == 2, result.output
    assert _error_line(result) == (f"error: --endpoint {endpoint!r} is not a URL with a scheme and a host (e.g. "
                                   "http://localhost:8000/v1 for chat:/cascade:, wss://HOST/PATH for a provider)")
    assert not (tmp_path / "campaign.json").exists()


def test_a_missing_agent_image_is_said_once_before_any_sandbox(tmp_path, monkeypatch):
    """The README's ``--model container:my-agent:latest`` without the image built the task server's
    image, failed the first cell and listed 29 more as NOT RUN."""
    import sandbox.agent_container as agent_container
    from harness.cli import campaign_request
    from sandbox.errors import AgentImageError

    def missing(image: str, **_: object) -> str:
        raise AgentImageError(f"agent image {image} is not on this Docker engine (there is no registry here: "
                              "`docker build` or `docker load` it first)")

    def no_backend(*args: object, **kwargs: object) -> None:
        raise AssertionError("no sandbox backend is made for a model whose image is missing")

    monkeypatch.setattr(agent_container, "ensure_agent_image", missing)
    monkeypatch.setattr(campaign_request, "_backend_or_exit", no_backend)
    result = _run("--model", "container:my-agent:latest", "--sandbox", "docker", out=tmp_path)
    assert result.exit_code == 1, result.output
    assert _error_line(result) == ("error: agent image my-agent:latest is not on this Docker engine (there is no "
                                   "registry here: `docker build` or `docker load` it first)")
    assert not (tmp_path / "campaign.json").exists() and "NOT RUN" not in result.output


def test_adapter_env_is_refused_for_a_model_that_runs_no_code_of_the_user(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_SETTING", "1")
    result = _run("--model", "oracle", "--adapter-env", "BOT_SETTING", out=tmp_path)
    assert result.exit_code == 2
    assert _error_line(result) == ("error: --adapter-env is for an out-of-tree adapter (package.module:Class) or an "
                                   "agent image (container:IMAGE, twilio+container:IMAGE), not 'oracle'")
    assert not (tmp_path / "campaign.json").exists()


@pytest.mark.parametrize(("size", "problem"), [
    ("lots", "'lots' is not a size (e.g. 768m, 2g)"),
    ("64m", "64m: at least 128m (the container's /tmp alone may hold 64m)"),
    ("1g", "applies to an agent run in a container under --sandbox docker (container:IMAGE, twilio+container:IMAGE, "
           "native-oracle, a hosted adapter); oracle runs outside any container"),
])
def test_agent_memory_is_a_size_for_an_agent_in_a_container(tmp_path, size, problem):
    result = _run("--model", "oracle", "--sandbox", "local", "--agent-memory", size, out=tmp_path)
    assert result.exit_code == 2
    assert _error_line(result) == f"error: --agent-memory {problem}"
    assert not (tmp_path / "campaign.json").exists()
