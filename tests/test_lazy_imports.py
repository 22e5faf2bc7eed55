"""What a command does not need it does not import: a C0 run never loads the audio stack (scipy)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def _imports_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_preparing_a_c0_run_of_a_builtin_agent_loads_no_audio_stack():
    loaded = _imports_after(
        "from harness.cli.campaign_request import _model_or_exit\n"
        "_model_or_exit('oracle', 'C0', endpoint=None, provider_model=None, api_key_env=None)"
    )
    assert "harness.cli.campaign_request" in loaded
    assert not {m for m in loaded if m.startswith("scipy.signal")}, "the voice oracle (and its VAD) was built for C0"


def test_the_acoustics_presets_are_read_without_scipy():
    loaded = _imports_after("from harness.audio.acoustics import PRESETS")
    assert "harness.audio.acoustics" in loaded and "scipy.signal" not in loaded


def test_the_run_command_of_an_in_tree_agent_loads_no_image_builder():
    """Only an out-of-tree adapter's host needs the image builder's source lists (with its wheelhouse,
    base image and TOML reader: ~0.1 CPU-s to import)."""
    loaded = _imports_after(
        "from harness.cli.campaign_request import _model_or_exit\n"
        "_model_or_exit('oracle', 'C0', endpoint=None, provider_model=None, api_key_env=None)"
    )
    assert "harness.cli.campaign_request" in loaded
    assert "sandbox.image_build" not in loaded and "sandbox.wheelhouse" not in loaded


def test_a_forked_task_server_imports_nothing_its_forkserver_did_not():
    """What uvicorn loads for a listener is imported with ``mcp_servers.__main__`` (the forkserver's
    one import), so a forked server pays no import of its own (about 0.1 CPU-s a server before)."""
    probe = (
        "import sys\n"
        "import mcp_servers.__main__ as entry\n"
        "import uvicorn\n"
        "before = set(sys.modules)\n"
        "async def app(scope, receive, send): pass\n"
        "for extra in ({'host': '127.0.0.1', 'port': 0}, {'uds': '/nonexistent', 'lifespan': 'off'}):\n"
        "    uvicorn.Config(app, **extra, **entry._LISTENER_OPTIONS).load()\n"
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.split() == []


def test_a_c0_run_on_the_local_sandbox_loads_no_docker_sdk_and_no_voice_session():
    """The Docker SDK (agent containers), the voice session and its websocket clients load only for
    cells that use them: about 0.3 CPU-s a C0 campaign process paid before."""
    loaded = _imports_after(
        "import harness.cli.run_cmd\n"
        "from harness.campaign.text_cell import TextCellRunner\n"
        "from sandbox.local import LocalBackend\n"
    )
    assert "harness.campaign.sandboxed_cell" in loaded and "harness.campaign.ray_executor" in loaded
    unwanted = {"docker", "websockets", "harness.session.duplex_runner", "harness.audio.acoustics",
                "harness.audio.speech_bank", "harness.agents.container_agent"}
    assert not unwanted & loaded


def test_a_bridging_harness_and_a_task_server_start_without_the_mcp_sdk():
    """The SDK's ``import mcp`` costs about a CPU-second: the bridge calls tools on the control plane,
    and a server imports it only for its ``/mcp`` app (at once, or on first use with ``--lazy-mcp``)."""
    harness = _imports_after(
        "import harness.cli.run_cmd, harness.campaign.text_cell, harness.session.mcp_environment\n"
        "from harness.cli.campaign_request import _model_or_exit\n"
        "_model_or_exit('oracle', 'C0', endpoint=None, provider_model=None, api_key_env=None)"
    )
    server = _imports_after("import mcp_servers.__main__, mcp_servers.forkserver")
    assert "harness.session.mcp_environment" in harness and "mcp_servers.__main__" in server
    assert "mcp" not in harness and "mcp" not in server


def test_a_verb_freezes_what_it_imported():
    """Full collections then skip the imported modules' objects (pydantic schemas, numpy)."""
    probe = (
        "import gc\n"
        "from harness.cli.main import COMMANDS, _load\n"
        "_load('tasks', COMMANDS['tasks'].target)\n"
        "print(gc.get_freeze_count())"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    assert int(done.stdout) > 10_000
