"""`mcugen ops`: the operators mcugen runs, each with the element types of its data input and its
kernels (the reference kernel, bit-exact with TFLM's, and the optimised variants that take over
for the shapes they handle), read from the lowering and variant registries, so the list is what
the code does: the types are the ones each lowering declares with its registration and
`lower` enforces (e.g. "tensor 3 has type uint8; supported: int8, float32"). The operators with
an onnxruntime-numerics kernel (runtime_c/kernels/reference/ort_*.c, the ONNX import's
`--onnx-numerics ort`) are read from the ort lowerings' registry the same way."""

from __future__ import annotations

import argparse
import json

from mcugen.codegen.lower import LOWERINGS, supported_opcodes
from mcugen.codegen.lower._common import ANY_TYPE
from mcugen.codegen.lower._ort import ORT_LOWERINGS
from mcugen.codegen.lower._variants import VARIANTS
from mcugen.errors import McugenError

#: The order types are printed in.
TYPE_ORDER = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


def type_names(types: tuple[str, ...]) -> list[str]:
    """The declared types in a reading order (integers by width, then floats, then bool)."""
    rank = {t: i for i, t in enumerate(TYPE_ORDER)}
    return sorted(types, key=lambda t: (rank.get(t, len(rank)), t))


def operator_rows() -> list[dict[str, object]]:
    """One row per supported opcode: its name, the element types of its data input ("any" for the
    operators that only move bytes), and its optimised variants (name, cores, what they handle).
    mcugen's own custom operators (in the training graphs and patch tiles it builds, never in a
    user's model) are marked."""
    rows = []
    for code in sorted(supported_opcodes()):
        entry = LOWERINGS[code]
        types = ["any"] if set(entry.types) == set(ANY_TYPE) else type_names(entry.types)
        variants = [
            {
                "name": v.name,
                "cores": sorted(v.cores) if v.cores is not None else None,
                "handles": v.handles,
            }
            for v in VARIANTS
            if code in v.opcodes
        ]
        internal = code.startswith("CUSTOM:Mcugen")
        ort = ORT_LOWERINGS.get(code)
        rows.append(
            {
                "operator": code,
                "types": types,
                "data_input": entry.data_input,
                "internal": internal,
                "variants": variants,
                "ort": ort.__module__.replace(".", "/") + ".py" if ort is not None else None,
            }
        )
    return rows


HELP = "list the operators mcugen runs and their kernels"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("operator", nargs="?", help="one operator: its optimised kernels in full")
    p.add_argument("--json", action="store_true", help="print one JSON array")


def cmd_ops(args: argparse.Namespace) -> int:
    rows = operator_rows()
    if args.operator:
        wanted = args.operator.upper()
        rows = [r for r in rows if r["operator"] == wanted]
        if not rows:
            raise McugenError(
                f"mcugen does not run operator {args.operator!r}",
                hint="`mcugen ops` lists the ones it runs",
            )
    if args.json:
        print(json.dumps(rows))
        return 0
    if not args.operator:
        print(f"mcugen runs {len(rows)} operators (reference kernels bit-exact with TFLM's):")
        print(f"  {'operator':<44}{'element types of its data input':<38}optimised kernels")
    for r in rows:
        variants = r["variants"]
        assert isinstance(variants, list)
        names = ", ".join(str(v["name"]) for v in variants)
        extra = (names + " [ort]" if names else "[ort]") if r["ort"] else names
        mark = "  (mcugen's own: training graphs, patch tiles)" if r["internal"] else ""
        types = r["types"]
        assert isinstance(types, list)
        print(f"  {r['operator']:<44}{', '.join(types):<38}{extra}{mark}".rstrip())
        if args.operator:
            for v in variants:
                cores = ", ".join(v["cores"]) if v["cores"] else "any core"
                print(f"    {v['name']} ({cores}): {v['handles']}")
            if r["ort"]:
                print(
                    f"    onnxruntime's arithmetic (ONNX, --onnx-numerics ort): int8, its own "
                    f"reference kernel (runtime_c/kernels/reference/ort_*.c, lowered by {r['ort']})"
                )
            if r["data_input"]:
                print(f"    the types are those of input {r['data_input']} (its data)")
    if not args.operator:
        ort = sum(1 for r in rows if r["ort"])
        print(
            f"{ort} marked [ort] also have a kernel with onnxruntime's arithmetic, run for ONNX "
            "models with --onnx-numerics ort (the default; docs/onnx.md)"
        )
    return 0
