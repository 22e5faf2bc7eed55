"""Agent images in the registry, the campaign and the image spec (no docker needed)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness.agents.container_agent import ContainerAgentAdapter
from harness.agents.media_stream import TwilioMediaStreamAdapter
from harness.agents.native_oracle import NativeOracleAgent
from harness.agents.registry import NATIVE_ORACLE_IMAGE, UnknownModelError, get_model
from harness.blame.origin_table import classify
from harness.campaign.sandboxed_cell import SandboxedCellRunner
from sandbox.agent_container import AgentContainerConfig, start_agent_container
from sandbox.backend import SandboxEnvironment
from sandbox.errors import AgentImageError, SandboxUnavailableError
from sandbox.image_build import DEFAULT_PROJECT_ROOT, IMAGE_SPECS
from sandbox.local import LocalBackend
from sandbox.project_sources import snapshot_paths


def _local_sandbox() -> SandboxEnvironment:
    async def no_state() -> bytes:
        return b""

    return SandboxEnvironment(mcp_url="http://127.0.0.1:1/mcp", control=None, backend="local",  # type: ignore[arg-type]
                              read_persisted_state=no_state)


def test_container_prefix_names_any_image_never_privileged_and_native():
    spec = get_model("container:registry.local/my-agent:1.2")
    assert spec.agent_image == "registry.local/my-agent:1.2" and spec.container_only
    assert spec.tool_modes == ("native",) and not spec.privileged and spec.clock == "realtime"
    assert isinstance(spec.create_adapter(), ContainerAgentAdapter)  # no I/O before a session
    with pytest.raises(UnknownModelError, match="needs an image name"):
        get_model("container:")


def test_a_telephony_bot_image_is_reached_over_twilio_media_streams_at_its_path():
    spec = get_model("twilio+container:my-bot:2")
    assert spec.agent_image == "my-bot:2" and spec.container_only and spec.tool_modes == ("native",)
    assert not spec.privileged and spec.agent_kind == "remote_agent"
    runner = SandboxedCellRunner(model=spec, backend=LocalBackend(pool_size=0), task_dirs={},
                                 speech=lambda bundle: None, tool_mode="native")
    sandbox = _local_sandbox()
    sandbox.metadata["agent_container"] = {"url": "ws://10.213.0.5:8765/media-stream"}
    adapter = runner.create_adapter(sandbox)
    assert isinstance(adapter, TwilioMediaStreamAdapter) and adapter.endpoint == "ws://10.213.0.5:8765/media-stream"
    assert runner._wire.path == "/media-stream"  # the path the container is started (and probed) with
    with pytest.raises(UnknownModelError, match="needs an image name"):
        get_model("twilio+container:")
    assert isinstance(get_model("container:my-agent:1").create_adapter(), ContainerAgentAdapter)


def test_the_harness_and_the_sandbox_agree_on_the_realtime_path():
    from harness.agents import realtime
    from sandbox import agent_container_config

    assert realtime.REALTIME_PATH == agent_container_config.REALTIME_PATH == AgentContainerConfig(image="x").path


def test_the_native_oracle_names_its_image_and_stays_in_process_without_docker():
    spec = get_model("native-oracle")
    assert spec.agent_image == NATIVE_ORACLE_IMAGE and not spec.container_only and spec.privileged
    assert isinstance(spec.create_adapter(), NativeOracleAgent)


async def test_an_image_only_agent_with_a_local_sandbox_stops_the_campaign_naming_the_fix():
    runner = SandboxedCellRunner(model=get_model("container:my-agent:1"), backend=LocalBackend(pool_size=0),
                                 task_dirs={}, speech=lambda bundle: None, tool_mode="native")
    with pytest.raises(AgentImageError, match="--sandbox docker") as refused:
        async with runner.agent_container(_local_sandbox()):
            pass
    blame = classify(refused.value)
    assert blame.stops_campaign and blame.kind == "sandbox"


async def test_in_process_models_get_no_container_with_a_local_sandbox():
    runner = SandboxedCellRunner(model=get_model("native-oracle"), backend=LocalBackend(pool_size=0),
                                 task_dirs={}, speech=lambda bundle: None, tool_mode="native")
    async with runner.agent_container(_local_sandbox()) as agent:
        assert agent is None
    assert isinstance(runner.create_adapter(_local_sandbox()), NativeOracleAgent)


async def test_an_agent_container_needs_a_docker_sandbox():
    with pytest.raises(SandboxUnavailableError, match="needs a sandbox with a docker session network"):
        async with start_agent_container(_local_sandbox(), AgentContainerConfig(image="x")):
            pass


@pytest.mark.slow
def test_the_agent_image_ships_agent_code_only_and_it_runs_from_that_alone(tmp_path):
    shipped = snapshot_paths(DEFAULT_PROJECT_ROOT, IMAGE_SPECS["native-oracle"].source_packages)
    names = [name for name, _ in shipped.files]
    assert not [n for n in names if "demo_data" in n or n.endswith((".yaml", ".jsonl", ".json", ".wav", ".flac"))]
    shipped.write_to(tmp_path)
    probe = ("import harness, harness.agents.realtime_server, harness.agents.native_oracle, harness.agents.registry; "
             "print(harness.__file__)")  # the registry too: an adapter host looks its agent up there
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(tmp_path))
