"""Build-time validation of untrusted models (mcugen/model/validate.py and the lowerings' checks):
each invalid model is one clear error naming the rule and where, never a traceback, C that does
not compile or a kernel reading past its data. One regression test per failure the fuzzer
(benchmarks/fuzz.py) found."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mcugen.cli import main
from mcugen.codegen.lower import lower
from mcugen.codegen.render import c_string
from mcugen.errors import McugenError, ModelError, UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph, Quantization
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.pipeline import generate


def fc_model(
    in_shape: tuple[int, ...] = (1, 16),
    w_shape: tuple[int, int] = (4, 16),
    bias_len: int | None = 4,
    scales: tuple[float, float, float] = (0.1, 0.01, 0.2),
) -> bytes:
    rng = np.random.default_rng(0)
    b = GraphBuilder()
    x = b.input(in_shape, "int8", scale=scales[0], zero_point=3)
    y = b.activation((1, w_shape[0]), "int8", scale=scales[2], zero_point=-2)
    w = b.const(rng.integers(-127, 128, w_shape, dtype=np.int8), scale=scales[1])
    bias = -1 if bias_len is None else b.const(np.arange(bias_len, dtype=np.int32), scale=0.001)
    b.op("FULLY_CONNECTED", [x, w, bias], [y])
    b.output(y)
    return b.tflite()


def conv_graph(in_c: int = 3, out_hw: int = 4, stride: int = 1, dilation: int = 1) -> Graph:
    """One SAME CONV_2D, 3x3 over 4x4."""
    b = GraphBuilder()
    x = b.input((1, 4, 4, in_c), "int8", scale=0.1)
    y = b.activation((1, out_hw, out_hw, 2), "int8", scale=0.2)
    w = b.const(np.ones((2, 3, 3, max(in_c, 1)), np.int8), scale=[0.01, 0.02], axis=0)
    b.op("CONV_2D", [x, w, b.const(np.zeros(2, np.int32), scale=0.001)], [y], padding=0,
         stride_h=stride, stride_w=stride, dilation_h_factor=dilation,
         dilation_w_factor=dilation)  # fmt: skip
    b.output(y)
    return b.graph()


def conv_model(**kwargs: int) -> bytes:
    return write_model(conv_graph(**kwargs))


def with_tensor(data: bytes, index: int, **changes: object) -> bytes:
    g = import_model(data)
    tensors = list(g.tensors)
    tensors[index] = replace(tensors[index], **changes)  # type: ignore[arg-type]
    return write_model(replace(g, tensors=tuple(tensors)))


def rejected(data: bytes) -> McugenError:
    """The error importing, planning and lowering `data` raises (it must raise one)."""
    with pytest.raises(McugenError) as info:
        generate(import_model(data, source="m.tflite"))
    return info.value


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if code:
        assert len(lines) == 1 and lines[0].startswith("mcugen: error: "), err
    return code, err


def test_the_valid_models_pass() -> None:
    generate(import_model(fc_model()))
    generate(import_model(conv_model()))


@pytest.mark.parametrize("scale", [math.nan, math.inf, 0.0, -0.5])
def test_a_scale_not_finite_and_positive_is_rejected_at_import(scale: float) -> None:
    """It reached round_half_away, requant_params and add_rescales as an internal error."""
    data = with_tensor(fc_model(), 0, quant=Quantization((scale,), (3,)))
    error = rejected(data)
    assert isinstance(error, ModelError)
    assert "tensor 0" in error.what and "finite and positive" in error.what


@pytest.mark.parametrize("zero_point", [2**40, 128, -129])
def test_a_zero_point_outside_its_type_is_rejected(zero_point: int) -> None:
    """2^40 produced C that did not compile."""
    data = with_tensor(fc_model(), 0, quant=Quantization((0.1,), (zero_point,)))
    assert f"zero point {zero_point}, outside [-128, 127]" in rejected(data).what


def test_a_tensor_too_large_for_32_bit_arithmetic_is_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dimension of 2^31-1 wrapped uint32 byte counts in the C tables, and `run` allocated its
    random inputs at the declared 2^31-1 x 2^31-1 before checking anything (MemoryError)."""
    data = with_tensor(fc_model(), 0, shape=(2**31 - 1, 2**31 - 1))
    assert "more than the 2^31-1" in rejected(data).what
    path = tmp_path / "huge.tflite"
    path.write_bytes(data)
    code, err = cli(["run", str(path), "--board", "host"], capsys)
    assert code == 2 and "tensor 0" in err


