"""The main job as pure stages: model file -> graph -> plan -> lowered kernels -> C sources."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from mcugen.codegen.lower import Lowered
from mcugen.codegen.render import render_model
from mcugen.codegen.viewmodel import ModelVM, build_view_model, lower_all, scratch_sizes
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.plan.memory_plan import MemoryPlan, plan_memory


@dataclass(frozen=True)
class Generated:
    graph: Graph
    plan: MemoryPlan
    lowered: dict[int, Lowered]
    view_model: ModelVM
    files: dict[str, str]
    source: str = ""  # the .tflite path, when generated from a file


def generate(
    graph: Graph,
    *,
    model_name: str = "model",
    order: str = orders.DEFAULT,
    layout: str = layouts.DEFAULT,
) -> Generated:
    """Plan, lower and render `graph`; `UnsupportedError` names the first unsupported operator."""
    lowered = lower_all(graph, tuple(range(len(graph.operators))))
    plan = plan_memory(graph, order=order, layout=layout, scratch=scratch_sizes(lowered))
    vm = build_view_model(graph, plan, lowered, model_name)
    return Generated(graph, plan, lowered, vm, render_model(vm))


def generate_from_file(path: str | Path, **kwargs: str) -> Generated:
    graph = load_model(path)
    gen = generate(graph, model_name=Path(path).stem, **kwargs)
    return replace(gen, source=str(path))
