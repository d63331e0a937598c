"""The planned allocator's C source (runtime_c/src/allocator.c, `planned = 1`) performing the moves
mcugen/plan/dynamic.py plans, under a host driver (tests/c/test_allocator_planned.c; its plans file
is read by tests/c/allocator_plans.c) with AddressSanitizer and UBSan.

Random graphs (random lifetimes, tensor sizes of 0 and unaligned bytes, alias groups of several
tensors at inner offsets, scratch buffers, graph outputs that never die) go through the real
buffer builder (`activation_buffers`), the planned-mode planner (`plan_dynamic`, validated) with
no static hint, a static layout's offsets or random ones as hint, and the real table flattening
(`dynamic_view_model`). The driver runs the tables through mcu_dyn_reset/before/after and checks
after every hook that the runtime's offsets are the planner's, contents survive every move, live
buffers never overlap and stay in an arena of exactly `arena_bytes`, tensors follow their buffer,
and the bytes moved are the plan's `moved_bytes` (see the C file for the full list).
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from mcugen.codegen.viewmodel import dynamic_view_model
from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.options import PlanOptions
from mcugen.pipeline import prepare
from mcugen.plan.buffers import ARENA_ALIGNMENT, Buffer, activation_buffers
from mcugen.plan.dynamic import PLANNED, DynamicPlan, DynamicPlanInvalid, plan_dynamic
from mcugen.plan.layout import LAYOUTS
from support import build_allocator_driver
from testgraphs import benchmark_suite

SEEDS = (1, 2, 3, 4, 5, 6)
PLANS_PER_SEED = 50
#: Generated graphs of the benchmark suite small enough to keep the test fast.
SUITE_GRAPHS = ("randwire_ws12", "nas_cells3", "unet3", "inception8")
TENSOR_BYTES = (0, 1, 7, 15, 16, 17, 33, 48, 64, 100, 255, 256, 640, 1000, 1024, 2500)
#: Tables in the order the driver reads them: the runtime's, then the driver's own.
RUNTIME_TABLES = (
    "buffer_bytes",
    "initial_offsets",
    "member_start",
    "member_tensor",
    "member_inner",
    "born_start",
    "born_buffer",
    "dies_start",
    "dies_buffer",
    "move_start",
    "move_buffer",
    "move_offset",
    "scratch_buffer",
)


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("allocator_planned") / "test_allocator_planned"
    return build_allocator_driver("test_allocator_planned.c", exe, ["allocator_plans.c"])


def random_graph(rng: random.Random) -> tuple[Graph, dict[int, int], dict[int, tuple[int, int]]]:
    """A random operator DAG in execution order, with scratch sizes and tensor aliases."""
    num_inputs = rng.randint(1, 3)
    tensors = [Tensor(i, f"in{i}", (rng.choice(TENSOR_BYTES),), "int8") for i in range(num_inputs)]
    ops = []
    for k in range(rng.randint(1, 30)):
        recent = range(max(0, len(tensors) - 6), len(tensors))
        pool = recent if rng.random() < 0.7 else range(len(tensors))
        reads = rng.sample(pool, min(len(pool), rng.randint(1, 3)))
        outs = tuple(range(len(tensors), len(tensors) + rng.randint(1, 2)))
        for t in outs:
            tensors.append(Tensor(t, f"t{t}", (rng.choice(TENSOR_BYTES),), "int8"))
        ops.append(Operator(k, "ADD", 1, tuple(reads), outs))
    consumed = {t for op in ops for t in op.inputs}
    produced = [t for op in ops for t in op.outputs]
    outputs = {t for t in produced if t not in consumed and rng.random() < 0.6}
    # outputs that are also read, so live to the end after their last reader
    outputs.update(rng.sample(produced, min(len(produced), rng.randint(0, 2))))
    if rng.random() < 0.05:
        outputs.add(0)  # an input that is also an output
    graph_outputs = tuple(sorted(outputs or {produced[-1]}))
    graph = Graph(tuple(tensors), tuple(ops), tuple(range(num_inputs)), graph_outputs)
    scratch = {op.index: rng.randint(1, 1500) for op in ops if rng.random() < 0.3}
    aliases = {}
    for t in produced:
        if rng.random() < 0.25:  # stored inside an earlier tensor, like a view or a slice
            host = rng.randrange(t)
            aliases[t] = (host, rng.randint(0, tensors[host].nbytes + 20))
    return graph, scratch, aliases


def random_plan(rng: random.Random) -> tuple[DynamicPlan, int] | None:
    """A validated planned-mode plan of a random graph and its tensor count; None when the graph
    hits the planner's known limit (an input holding an output that had to move)."""
    graph, scratch, aliases = random_graph(rng)
    order = tuple(range(len(graph.operators)))
    buffers = activation_buffers(graph, order, scratch, aliases)
    hint = rng.choice(("none", "greedy_by_size", "greedy_by_breadth", "random"))
    preferred: Mapping[int, int] | None = None
    if hint == "random":
        top = max(1, sum(b.size for b in buffers) // ARENA_ALIGNMENT)
        preferred = {b.id: ARENA_ALIGNMENT * rng.randrange(top) for b in buffers}
    elif hint != "none":
        preferred = LAYOUTS[hint](buffers).offsets
    outputs = frozenset(
        b.id for b in buffers for t, _ in b.tensor_placements() if t in graph.outputs
    )
    try:
        plan = plan_dynamic(PLANNED, buffers, len(order), preferred, outputs)
    except DynamicPlanInvalid as e:
        assert "initial offset" in str(e), e
        return None
    plan.validate()
    return plan, len(graph.tensors)


def expected_offsets(plan: DynamicPlan) -> list[list[int]]:
    """Per step 0..steps, the offset of every buffer while that step's operator runs (-1 when not
    live): the plan replayed from its births, deaths and moves, independently of the tables."""
    where = {b: plan.birth_offsets[b] for b in plan.born(0)}
    rows = [[where.get(b.id, -1) for b in plan.buffers]]
    for step in range(1, plan.steps + 1):
        for b in plan.dies(step - 1):
            del where[b]
        for m in plan.moves[step]:
            assert m.buffer in where, "a move of a dead buffer"
            where[m.buffer] = m.dst
        for b in plan.born(step):
            where[b] = plan.birth_offsets[b]
        rows.append([where.get(b.id, -1) for b in plan.buffers])
        live = {b.id for b in plan.buffers if b.first <= step <= b.last}
        assert set(where) == live, f"step {step}: replay and lifetimes disagree"
    assert not any(plan.moves[plan.steps + 1]), "planned mode moves nothing after the last operator"
    return rows


def _line(name: str, values: Iterable[int]) -> str:
    vals = list(values)
    return " ".join([name, str(len(vals)), *map(str, vals)])


def plan_record(label: str, plan: DynamicPlan, num_tensors: int) -> str:
    """The driver's text for one plan: header, runtime tables, then lifetimes and expectations."""
    vm = dynamic_view_model(plan, num_tensors)
    assert vm.planned == 1 and vm.moved_bytes == plan.moved_bytes
    bufs: tuple[Buffer, ...] = plan.buffers
    lines = [
        f"plan {label} {len(bufs)} {plan.steps} {vm.num_offsets} {plan.arena_bytes} "
        f"{plan.moved_bytes}",
        *(_line(name, getattr(vm, name)) for name in RUNTIME_TABLES),
        _line("first", (b.first for b in bufs)),
        _line("last", (b.last for b in bufs)),
        _line("output", (int(b.id in plan.outputs) for b in bufs)),
        _line("expect", (o for row in expected_offsets(plan) for o in row)),
    ]
    return "\n".join(lines) + "\n"


def run_driver(driver: Path, path: Path, records: list[str]) -> dict[str, int]:
    path.write_text("".join(records))
    run = subprocess.run([str(driver), str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr[:4000]
    summary = run.stdout.strip().rsplit("\n", 1)[-1]
    assert summary.startswith("planned allocator test: ") and summary.endswith(" 0 failures")
    counts = summary.removeprefix("planned allocator test: ").split(", ")
    return {c.split(" ", 1)[1]: int(c.split(" ", 1)[0]) for c in counts}


@pytest.mark.parametrize("seed", SEEDS)
def test_planned_allocator_performs_random_plans(driver: Path, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    records: list[str] = []
    skipped = 0
    while len(records) < PLANS_PER_SEED:
        planned = random_plan(rng)
        if planned is None:
            skipped += 1
            continue
        records.append(plan_record(f"seed{seed}-{len(records) + skipped}", *planned))
    assert skipped < PLANS_PER_SEED // 5
    counts = run_driver(driver, tmp_path / "plans.txt", records)
    assert counts["plans"] == PLANS_PER_SEED
    assert counts["moves"] >= PLANS_PER_SEED, counts  # moves are exercised, not just births


def test_planned_allocator_performs_suite_plans(driver: Path, tmp_path: Path) -> None:
    """Real buffers (in-place aliasing, concatenation slices) of generated graphs, planned with no
    static hint so that buffers move."""
    suite = dict(benchmark_suite(quick=False))
    records, moved = [], {}
    for name in SUITE_GRAPHS:
        graph, _, mem = prepare(suite[name](), PlanOptions(allocator=PLANNED))
        outputs = frozenset(
            b.id for b in mem.buffers for t, _ in b.tensor_placements() if t in graph.outputs
        )
        plan = plan_dynamic(PLANNED, mem.buffers, len(mem.order), None, outputs)
        moved[name] = plan.moved_bytes
        records.append(plan_record(name, plan, len(graph.tensors)))
    # most move (randwire_ws12's buffers, its convolutions written from before their inputs,
    # now fall into place without a move)
    assert sum(1 for m in moved.values() if m > 0) >= len(SUITE_GRAPHS) - 1, moved
    counts = run_driver(driver, tmp_path / "plans.txt", records)
    assert counts["plans"] == len(SUITE_GRAPHS)
