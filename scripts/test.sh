#!/usr/bin/env bash
# Installs what is needed, then runs the whole test suite on every core (pytest-xdist). Extra
# arguments go to pytest, e.g. `bash scripts/test.sh -k conv` or `-n 0` for one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# The suite builds hundreds of firmwares from the same runtime files: ccache compiles each once
# (the objects are the same bytes). The cache lives in .cache/ccache; set MCUGEN_CC_LAUNCHER= to
# build without it.
if command -v ccache >/dev/null 2>&1; then
  export MCUGEN_CC_LAUNCHER="${MCUGEN_CC_LAUNCHER-ccache}"
fi
export CCACHE_DIR="${CCACHE_DIR:-$PWD/.cache/ccache}"
exec .venv/bin/python -m pytest -q -n auto "$@"
