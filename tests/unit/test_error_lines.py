"""Error lines stay short and printable whatever a model file holds (issue 31, item 15): a quoted
part (a name, a shape, a number, a list) is cut at about 200 characters with an ellipsis and the
count left out, non-printable characters are escaped, runs of U+FFFD collapse, a prefix said twice
is said once. Checked on McugenError.line() directly, on the models that printed the long lines,
and on a few hundred fuzz mutants (benchmarks/fuzz_mutants.py) through the CLI and codegen."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

from mcugen.cli import main
from mcugen.codegen.lower import lower
from mcugen.errors import McugenError, ModelError, UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import benchmark_module

LINE_MAX = 400  # McugenError.LINE_BUDGET
FUZZ_MUTANTS, FUZZ_SEED = 300, 2026


def repeats_a_segment(line: str) -> bool:
    segments = line.split(": ")
    return any(a == b for a, b in zip(segments, segments[1:], strict=False))


def assert_short_and_printable(line: str) -> None:
    assert len(line) <= LINE_MAX, f"{len(line)} characters: {line[:300]}"
    assert line.isprintable(), line[:300]
    assert not repeats_a_segment(line), line[:300]


# --- McugenError.line() ------------------------------------------------------------------------


def test_a_short_line_is_unchanged() -> None:
    err = ModelError("tensor 3 (t3) of shape (1, 4) is empty", where="m.tflite", hint="re-export")
    assert err.line() == "m.tflite: tensor 3 (t3) of shape (1, 4) is empty; re-export"
    assert str(err) == err.line()


def test_a_long_shape_is_cut_at_an_item_with_the_count_left_out_and_its_bracket() -> None:
    dims = ", ".join(str(1701080941 + k) for k in range(2000))
    err = ModelError(f"dynamic or negative shape ({dims})", where="m.tflite, tensor 59", hint="fix")
    line = err.line()
    assert_short_and_printable(line)
    shown = line[line.index("(") + 1 : line.index("…")]
    assert shown.endswith(", ") and len(shown) <= 200
    left = int(line[line.index("…[") + 2 : line.index(" more")].replace(",", ""))
    assert len(shown) + left == len(dims)
    assert line.endswith(" more characters]); fix")


def test_a_name_of_replacement_characters_and_control_characters() -> None:
    name = "conv\x00\x07\n" + "\ufffd" * 16000 + "/Relu\x1b[31m\u2028\U000e0001"
    err = ModelError(f"tensor 1 ({name}) has quantization scale nan", where="m.tflite")
    line = err.line()
    assert_short_and_printable(line)
    assert "(conv\\x00\\x07\\x0a\ufffd×16000/Relu\\x1b[31m\\u2028\\U000e0001)" in line


def test_a_long_name_keeps_the_rest_of_the_message() -> None:
    name = "functional_1/activation_4/Relu;" * 40
    err = ModelError(f"tensor 9 ({name}) of type int32 has zero point 2, outside [-128, 127]")
    line = err.line()
    assert_short_and_printable(line)
    assert line.startswith("tensor 9 (functional_1/")
    assert line.endswith(" more characters];) of type int32 has zero point 2, outside [-128, 127]")


def test_a_long_list_in_a_hint_is_cut_at_an_item() -> None:
    names = [f"OPERATOR_{k}" for k in range(80)]
    err = UnsupportedError("operator 1 (FOO): not supported", hint="supported: " + ", ".join(names))
    line = err.line()
    assert_short_and_printable(line)
    assert "OPERATOR_0, OPERATOR_1, " in line and ", …[" in line


def test_several_long_parts_are_cut_harder_to_keep_the_line_short() -> None:
    dims = ", ".join(str(1701080941 + k) for k in range(16))
    size = str(1701080941**16 * 4)
    err = ModelError(f"data is 128 bytes but shape ({dims}) needs {size}", where="x" * 300)
    line = err.line()
    assert_short_and_printable(line)
    assert line.count("…[") == 3


def test_a_prefix_said_twice_is_said_once() -> None:
    twice = "operator 13 (DEPTHWISE_CONV_2D): operator 13 (DEPTHWISE_CONV_2D): no quantization"
    assert UnsupportedError(twice).line() == "operator 13 (DEPTHWISE_CONV_2D): no quantization"
    err = ModelError("operator 2 (ADD): bad", where="operator 2 (ADD)", hint="re-export")
    assert err.line() == "operator 2 (ADD): bad; re-export"


def test_unbalanced_brackets_and_empty_parts() -> None:
    for what in ("(", ")", "a ( b [ c } d", "", "  two  spaces ", "x" * 5000 + "(" + "y" * 5000):
        assert_short_and_printable(ModelError(what, where="w", hint="h").line())


# --- the operators that printed them ----------------------------------------------------------


def test_an_unnamed_custom_operator_says_so() -> None:
    b = GraphBuilder()
    x = b.input((1, 4), "float32")
    y = b.activation((1, 4), "float32")
    b.custom("", [x], [y])
    b.output(y)
    graph = import_model(b.tflite())
    with pytest.raises(UnsupportedError) as info:
        lower(graph, graph.operators[0])
    assert info.value.line().startswith(
        "custom operator with an empty name (operator 0) is not supported; "
    )


def test_a_missing_output_quantization_names_the_operator_once() -> None:
    """activation_params re-wrapped qparams' error, which already named the operator."""
    b = GraphBuilder()
    x = b.input((1, 5, 5, 4), "int8", scale=0.05, zero_point=0)
    w = b.const(np.ones((1, 3, 3, 4), np.int8), scale=[0.01] * 4, axis=3)
    y = b.activation((1, 5, 5, 4), "int8")
    b.op("DEPTHWISE_CONV_2D", [x, w, -1], [y], padding=0, stride_h=1, stride_w=1,
         depth_multiplier=1, fused_activation_function=1)  # fmt: skip
    b.output(y)
    with pytest.raises(UnsupportedError) as info:
        generate(import_model(b.tflite()))
    assert info.value.what.count("operator 0 (DEPTHWISE_CONV_2D)") == 1
    assert "tensor 2 (t2) of type int8 has no quantization" in info.value.what


# --- the fuzz corpus ---------------------------------------------------------------------------


def error_line(path: Path, data: bytes) -> str | None:
    """The error line of `mcugen plan PATH`, or when the plan is accepted, of codegen (what
    `mcugen build` and `export` print before compiling); None when both accept."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["plan", str(path)])
    if code:
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mcugen: error: "), err.getvalue()[:500]
        return lines[0].removeprefix("mcugen: error: ")
    try:
        generate(import_model(data, source=path.name))
    except McugenError as exc:
        return exc.line()
    return None


def test_every_fuzz_mutant_error_line_is_short_printable_and_says_its_prefix_once(
    tmp_path: Path,
) -> None:
    """A few hundred seeded mutants (about 20 s): with the shared models as seeds, they include
    shapes of thousands of dimensions and names of hundreds of characters."""
    fm = benchmark_module("fuzz_mutants")
    corpus = fm.Corpus(fm.seeds())
    path = tmp_path / "m.tflite"
    lines = []
    for index in range(FUZZ_MUTANTS):
        mutant = corpus.mutant(FUZZ_SEED, index)
        path.write_bytes(mutant.data)
        line = error_line(path, mutant.data)
        if line is not None:
            lines.append(line)
            assert_short_and_printable(line)
    assert len(lines) > FUZZ_MUTANTS // 3
