import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def workdir(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A folder for one test module's firmware builds, removed after its last test."""
    stem = request.module.__name__.removeprefix("test_").replace("_", "-")
    with tempfile.TemporaryDirectory(prefix=f"mcugen-{stem}-") as tmp:
        yield Path(tmp)
