"""Every shared model against TFLM on the three DSP cores' QEMU boards, optimised kernels:
`mcugen verify MODEL --board B --emulate --samples N --json` on mps2-an386 (Cortex-M4),
mps2-an500 (M7) and mps3-an547 (M55), as a user runs it (the real binary, in a scratch folder).
A row per model and board: whether every output matched TFLM's interpreter byte for byte, or
why it did not run (a model larger than the board, an operator mcugen does not run). Issue 32's
bit-exactness check of the assembly paths on every core they are built for; the suite runs a few
of these (tests/qemu/test_opt_*twin*.py).

Run: python benchmarks/verify_cores.py [--boards B ...] [--models STEM ...] [--samples N];
exit 1 when any run that was built did not match, or none ran.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

MCUGEN = Path(sys.executable).with_name("mcugen")
SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
BOARDS = ("mps2-an386", "mps2-an500", "mps3-an547")


def verify(model: Path, board: str, samples: int) -> tuple[str, str]:
    """(what happened, "match", "mismatch" or "not run")."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [str(MCUGEN), "verify", str(model), "--board", board, "--emulate"]
        done = subprocess.run(
            [*argv, "--samples", str(samples), "--json", "-q"],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=3600,
        )
    if done.returncode != 0 and not done.stdout.strip().startswith("{"):
        return "not run: " + (done.stderr.strip().splitlines() or ["?"])[-1][:110], "not run"
    report = json.loads(done.stdout)
    matched = bool(report["ok"]) and not report["mismatches"]
    line = f"{'match' if matched else 'MISMATCH'} ({report['samples']} samples)"
    return line, "match" if matched else "mismatch"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", nargs="*", default=list(BOARDS))
    parser.add_argument("--models", nargs="*", help="model stems (default: every shared model)")
    parser.add_argument("--samples", type=int, default=2)
    args = parser.parse_args()
    models = sorted(SHARED_MODELS.glob("*.tflite"))
    if args.models:
        models = [m for m in models if m.stem in args.models]
    print("| model | board | verify |\n|---|---|---|")
    counts = {"match": 0, "mismatch": 0, "not run": 0}
    for model in models:
        for board in args.boards:
            line, outcome = verify(model, board, args.samples)
            counts[outcome] += 1
            print(f"| {model.stem} | {board} | {line} |", flush=True)
    print(", ".join(f"{n} {what}" for what, n in counts.items()))
    return 1 if counts["mismatch"] or not counts["match"] else 0


if __name__ == "__main__":
    sys.exit(main())
