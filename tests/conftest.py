import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The suite draws the same Hypothesis examples on every run (its time and any failure reproduce
# on any machine); benchmarks/sweeps.py (MCUGEN_FULL_SWEEP=1) draws new ones each time.
settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("sweep", derandomize=False)
settings.load_profile("sweep" if os.environ.get("MCUGEN_FULL_SWEEP") == "1" else "suite")


@pytest.fixture(scope="module")
def workdir(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A folder for one test module's firmware builds, removed after its last test."""
    stem = request.module.__name__.removeprefix("test_").replace("_", "-")
    with tempfile.TemporaryDirectory(prefix=f"mcugen-{stem}-") as tmp:
        yield Path(tmp)
