"""Render the view-model through the Jinja templates into {relative path: text}; writes nothing."""

from __future__ import annotations

import functools
import math

import jinja2
import numpy as np

from mcugen.codegen.vm_types import ModelVM
from mcugen.resources import templates_dir

_BYTES_PER_LINE = 24


def c_float(value: float) -> str:
    """An exact C float literal (hex), with the float32 value TFLM would hold."""
    v = float(np.float32(value))
    if math.isnan(v):
        return '__builtin_nanf("")'
    if math.isinf(v):
        return "__builtin_inff()" if v > 0 else "(-__builtin_inff())"
    return f"{v.hex()}f"


def c_int(value: int) -> str:
    if value == -(2**31):
        return "(-2147483647 - 1)"
    if value < -(2**31) or value > 2**32 - 1:
        return f"{value}LL"
    return str(value)


def c_bytes(data: bytes) -> str:
    """Constant bytes as comma-separated decimal rows."""
    arr = np.frombuffer(data, dtype=np.uint8)
    rows = []
    for start in range(0, len(arr), _BYTES_PER_LINE):
        rows.append("  " + ",".join(map(str, arr[start : start + _BYTES_PER_LINE].tolist())) + ",")
    return "\n".join(rows) if rows else "  0,"


def c_string(text: str) -> str:
    """A safe C comment / string body: printable ASCII only, no comment starts or ends, and no
    trigraph (C11 turns "??/" into a backslash)."""
    cleaned = "".join(ch if 32 <= ord(ch) < 127 else "?" for ch in text)
    cleaned = cleaned.replace("*/", "*_/").replace("/*", "/_*").replace("??", "?_")
    return cleaned.replace("\\", "/").replace('"', "'")


@functools.cache
def environment() -> jinja2.Environment:
    """One environment per process: Jinja compiles each template once and keeps it (a new
    environment per render compiled them again, 0.1-0.2 s a model)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters.update(c_float=c_float, c_int=c_int, c_bytes=c_bytes, c_string=c_string)
    return env


def render_model(vm: ModelVM) -> dict[str, str]:
    """The generated model sources: model.h, model.c (tables) and model_data.c (weights)."""
    env = environment()
    return {
        "model.h": env.get_template("model.h.j2").render(m=vm),
        "model.c": env.get_template("model.c.j2").render(m=vm),
        "model_data.c": env.get_template("model_data.c.j2").render(m=vm),
    }
