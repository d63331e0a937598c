"""What an operator's kernel lets the memory planner share: plain data, declared by its lowering.

The planner (mcugen/plan/aliasing.py) turns these facts into aliases for a given order; it knows no
operator by name. Each fact is a promise about the kernel in runtime_c/kernels/, and adding one to a
lowering needs that property checked in the kernel and a test against TFLM with sharing on
(docs/adding-a-kernel.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Window:
    """How a spatially local operator reads input 0 (NHWC, batch 1): output pixel (y, x) reads
    input rows y * stride - pad + k * dilation for k < kernel (columns likewise), skipping those
    outside the input as padding. A pointwise operator is the 1x1 window. Patch stages
    (mcugen/plan/patches) tile operators that declare one; the kernel must take an explicit
    (top, left, bottom, right) padding in the option `mcugen_explicit_padding` (rewrite.py)."""

    kernel: tuple[int, int] = (1, 1)
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    pad: tuple[int, int] = (0, 0)  # (top, left)
    #: multiply-accumulates per output element (a convolution's taps; 0 for the others)
    macs_per_output: int = 0
    #: The window applies to every non-constant input, not only input 0: element-wise operators
    #: of several inputs (ADD, MUL without spatial broadcasting, CONCATENATION along channels),
    #: whose kernels take any height and width as long as all those inputs share it. Constant
    #: inputs stay whole (they may broadcast along channels only).
    all_inputs: bool = False

    @property
    def pointwise(self) -> bool:
        return self.kernel == (1, 1) and self.stride == (1, 1) and self.pad == (0, 0)


#: An element-wise operator of one input: output element i depends on input element i only.
POINTWISE = Window()
#: An element-wise operator of several inputs: output pixel (y, x) reads pixel (y, x) of each.
ELEMENTWISE = Window(all_inputs=True)


@dataclass(frozen=True)
class OpTraits:
    """Sharing an operator's kernel allows (all off: nothing shared)."""

    #: The output is input 0's bytes unchanged; the kernel skips its copy when they coincide.
    view: bool = False
    #: Inputs the output may overwrite element for element: the kernel reads element i of every
    #: input before it writes element i, and never reads another element of an overwritten input.
    overwrites: tuple[int, ...] = ()
    #: The output may start at input 0's bytes and extend past them: the kernel writes from the
    #: last byte to the first, and each output element lies at or after the input element it reads.
    grows_over_input: bool = False
    #: Each input is one contiguous block of the output, in input order, and the kernel skips the
    #: copy of an input already at its block.
    input_blocks: bool = False
    #: Each input is a slice of the output's last axis, in input order (the output's other
    #: dimensions are the inputs'), and the kernel skips the copy of an input already at its
    #: slice: the planner may let a producer with `strided_output` write there (plan/aliasing.py
    #: step 3b, channel concatenation in place).
    channel_slices: bool = False
    #: The kernel writes its output with a pixel stride (elements between the starts of two
    #: consecutive positions of the last axis) taken from its node, so the output may be a slice
    #: of a wider tensor's last axis; the kernel variant decides (`Lowered.output_stride`).
    strided_output: bool = False
    #: The output may go over input 0 at the same address when the kernel gets this much staging
    #: scratch (it detects the shared pointer and stages what it still needs); None: never.
    staging_bytes: int | None = None
    #: The output may start this many bytes (or more) before input 0 in one buffer and run over
    #: it: the kernel computes output pixels in row-major order and writes no byte a later
    #: pixel's window still reads at that distance (mcugen/model/overlap.py). None: never.
    input_after: int | None = None
    #: The operator is spatially local over input 0 (its only non-constant input, or every
    #: non-constant input with `Window.all_inputs`) in this way, and its kernel runs on any
    #: window of it (patch stages); None: not tileable.
    window: Window | None = None
    #: The operator reads only the window of input 0 whose top-left pixel is (row, column) = this
    #: and whose height and width are the output's (NHWC, batch 1; patch stages' tile loads).
    reads_window: tuple[int, int] | None = None
    #: The output is input 0's bytes (in place, `overwrites` 0) with only the window at (row,
    #: column) = this, of input 1's height and width, written (patch stages' tile stores). With
    #: `reads_window` readers, the planner may lay a tensor those readers read over the output's
    #: later bytes when every byte is read before a store writes it (plan/aliasing.py step 6).
    writes_window: tuple[int, int] | None = None

    @property
    def shares(self) -> bool:
        return (
            self.view
            or bool(self.overwrites)
            or self.grows_over_input
            or self.input_blocks
            or self.channel_slices
            or self.strided_output
            or self.staging_bytes is not None
            or self.input_after is not None
            or self.reads_window is not None
            or self.writes_window is not None
        )


NO_TRAITS = OpTraits()
#: Operator index -> its traits; operators absent share nothing.
Traits = Mapping[int, OpTraits]
