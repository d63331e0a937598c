"""The device's outputs against the reference, sample by sample (`mcugen verify`): TFLM's
interpreter, or onnxruntime for an ONNX model with its numerics (`--onnx-numerics ort`)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcugen.boards import Target
from mcugen.firmware.compile import build
from mcugen.model.load import reference_flatbuffer
from mcugen.model.numerics import float_nodes_note, uses_ort
from mcugen.pipeline import Generated
from mcugen.plan.ram_use import RamUse
from mcugen.reference import first_difference, onnxruntime_outputs, tflm_outputs

FLOAT_RTOL = 1e-5


@dataclass(frozen=True)
class VerifyReport:
    target: str
    samples: int
    mismatches: list[str]
    per_inference: list[int]
    unit: str
    ram: RamUse | None = None  # the linked firmware's RAM (a Cortex-M board)
    reference: str = "TFLM"  # what the outputs were compared with
    hint: str = ""  # why they may differ (the nodes onnxruntime runs in float)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def as_json(self) -> dict[str, Any]:
        """`mcugen verify --json`: the verdict, counts and the RAM as `plan --json` names it."""
        return {
            "target": self.target,
            "samples": self.samples,
            "ok": self.ok,
            "mismatches": self.mismatches,
            "per_inference": self.per_inference,
            "unit": self.unit or None,
            "ram": self.ram.as_json() if self.ram is not None else None,
            "reference": self.reference,
            "hint": self.hint or None,
        }

    def text(self) -> str:
        head = (
            f"mcugen: verify on {self.target}: {self.samples} samples, "
            f"{f'all outputs match {self.reference}' if self.ok else 'MISMATCH'}"
        )
        lines = [head]
        if self.per_inference:
            counts = sorted(set(self.per_inference))
            lines.append(f"  per inference: {', '.join(f'{c:,}' for c in counts)} {self.unit}")
        if self.ram is not None:
            lines.append(f"  {self.ram.text()}")
        lines.extend(f"  {m}" for m in self.mismatches)
        if self.hint and not self.ok:
            lines.append(f"  {self.hint}")
        return "\n".join(lines)


def device_outputs(
    gen: Generated, target: Target, samples: list[list[np.ndarray]], port: str | None
) -> tuple[list[list[np.ndarray]], list[int], str, RamUse | None]:
    """Outputs, counts per inference, their unit and the linked RAM (None on the host)."""
    with tempfile.TemporaryDirectory(prefix="mcugen-verify-") as tmp:
        result = build(gen, target, Path(tmp) / "project")
        if target.board.is_host:
            from mcugen.link.host_run import run_host

            return run_host(result.executable, gen.graph, samples).outputs, [], "", None
        from mcugen.firmware.sizes import firmware_sizes, linked_ram
        from mcugen.link.device_run import open_device, run_samples

        ram = linked_ram(firmware_sizes(result.executable, target), gen.plan)
        with open_device(target, result.executable, None if target.emulate else port) as link:
            run = run_samples(link, gen.graph, samples, emulated=target.emulate)
        counts = [run.instructions(t) for t in run.ticks_per_inference]
        return run.outputs, counts, run.unit, ram


def verify(
    gen: Generated, target: Target, samples: list[list[np.ndarray]], *, port: str | None
) -> VerifyReport:
    ours, counts, unit, ram = device_outputs(gen, target, samples, port)
    ref, reference = reference_outputs(gen, samples)
    mismatches = []
    for k, (o_sample, r_sample) in enumerate(zip(ours, ref, strict=True)):
        for j, (o, r) in enumerate(zip(o_sample, r_sample, strict=True)):
            found = first_difference(o, r, FLOAT_RTOL)
            if found is not None:
                count, first = found
                name = gen.graph.tensors[gen.graph.outputs[j]].name or str(j)
                mismatches.append(
                    f"sample {k}, output {name}: {count}/{o.size} elements differ, first at "
                    f"flat index {first}: device {o.ravel()[first]}, {reference} "
                    f"{r.reshape(o.shape).ravel()[first]}"
                )
    note = float_nodes_note(gen.graph) if reference == "onnxruntime" else None
    hint = f"{note}: the differences can come from there" if note else ""
    return VerifyReport(target.label, len(samples), mismatches, counts, unit, ram, reference, hint)


def reference_outputs(
    gen: Generated, samples: list[list[np.ndarray]]
) -> tuple[list[list[np.ndarray]], str]:
    """The reference's outputs and its name: onnxruntime for an ONNX model imported with its
    numerics (mcugen/model/numerics.py), else TFLM on the model (an ONNX model's import with
    TFLite's numerics)."""
    if gen.source and uses_ort(gen.graph):
        return onnxruntime_outputs(gen.source, gen.graph, samples), "onnxruntime"
    model = reference_flatbuffer(gen.source) if gen.source else b""
    return tflm_outputs(model, gen.graph, samples), "TFLM"
