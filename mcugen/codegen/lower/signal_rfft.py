"""CUSTOM:SignalRfft (TFLM signal library), int16: real FFT of each row, zero-padded to fft_length.

TFLM runs kissfft v130's kiss_fftr in 16-bit fixed point; this lowering computes what
kiss_fftr_alloc computes at Init, with the same double-precision formulas: the radix stages of
the half-length complex FFT (kf_factor: 4s first, then 2, 3, 5, ...), its twiddles
floor(0.5 + 32767 cos/sin(-2 pi k / n)), the real split's twiddles at -pi ((k + 1) / n + 0.5), and
where each position of the complex FFT starts (the leaves kf_work copies the input to).

As TFLM's RfftPrepare: 1 input, 1 output of one rank, both of the type the options' T names.
Beyond it: T must be int16 (float32 and int32 are not implemented); fft_length even in [4, 32768]
(kissfft rejects odd lengths, and the tables index with int16), and its half must factor into
radices 2..5 (kissfft's generic radix needs a heap buffer TFLM's build does not give it); the
input's rows at most fft_length long; the output's rows exactly fft_length + 2 values (the
fft_length / 2 + 1 complex bins kissfft writes), as many rows as the input.
"""

from __future__ import annotations

import math

from mcugen.codegen.lower import Array, Lowered, register
from mcugen.codegen.lower._common import invalid, unsupported
from mcugen.codegen.lower._signal import counts, operand, options, result
from mcugen.model.ir import Graph, Operator

TENSOR_TYPE_INT16 = 7
MAX_FFT_LENGTH = 32768
RADICES = (2, 3, 4, 5)
Q15_MAX = 32767
#: kissfft's two spellings of pi (kiss_fft.c and kiss_fftr.c); both round to math.pi.
PI = 3.141592653589793238462643383279502884197169399375105820974944


def kiss_factors(n: int) -> list[tuple[int, int]]:
    """kf_factor: (radix, remaining length) per stage, 4s first, then 2, 3, 5, 7, ...; a radix
    above floor(sqrt(n)) of the original n jumps straight to the remaining length."""
    stages = []
    p = 4
    floor_sqrt = math.floor(math.sqrt(float(n)))
    while True:
        while n % p:
            p = 2 if p == 4 else 3 if p == 2 else p + 2
            if p > floor_sqrt:
                p = n
        n //= p
        stages.append((p, n))
        if n <= 1:
            return stages


def _q15_cexp(phase: float) -> tuple[int, int]:
    """kf_cexp with FIXED_POINT: floor(.5 + SAMP_MAX * cos/sin(phase)) as int16."""
    return (
        math.floor(0.5 + Q15_MAX * math.cos(phase)),
        math.floor(0.5 + Q15_MAX * math.sin(phase)),
    )


def twiddles(n: int) -> tuple[int, ...]:
    """kiss_fft_alloc's forward twiddles of an n-point FFT, (re, im) interleaved."""
    return tuple(v for i in range(n) for v in _q15_cexp(-2 * PI * i / n))


def split_twiddles(n: int) -> tuple[int, ...]:
    """kiss_fftr_alloc's super_twiddles for a complex FFT of n points (n / 2 of them)."""
    return tuple(v for i in range(n // 2) for v in _q15_cexp(-PI * ((i + 1) / n + 0.5)))


def leaf_index(stages: list[tuple[int, int]]) -> tuple[int, ...]:
    """Position -> the input pair kf_work's leaves copy there. A position is sum(k_s * m_s) over
    the stages (digit k_s < radix_s, m_s the stage's remaining length); its input is
    sum(k_s * fstride_s), fstride_s the product of the radices before stage s."""
    n = stages[0][0] * stages[0][1]
    sources = []
    for pos in range(n):
        rest, source, fstride = pos, 0, 1
        for radix, m in stages:
            digit, rest = divmod(rest, m)
            source += digit * fstride
            fstride *= radix
        sources.append(source)
    return tuple(sources)


@register("CUSTOM:SignalRfft", types=("int16",))
def lower_signal_rfft(graph: Graph, op: Operator) -> Lowered:
    counts(op, 1, 1)
    opts = options(op, ("T", "fft_length"))
    if opts["T"] != TENSOR_TYPE_INT16:
        raise unsupported(op, f"tensor type {opts['T']} (only int16, type 7, is implemented)")
    x = operand(graph, op, 0, "int16")
    y = result(graph, op, 0, "int16", rank=len(x.shape))
    length = opts["fft_length"]
    if length % 2 or not 4 <= length <= MAX_FFT_LENGTH:
        raise unsupported(op, f"fft_length {length} is not even in [4, {MAX_FFT_LENGTH}]")
    stages = kiss_factors(length // 2)
    if any(radix not in RADICES for radix, _ in stages):
        raise unsupported(op, f"fft_length / 2 = {length // 2} has a prime factor above 5")
    if not x.shape or not 1 <= x.shape[-1] <= length:
        raise invalid(op, f"input rows of shape {x.shape} must hold 1..fft_length values")
    rows = x.num_elements // x.shape[-1]
    if y.shape[-1] != length + 2 or y.num_elements != rows * (length + 2):
        raise invalid(op, f"output shape {y.shape} is not {rows} rows of fft_length + 2 values")
    params = (
        ("fft_length", length),
        ("num_stages", len(stages)),
        ("stages", Array("int32_t", tuple(v for stage in stages for v in stage))),
        ("twiddles", Array("int16_t", twiddles(length // 2))),
        ("super_twiddles", Array("int16_t", split_twiddles(length // 2))),
        ("leaf_index", Array("int16_t", leaf_index(stages))),
    )
    return Lowered(
        "signal_rfft", "mcu_signal_rfft_int16", "mcu_signal_rfft_params_t", params, length * 2
    )
