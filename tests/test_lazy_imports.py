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
        "from harness.cli.run_cmd import _model_or_exit\n"
        "_model_or_exit('oracle', 'C0', endpoint=None, provider_model=None, api_key_env=None)"
    )
    assert "harness.cli.run_cmd" in loaded
    assert not {m for m in loaded if m.startswith("scipy.signal")}, "the voice oracle (and its VAD) was built for C0"


def test_the_acoustics_presets_are_read_without_scipy():
    loaded = _imports_after("from harness.audio.acoustics import PRESETS")
    assert "harness.audio.acoustics" in loaded and "scipy.signal" not in loaded
