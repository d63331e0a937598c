"""LCP-style nets on four NUCLEO-F767ZI twins: speed-up against one board at two baud rates.

Each configuration of examples/make_lcp_net.py is built, then run with `mcugen run MODEL --boards
nucleo-f767 x4 --emulate --partition P --baud B --json` (board to board over link UARTs): the
instructions are measured on the twins, the latency is modelled from them and the links
(docs/partitioning.md). Prints one markdown table row per run. Takes a few minutes.

    python benchmarks/multiboard.py [--configs 24:3:2,40:4:1] [--partitions branch,pipeline]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ",".join(["nucleo-f767"] * 4)
BAUDS = (115_200, 921_600)


def run(model: Path, partition: str, baud: int) -> dict:
    cmd = [sys.executable, "-m", "mcugen.cli", "run", str(model), "--boards", BOARDS, "--emulate"]
    cmd += ["--partition", partition, "--baud", str(baud), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="24:3:2,40:4:1", help="width:depth:stem-channels,...")
    parser.add_argument("--partitions", default="branch,pipeline")
    args = parser.parse_args()
    print(
        "| width, depth, stem channels | model bytes | partition | baud | bytes between boards "
        "| on the wire | instructions (largest board) | latency (modelled) | one board | speed-up |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="mcugen-lcp-") as tmp:
        for config in args.configs.split(","):
            width, depth, stem = config.split(":")
            model = Path(tmp) / f"lcp_{width}_{depth}_{stem}.tflite"
            builder = [sys.executable, str(ROOT / "examples" / "make_lcp_net.py"), "-o", str(model)]
            builder += ["--width", width, "--depth", depth, "--stem-channels", stem]
            subprocess.run(builder, check=True, capture_output=True)
            for partition in args.partitions.split(","):
                for baud in BAUDS:
                    r = run(model, partition, baud)
                    wire = sum(row["wire_bytes"] or 0 for row in r["links"])
                    largest = max(b["instructions"] for b in r["boards"])
                    print(
                        f"| {width}, {depth}, {stem} | {model.stat().st_size:,} | {partition} "
                        f"| {baud:,} | {r['board_to_board_bytes']:,} | {wire:,} | {largest:,} "
                        f"| {r['latency_seconds'] * 1e3:.1f} ms "
                        f"| {r['single_board_seconds'] * 1e3:.1f} ms | {r['speedup']:.2f}x |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
