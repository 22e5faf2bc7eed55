#!/usr/bin/env bash
# Builds the example bot's image on a machine with a Docker engine but no registry, the way
# apex-voice builds its own: the base is apex-voice's (`apex-voice images build` makes it from
# Debian packages), the wheels are built here with the host's Python 3.11 (they must match the
# image's), and the build itself runs with no network.
#
#   examples/pipecat-bot/build-image.sh [TAG]      (default: apex-voice/pipecat-bot-example:latest)
#
# With a registry, `docker build -t TAG examples/pipecat-bot` is all it takes.
set -euo pipefail
cd "$(dirname "$0")"
tag="${1:-apex-voice/pipecat-bot-example:latest}"
# apex-voice's newest base image, unless BASE_IMAGE names one (any image with python3.11 and venv).
base="${BASE_IMAGE:-$(docker images apex-voice/base --format '{{.Repository}}:{{.Tag}}' | head -n1)}"
python="${PYTHON:-python3.11}"
[ -n "$base" ] && docker image inspect "$base" >/dev/null 2>&1 || {
  echo "error: base image ${base:-apex-voice/base} is missing: run 'apex-voice images build' first (or set BASE_IMAGE)" >&2; exit 2; }
# The wheelhouse is cached by the pins it was built from: an unchanged build touches no network.
pins=$(cat requirements.txt constraints.txt | sha256sum | cut -c1-16)
if [ ! -f "wheelhouse/.complete-$pins" ]; then
  rm -rf wheelhouse && mkdir -p wheelhouse.partial
  "$python" -m pip wheel --quiet --disable-pip-version-check --wheel-dir wheelhouse.partial \
      -r requirements.txt -c constraints.txt
  touch "wheelhouse.partial/.complete-$pins" && mv wheelhouse.partial wheelhouse
fi
docker build --quiet --network none --pull=false -t "$tag" \
    --build-arg BASE_IMAGE="$base" --build-arg PIP_OPTIONS=--no-index . >/dev/null
echo "$tag"
