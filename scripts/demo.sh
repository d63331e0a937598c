#!/usr/bin/env bash
# The main job on the embedded default: the bundled model on the NUCLEO-F767ZI's emulated twin.
# Plans the arena, builds firmware for the real board (sizes against its limits), then runs it on
# the QEMU twin through the serial protocol with a per-operator profile, and checks 5 seeded inputs
# against TFLM bit for bit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
model=examples/tiny_cnn_int8.tflite
mcugen=.venv/bin/mcugen
$mcugen plan "$model"
echo
$mcugen build "$model" --board nucleo-f767 -o build/tiny_cnn_int8-nucleo-f767
echo
$mcugen run "$model" --board nucleo-f767 --emulate --profile
echo
$mcugen verify "$model" --board nucleo-f767 --emulate --samples 5
