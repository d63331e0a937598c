#!/usr/bin/env bash
# The checks CI runs before the tests: lint, format, types, and the budgets in budgets/*.txt
# (a budget made worse fails unless its file changes in the same commit; see benchmarks/budgets.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy mcugen tests benchmarks examples testgraphs
.venv/bin/python benchmarks/budgets.py