def test_a_constant_graph_input_is_rejected() -> None:
    """The host harness wrote the input into read-only data: SIGSEGV."""
    g = import_model(fc_model())
    data = write_model(replace(g, inputs=(*g.inputs, 2)))
    assert "subgraph input tensor 2" in rejected(data).what and "constant" in rejected(data).what


def test_weights_marked_variable_are_rejected() -> None:
    """A variable's buffer is not its value: TFLM zeroes variables, and so does mcugen (its data
    is ignored, as converters write zeros there), so weights marked variable are not constant and
    the operator that needs them constant says so."""
    data = with_tensor(fc_model(), 2, is_variable=True)
    assert "non-constant weights are not supported" in rejected(data).what


def test_a_model_without_inputs_or_with_an_empty_input_is_rejected() -> None:
    g = import_model(fc_model())
    assert "has no inputs" in rejected(write_model(replace(g, inputs=()))).what
    data = with_tensor(fc_model(), 0, shape=(0, 16))
    assert "is empty" in rejected(data).what


def test_fully_connected_input_smaller_than_its_filter_is_rejected() -> None:
    """The kernel read accumulation-depth rows past the input, in the arena."""
    error = rejected(fc_model(in_shape=(1, 8), w_shape=(4, 16)))
    assert isinstance(error, ModelError)
    assert "operator 0 (FULLY_CONNECTED)" in error.what and "16 inputs" in error.what


def test_fully_connected_bias_shorter_than_the_output_depth_is_rejected() -> None:
    """The kernel read past the bias's constant array while `run` reported success."""
    error = rejected(fc_model(bias_len=2))
    assert "bias has 2 elements; expected 4" in error.what


def test_fully_connected_filter_must_be_2d() -> None:
    data = with_tensor(fc_model(), 2, shape=(64,))  # the filter, same 64 bytes
    assert "is not 2-D" in rejected(data).what


def test_conv_without_input_channels_is_rejected() -> None:
    """Zero input channels reached a modulo in lower_conv_2d (ZeroDivisionError). An empty
    graph input is rejected at import now, so the lowering is called on the graph directly."""
    g = conv_graph(in_c=0)
    with pytest.raises(UnsupportedError, match=r"operator 0 \(CONV_2D\): filter depth 1"):
        lower(g, g.operators[0])


def test_conv_output_size_must_be_the_computed_one() -> None:
    assert "are not the computed (4, 4)" in rejected(conv_model(out_hw=3)).what


def test_window_arithmetic_must_fit_int32() -> None:
    """A dilation of 2^30 put the padding beyond int32: C that did not compile, or UB."""
    error = rejected(conv_model(dilation=2**30))
    assert "32-bit window arithmetic" in error.what


@pytest.mark.parametrize("output_scale", [1e-30, 1e30])
def test_rescale_factors_needing_shifts_over_30_bits_are_rejected(output_scale: float) -> None:
    """Tiny or huge scales gave shifts of 32 to 139 bits (undefined behaviour in the kernels).
    Factors below 2^-31 flush to zero as in TFLM; those above 2^30 are rejected."""
    data = fc_model(scales=(0.1, 0.01, output_scale))
    if output_scale > 1:
        generate(import_model(data))  # rescale ~1e-33: flushed to a zero multiplier
        return
    error = rejected(data)
    assert isinstance(error, UnsupportedError)
    assert "operator 0 (FULLY_CONNECTED)" in error.what and "left shift" in error.what


def test_a_fused_activation_of_an_infinite_quantized_value_is_rejected() -> None:
    """RELU6 of an input scale so small that 6 / scale overflows float32: OverflowError."""
    b = GraphBuilder()
    x = b.input((1, 4), "int8", scale=1e-45)
    y = b.activation((1, 4), "int8", scale=1e-45)
    b.op("RELU6", [x], [y])
    b.output(y)
    error = rejected(b.tflite())
    assert "operator 0 (RELU6)" in error.what and "inf" in error.what


