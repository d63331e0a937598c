"""What the kernel choice for memory did to a plan (issue 34 item 1), as plain data the reports
read: the arena every layer's fastest kernel would take, the arena of the reference kernels (what
a plan chosen for memory never exceeds) and the layers given a kernel with less scratch. The
choice itself is made in mcugen/kernel_choice.py, which lowers and plans."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KernelSwap:
    """One layer that runs a slower kernel with less scratch than its fastest."""

    op: int
    opcode: str
    fastest: str  # the variant speed alone picks
    chosen: str  # the variant it runs ("reference": TFLM's reference kernel)
    fastest_scratch: int
    chosen_scratch: int
    macs: int
    #: instructions per inference the swap adds, estimated from per-MAC rates measured on the
    #: M4 twin (kernel_choice.PER_MAC); None when a kernel has no measured rate
    added_instructions: int | None = None


@dataclass(frozen=True)
class KernelChoice:
    """The kernel policy's outcome: `fastest_arena` with every layer's fastest kernel, `bound`
    the arena with the reference kernels, `swaps` the layers changed (none: the fastest kernels
    kept), and why they were kept when they were (`kept_because`)."""

    policy: str
    fastest_arena: int
    bound: int
    swaps: tuple[KernelSwap, ...] = ()
    kept_because: str = ""

    @property
    def swapped_macs(self) -> int:
        return sum(s.macs for s in self.swaps)

    @property
    def added_instructions(self) -> int:
        """The swaps' estimated instructions per inference (those with a rate)."""
        return sum(s.added_instructions or 0 for s in self.swaps)

    def as_json(self) -> dict[str, object]:
        return {
            "policy": self.policy,
            "fastest_arena": self.fastest_arena,
            "reference_arena": self.bound,
            "kept_because": self.kept_because,
            "swapped_macs": self.swapped_macs,
            "added_instructions_estimate": self.added_instructions,
            "swaps": [
                {
                    "op": s.op,
                    "opcode": s.opcode,
                    "fastest": s.fastest,
                    "chosen": s.chosen,
                    "fastest_scratch": s.fastest_scratch,
                    "chosen_scratch": s.chosen_scratch,
                    "macs": s.macs,
                    "added_instructions_estimate": s.added_instructions,
                }
                for s in self.swaps
            ],
        }
