#!/usr/bin/env bash
# Installs what is needed, then runs the whole test suite on every core (pytest-xdist). Extra
# arguments go to pytest, e.g. `bash scripts/test.sh -k conv` or `-n 0` for one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/python -m pytest -q -n auto "$@"
