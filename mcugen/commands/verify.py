"""`mcugen verify`: the device's outputs against TFLM's interpreter; exit 1 on a mismatch."""

from __future__ import annotations

import argparse

from mcugen.commands._common import generate_for, inputs_for, require_location, target_for
from mcugen.host.verify import verify


def cmd_verify(args: argparse.Namespace) -> int:
    target = target_for(args)
    require_location(target, args.port)
    gen = generate_for(args, target)
    samples = inputs_for(args, gen, args.samples)
    report = verify(gen, target, samples, port=args.port)
    print(report.text())
    return 0 if report.ok else 1