def test_an_operator_without_operands_plans_and_fails_to_lower_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An operator with no inputs reached the planner's staging code."""
    g = import_model(conv_model())
    conv = replace(g.operators[0], inputs=())
    data = write_model(replace(g, operators=(conv,)))
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    assert cli(["plan", str(path)], capsys)[0] == 0
    assert "operator 0 (CONV_2D): expected 2 or 3 inputs" in rejected(data).what


def test_an_int16_average_pool_whose_window_sum_overflows_is_rejected() -> None:
    b = GraphBuilder()
    x = b.input((1, 256, 256, 1), "int16", scale=0.01)
    y = b.activation((1, 1, 1, 1), "int16", scale=0.01)
    b.op("AVERAGE_POOL_2D", [x], [y], padding=1, stride_h=256, stride_w=256,
         filter_height=256, filter_width=256)  # fmt: skip
    b.output(y)
    assert "window of 65536 int16 values overflows" in rejected(b.tflite()).what


def test_softmax_output_must_have_the_input_shape() -> None:
    """TFLM wrote garbage for an output of the same size but another shape (fuzzer mismatch)."""
    b = GraphBuilder()
    x = b.input((2, 8), "int8", scale=0.1)
    y = b.activation((2, 1, 8), "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [x], [y], beta=1.0)
    b.output(y)
    assert "output shape (2, 1, 8) is not the input's (2, 8)" in rejected(b.tflite()).what


def test_a_view_that_reads_its_input_twice_is_not_aliased() -> None:
    """RESHAPE(x, shape=x): the view aliased its output over an input it also read through its
    other operand, and the plan's own validation raised (internal error)."""
    b = GraphBuilder()
    x = b.input((1, 8), "int8", scale=0.1)
    r = b.activation((2, 4), "int8", scale=0.1)
    b.op("RESHAPE", [x, x], [r])
    y = b.activation((2, 4), "int8", scale=0.1)
    b.op("RELU", [r], [y])
    b.output(y)
    generate(import_model(b.tflite()))


def test_names_from_the_file_never_break_the_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tensor name holding line breaks and control characters split the error over lines; they
    are escaped, as \\xNN or \\uNNNN."""
    name = "seq\nout\rput\x0b\x1c\u2028\x1b[31mred"
    data = with_tensor(fc_model(), 0, name=name, quant=Quantization((math.nan,), (3,)))
    line = rejected(data).line()
    assert line.isprintable() and "seq\\x0aout\\x0dput\\x0b\\x1c\\u2028\\x1b[31mred" in line
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    assert cli(["plan", str(path)], capsys)[0] == 2  # one line, checked by cli()


@pytest.mark.parametrize("name", ["a/*b", "x*/y", "??/", "\xff\xff/", 'q"\\'])
def test_names_from_the_file_never_break_the_generated_c(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tensor name with "/*" (or a trigraph such as "??/") made model.c fail to compile."""
    text = c_string(name)
    assert "/*" not in text and "*/" not in text and "??" not in text and "\\" not in text
    data = with_tensor(fc_model(), 0, name=name)
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    assert cli(["build", str(path), "--board", "host", "-o", str(tmp_path / "out")], capsys)[0] == 0


def test_a_truncated_file_is_named_without_python_internals() -> None:
    data = fc_model()
    for cut in range(8, len(data), 41):
        try:
            import_model(data[:cut])
        except ModelError as exc:
            assert "unpack" not in exc.line() and "Error" not in exc.line(), exc.line()


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_an_option_that_is_not_a_finite_number_is_rejected(value: float) -> None:
    """Found by the fuzzer: an LSTM's cell_clip of NaN reached a float-to-int conversion."""
    b = GraphBuilder()
    x = b.input((1, 8), "float32")
    y = b.activation((1, 8), "float32")
    b.op("SOFTMAX", [x], [y], beta=value)
    b.output(y)
    with pytest.raises(ModelError, match=r"operator 0 \(SOFTMAX\): option beta is .*not a finite"):
        import_model(b.tflite())
