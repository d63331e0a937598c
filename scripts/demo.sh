#!/usr/bin/env bash
# The main job on the embedded default: plan, build and run the bundled model, and report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
model=examples/tiny_cnn_int8.tflite
.venv/bin/mcugen plan "$model"
.venv/bin/mcugen build "$model" --board host -o build/tiny_cnn_int8
.venv/bin/mcugen run "$model" --board host
