"""Time and energy per inference estimated from the QEMU twin's instruction count.

A board's `[energy]` table in board.toml holds the model; every constant names its source:

    time   = instructions x cycles_per_instruction / clock_hz
    energy = supply_volts x run_ua_per_mhz x clock_MHz x time  (+ bytes moved x pJ/byte)

- `run_ua_per_mhz`: the datasheet's run-mode supply current per MHz at the board's clock (code in
  flash, caches on, peripherals off), so the current scales with the clock the board runs at.
- `cycles_per_instruction`: board core cycles per twin instruction. QEMU counts instructions, not
  cycles (no caches, wait states or dual issue), so this constant carries all of that. It is
  calibrated against a published measurement of a workload whose twin instructions are known
  (`calibration` says which); where none exists it is an assumption and `calibration` says so.
- `sleep_ua` (optional): the current between inferences when the core sleeps (datasheet), for
  the average power at a given inference rate.

Known weaknesses: one CPI for every operator (a memory-bound copy and a MAC loop differ on real
silicon); energy of data movement is counted only for memories that give a per-byte figure
(`energy_pj_per_byte`, no datasheet publishes one for on-chip SRAM); the supply current of the
datasheet is typical, not a maximum. The estimate is labelled as such wherever it is printed; a
power monitor (`mcugen measure --power`) measures the board itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: keys of a board's [energy] table; a "<key>_source" string must accompany each constant
CONSTANTS = ("supply_volts", "run_ua_per_mhz", "cycles_per_instruction")
#: constants a board may leave out when no source gives them (the estimate then omits what needs it)
OPTIONAL = ("sleep_ua",)


@dataclass(frozen=True)
class EnergyModel:
    """A board's energy model ([energy] in board.toml); `sources` maps each constant to where it
    comes from (a datasheet table, a calibration, or "assumed: ...")."""

    supply_volts: float
    run_ua_per_mhz: float
    cycles_per_instruction: float
    calibration: str
    sleep_ua: float | None = None
    sources: dict[str, str] = field(default_factory=dict)

    def run_watts(self, clock_hz: int) -> float:
        return self.supply_volts * self.run_ua_per_mhz * 1e-6 * clock_hz / 1e6

    def estimate(self, instructions: int, clock_hz: int, moved_pj: float = 0.0) -> Estimate:
        """Time and energy of `instructions` twin instructions at `clock_hz`, plus `moved_pj`
        picojoules of data movement priced by the board's memories."""
        seconds = instructions * self.cycles_per_instruction / clock_hz
        joules = self.run_watts(clock_hz) * seconds + moved_pj * 1e-12
        sleep = None if self.sleep_ua is None else self.sleep_ua * self.supply_volts
        return Estimate(seconds * 1e3, joules * 1e6, sleep)


@dataclass(frozen=True)
class Estimate:
    """An estimate per inference: milliseconds, microjoules, and the sleep power in microwatts
    (None when the board's model has no sleep current)."""

    ms: float
    uj: float
    sleep_uw: float | None

    def average_uw(self, per_second: float) -> float | None:
        """Average power at `per_second` inferences a second, sleeping in between; a rate the
        board cannot sustain gives the run power; None without a sleep current."""
        busy = self.ms * 1e-3 * per_second
        if busy >= 1.0:
            return self.uj / (self.ms * 1e-3)
        if self.sleep_uw is None:
            return None
        return self.uj * per_second + self.sleep_uw * (1.0 - busy)

    def as_json(self) -> dict[str, Any]:
        sleep = None if self.sleep_uw is None else round(self.sleep_uw, 1)
        return {"ms": round(self.ms, 3), "uj": round(self.uj, 1), "sleep_uw": sleep}


def energy_model(table: dict[str, Any] | None, board: str) -> EnergyModel | None:
    """Parse and check a board's [energy] table; None when the board has none. Raises ValueError
    (board.py turns it into one error line naming board.toml) for a missing constant or source."""
    if table is None:
        return None
    keys = CONSTANTS + OPTIONAL
    expected = set(keys) | {f"{k}_source" for k in keys} | {"calibration"}
    unknown = set(table) - expected
    if unknown:
        raise ValueError(f"[energy] of {board}: unknown keys {sorted(unknown)}")
    values: dict[str, float] = {}
    for key in CONSTANTS:
        if key not in table or f"{key}_source" not in table:
            raise ValueError(f"[energy] of {board}: {key} and {key}_source are required")
        values[key] = float(table[key])
        if values[key] <= 0:
            raise ValueError(f"[energy] of {board}: {key} must be positive")
    sleep = table.get("sleep_ua")
    if sleep is not None and (float(sleep) < 0 or "sleep_ua_source" not in table):
        raise ValueError(f"[energy] of {board}: sleep_ua must be >= 0 with sleep_ua_source")
    return EnergyModel(
        **values,
        calibration=str(table.get("calibration", "none")),
        sleep_ua=None if sleep is None else float(sleep),
        sources={k: str(table[f"{k}_source"]) for k in keys if f"{k}_source" in table},
    )


@dataclass(frozen=True)
class ReferenceRun:
    """A published measurement of a workload whose twin instructions are known: what a board's
    energy model is calibrated against (benchmarks/energy.py, tests/unit/test_energy.py)."""

    model: str
    instructions: int  # of the same build on the QEMU twin
    ms: float
    uj: float


#: MLPerf Tiny v0.5 closed/reference, NUCLEO-L4R5ZI at 120 MHz, TFLM with CMSIS-NN: latency ms and
#: energy uJ per inference (mlcommons/tiny_results_v0.5, as ../shared/ANCHORS.md quotes them), with
#: the instructions of TFLM 90b983c + CMSIS-NN 4ab83cc on the Cortex-M7 twin (ANCHORS.md "TFLM on
#: Cortex-M7": the same Thumb-2 + DSP code; no M4-twin count of that build is on record).
L4R5ZI_REFERENCE = (
    ReferenceRun("kws", 7_646_040, 181.9, 7_374.0),
    ReferenceRun("vww", 24_026_400, 600.6, 24_313.0),
    ReferenceRun("ic", 30_026_640, 704.2, 29_207.0),
    ReferenceRun("ad", 583_560, 10.05, 416.0),
)


def fitted_cpi(runs: tuple[ReferenceRun, ...], clock_hz: int) -> float:
    """The cycles per instruction that minimise the largest latency error over `runs` as a ratio
    (the geometric middle of the extreme per-run cycles per instruction), to 2 decimals."""
    ratios = [r.ms * 1e-3 * clock_hz / r.instructions for r in runs]
    return round((min(ratios) * max(ratios)) ** 0.5, 2)
