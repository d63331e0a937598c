"""Helpers shared by more than one test module (test modules never import each other), one
module per job; every name is re-exported here, so tests import them as `from support import X`.

- paths: paths, the shared model sets, the full-sweep switch
- c_builds: host C drivers (tests/c/) and library exports (mcugen export)
- tflm: comparing with TFLM on the host and on the QEMU twins
- op_models: one-operator models (kernels/)
- nets: small networks planned with aliasing and rewrites, random graphs (planners/)
- convs: convolution models and the optimised variants' check (kernels/, qemu/)
- classifiers: trainable and convolutional networks (train/, planners/)
- pages: HTML report pages (unit/test_report_*)
- targets: memory targets built by hand (pools, paging, patches)

A helper used by one test module stays in that module.
"""

from mcugen.link.host_run import random_inputs
from support.c_builds import (
    CORTEX_M7,
    SANITIZED_FLAGS,
    STRICT_C,
    build_allocator_driver,
    compile_library,
    export_library,
)
from support.classifiers import (
    classifier_file,
    conv_chain,
    int8_classifier,
    mobilenet_stem,
    synthetic_dataset,
)
from support.convs import (
    FAST_VARIANTS,
    SLOW,
    Conv,
    Dw,
    Window,
    assert_variant_exact,
    conv_int8,
    conv_variant,
    dw_after_add,
    dw_int8,
    lean_only,
    pool_window,
    reference_kernels,
    window_convs,
    window_out_hw,
)
from support.nets import Net, arenas, generate_optimized, random_dags
from support.op_models import (
    BROADCASTS,
    FLOAT_BROADCASTS,
    INT16_BROADCASTS,
    NONE,
    QUANTIZED,
    RELU,
    RELU6,
    RELU_N1_TO_1,
    SAME,
    TANH,
    VALID,
    Operand,
    Quant,
    binary_model,
    custom_model,
    flex_options,
    floor_model,
    lower_only,
    symmetric,
    unary_model,
)
from support.pages import PageParser, assert_page_shows_the_json, at, parse_page
from support.paths import (
    EXAMPLE,
    FULL_SWEEP,
    MLPERF_INT8,
    ROOT,
    SHARED_MODELS,
    STATEFUL_MODELS,
    example_module,
    sweep,
)
from support.targets import pool_target, resized
from support.tflm import (
    NEEDS_TWIN,
    Comparison,
    assert_matches_tflm,
    assert_state_carried_as_tflm,
    compare_with_tflm,
    mcugen_outputs,
    one_line_error,
    run_twin_against_tflm,
    tflm_arena_head,
    tflm_outputs,
)

__all__ = [
    "BROADCASTS",
    "CORTEX_M7",
    "Comparison",
    "Conv",
    "Dw",
    "EXAMPLE",
    "FAST_VARIANTS",
    "FLOAT_BROADCASTS",
    "FULL_SWEEP",
    "INT16_BROADCASTS",
    "MLPERF_INT8",
    "NEEDS_TWIN",
    "NONE",
    "Net",
    "Operand",
    "PageParser",
    "QUANTIZED",
    "Quant",
    "RELU",
    "RELU6",
    "RELU_N1_TO_1",
    "ROOT",
    "SAME",
    "SANITIZED_FLAGS",
    "SHARED_MODELS",
    "SLOW",
    "STATEFUL_MODELS",
    "STRICT_C",
    "TANH",
    "VALID",
    "Window",
    "arenas",
    "assert_matches_tflm",
    "assert_page_shows_the_json",
    "assert_state_carried_as_tflm",
    "assert_variant_exact",
    "at",
    "binary_model",
    "build_allocator_driver",
    "classifier_file",
    "compare_with_tflm",
    "compile_library",
    "conv_chain",
    "conv_int8",
    "conv_variant",
    "custom_model",
    "dw_after_add",
    "dw_int8",
    "example_module",
    "export_library",
    "flex_options",
    "floor_model",
    "generate_optimized",
    "int8_classifier",
    "lean_only",
    "lower_only",
    "mcugen_outputs",
    "mobilenet_stem",
    "one_line_error",
    "parse_page",
    "pool_target",
    "pool_window",
    "random_dags",
    "random_inputs",
    "reference_kernels",
    "resized",
    "run_twin_against_tflm",
    "sweep",
    "symmetric",
    "synthetic_dataset",
    "tflm_arena_head",
    "tflm_outputs",
    "unary_model",
    "window_convs",
    "window_out_hw",
]
