import os
import sys
from pathlib import Path

from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The suite draws the same Hypothesis examples on every run (its time and any failure reproduce
# on any machine); benchmarks/sweeps.py (MCUGEN_FULL_SWEEP=1) draws new ones each time.
settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("sweep", derandomize=False)
settings.load_profile("sweep" if os.environ.get("MCUGEN_FULL_SWEEP") == "1" else "suite")
