"""The text of `mcugen measure --mlperf` and `--power`: the MLPerf Tiny runner's figures, the
latency they give, the comparison with TFLM, and the energy a power monitor measured."""

from __future__ import annotations

from typing import Any

from mcugen.boards import Target


def values_text(values: list[float], limit: int = 12) -> str:
    shown = ", ".join(f"{v:.3f}" for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}] ({len(values)} values)"


def print_energy(e: dict[str, Any], rounds: int) -> None:
    print(
        f"  energy: {e['uj_per_inference']:,.3f} uJ per inference, {e['mw']:,.3f} mW at "
        f"{e['volts']:.2f} V; standard deviation {e['std_uj']:,.3f} uJ over {rounds} rounds "
        f"({e['min_uj']:,.3f} to {e['max_uj']:,.3f})"
    )
    print(f"  {e['count']} inferences measured by {e['monitor']} at {e['rate_hz']:,.0f} samples/s")


def print_mlperf(target: Target, r: dict[str, Any]) -> None:
    print(
        f"  device: {r['dut']}, {r['profile']}, model {r['model_id']}, "
        f"timestamp mode {r['timestamp_mode']}"
    )
    if "rounds" in r:  # measured by a power monitor: the GPIO marks timed the loop
        print(f"  infer {r['count']} {r['warmup']}, {r['rounds']} times, timed by the GPIO marks")
        print_latency(target, r)
    elif r["lap_us"] is None:
        print(
            f"  infer {r['count']} {r['warmup']}: the timed loop was marked on the timestamp "
            f"pin ({target.port_board.timestamp_pin}), no m-lap-us lines (energy mode)"
        )
    else:
        first, last = r["lap_us"]
        print(
            f"  infer {r['count']} {r['warmup']}: m-lap-us {first} -> {last} "
            f"({last - first} us for {r['count']} inferences)"
        )
        print_latency(target, r)
    s = r["sizes"]
    print(
        f"  arena: {r['arena_bytes']} bytes; flash {s['flash_bytes']} of {s['flash_limit']} bytes; "
        f"RAM {s['ram_bytes']} of {s['ram_limit']}"
    )
    print(f"  results: {values_text(r['results'])}")
    if r["agree"] is None:
        print(f"  TFLM:    {r['comparison_note']}")
        return
    print(f"  TFLM:    {values_text(r['tflm'])}")
    if r["agree"]:
        print(f"  results agree with TFLM to 3 decimals (max difference {r['max_abs_diff']:.4f})")
    elif r["first_difference"] is None:
        print(f"  results DISAGREE with TFLM: {r['comparison_note']}")
    else:
        k = r["first_difference"]
        print(
            f"  results DISAGREE with TFLM at 3 decimals: element {k} device "
            f"{r['results'][k]:.3f}, TFLM {r['tflm'][k]:.3f}"
        )


def print_latency(target: Target, r: dict[str, Any]) -> None:
    us = r["us_per_inference"]
    if r["emulated"]:
        n = r["instructions_per_inference"]
        print(
            f"  latency: {us:,.1f} us of QEMU virtual time per inference = {n:,} instructions "
            "(-icount shift=0: 1 instruction = 1 ns)"
        )
    else:
        print(
            f"  latency: {us:,.1f} us per inference = {r['cycles_per_inference']:,} cycles at "
            f"{target.board.clock_hz / 1e6:.0f} MHz"
        )
