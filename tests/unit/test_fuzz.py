"""The CI share of the fuzzer (benchmarks/fuzz.py): a few hundred mutants of the seed models with a
fixed seed through plan and codegen, and a sample of the accepted ones built for the host under
AddressSanitizer and UBSan and compared with TFLM. Any internal error, crash, hang, sanitizer
report, runtime check or mismatch fails. The long run is the script itself:
python benchmarks/fuzz.py --mutants 10000 --seed 1 --build-sample 500."""

from __future__ import annotations

import shutil

import pytest

from support import FULL_SWEEP, benchmark_module

CI_MUTANTS = 600 if FULL_SWEEP else 200
CI_BUILD_SAMPLE = 12 if FULL_SWEEP else 8
CI_SEED = 2026


def test_mutants_are_reproducible_from_their_index() -> None:
    fuzz = benchmark_module("fuzz")
    corpus = fuzz.Corpus(fuzz.seeds(models=None))
    first = [corpus.mutant(7, i) for i in range(30)]
    again = fuzz.Corpus(fuzz.seeds(models=None))
    assert [m.data for m in first] == [again.mutant(7, i).data for i in range(30)]
    assert {m.family for m in first} == {"bytes", "fields", "graph"}


#: Findings of this share that are open bugs, each with what happens; the test fails when one is
#: fixed (so the entry goes) or a new one appears. None open.
KNOWN_OPEN: dict[tuple[str, int], str] = {}


def test_fuzz_ci_share() -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    fuzz = benchmark_module("fuzz")
    opts = fuzz.Options(mutants=CI_MUTANTS, seed=CI_SEED, build_sample=CI_BUILD_SAMPLE, jobs=2)
    results = fuzz.fuzz(opts, fuzz.Corpus(fuzz.seeds()))
    bad = [r for r in fuzz.failures(results) if (r.seed, r.index) not in KNOWN_OPEN]
    assert not bad, "\n".join(f"mutant {r.index} ({r.seed}, {r.kind}): {r.message}" for r in bad)
    known = {(r.seed, r.index) for r in fuzz.failures(results)}
    assert known == set(KNOWN_OPEN), "a known finding is fixed: remove it from KNOWN_OPEN"
    ran = [r for r in results if "host run" in r.stages]
    assert len(ran) == CI_BUILD_SAMPLE
    assert sum(r.stages["host run"] == fuzz.MATCH for r in ran) >= CI_BUILD_SAMPLE // 2
