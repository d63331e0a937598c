"""`mcugen ops`: the operators mcugen runs, each with its kernels (the reference kernel, bit-exact
with TFLM's, and the optimised variants that take over for the shapes they handle), read from
the lowering and variant registries, so the list is what the code does. The element types an
operator accepts are checked by its lowering, whose error names them (e.g. "tensor 3 has type
uint8; supported: int8, float32")."""

from __future__ import annotations

import argparse
import json

from mcugen.codegen.lower import supported_opcodes
from mcugen.codegen.lower._variants import VARIANTS
from mcugen.errors import McugenError


def operator_rows() -> list[dict[str, object]]:
    """One row per supported opcode: its name and its optimised variants (name, cores, what they
    handle). mcugen's own custom operators (in the training graphs and patch tiles it builds, never
    in a user's model) are marked."""
    rows = []
    for code in sorted(supported_opcodes()):
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
        rows.append({"operator": code, "internal": internal, "variants": variants})
    return rows


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
    for r in rows:
        variants = r["variants"]
        assert isinstance(variants, list)
        names = ", ".join(str(v["name"]) for v in variants)
        extra = f"  optimised: {names}" if names else ""
        mark = "  (mcugen's own: training graphs, patch tiles)" if r["internal"] else ""
        print(f"  {r['operator']:<32}{extra}{mark}".rstrip())
        if args.operator:
            for v in variants:
                cores = ", ".join(v["cores"]) if v["cores"] else "any core"
                print(f"    {v['name']} ({cores}): {v['handles']}")
    return 0
