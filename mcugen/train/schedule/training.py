"""A training graph as a schedule problem, and a schedule back as a graph the planner and the
runtime execute.

`training_problem`: one node per graph input (it cannot be recomputed: the host wrote it), then
one per operator in stored order (forward, loss, backward, updates), reading the nodes that
produce its arena inputs; a node's size is its arena outputs' bytes, 16-byte aligned. Operators
that update variables (McugenSgd, backward kernels with `update_w`) never run twice, and an
operator reading a variable may run again only up to the stage of the first operator that updates
it (after that it would read the new weights and give other bits).

`scheduled_graph`: the operators in the schedule's order, each recomputation a copy of its
operator writing new tensors that the stage's later readers use. A copy runs the same kernel on
the same values, so training gives the store-all schedule's weights bit for bit. Paging is left to
the planner's pager (mcugen/plan/paging) on this graph, under the same RAM budget.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.model.macs import operator_macs
from mcugen.plan.buffers import align_up
from mcugen.train.schedule import SCHEDULERS
from mcugen.train.schedule.baselines import store_all
from mcugen.train.schedule.problem import Budgets, Node, ScheduleProblem
from mcugen.train.schedule.program import Outcome, Schedule, simulate, validate


@dataclass(frozen=True)
class PageCosts:
    """The slow memory's costs: per byte out and in, and per transfer, in cycles."""

    out_per_byte: int
    in_per_byte: int
    latency: int = 0


@dataclass(frozen=True)
class EnergyPrices:
    """The energy objective's prices (picojoules; mcugen/energy.py): per instruction an operator
    runs, per cycle the core spends paging (the copies' modelled cycles and a transfer's
    latency), and the memories' own energy per byte paged out and in where the board gives it."""

    per_instruction: float
    per_cycle: float
    out_extra: float = 0.0
    in_extra: float = 0.0


def updated_variables(op: Operator) -> tuple[int, ...]:
    """The variable tensors `op` writes (a training graph's weight updates)."""
    if op.custom_code == "McugenSgd":
        return tuple(t for t in (op.inputs[0], op.inputs[2], op.inputs[3]) if t >= 0)
    if op.options.get("update_w"):
        return tuple(t for t in (op.inputs[2], op.inputs[4], op.inputs[5]) if t >= 0)
    return ()


def training_problem(
    graph: Graph,
    cycles: Sequence[int],
    page: PageCosts | None = None,
    order: Sequence[int] | None = None,
    energy: EnergyPrices | None = None,
) -> ScheduleProblem:
    """The problem of `graph`, its operators staged in `order` (a topological order of operator
    indices, such as the planner's; default: stored), each taking `cycles[op]`: its time, and its
    objective unless `energy` prices the objective in picojoules."""
    per = 1.0 if energy is None else energy.per_instruction
    order = list(range(len(graph.operators))) if order is None else list(order)
    arena = set(graph.activation_tensors())
    producer: dict[int, int] = {}
    nodes: list[Node] = []
    for t in graph.inputs:
        producer[t] = len(nodes)
        size = align_up(graph.tensors[t].nbytes)
        nodes.append(Node(f"input {t}", size, 0, 0, recomputable=False))
    stage = {op: len(nodes) + k for k, op in enumerate(order)}
    first_update: dict[int, int] = {}
    for op_index in order:
        for v in updated_variables(graph.operators[op_index]):
            first_update.setdefault(v, stage[op_index])
    for op_index in order:
        op = graph.operators[op_index]
        reads = sorted({producer[t] for t in op.inputs if t in producer})
        outs = [t for t in op.outputs if t in arena]
        variables = [t for t in op.inputs if t >= 0 and graph.tensors[t].is_variable]
        limits = [first_update[v] for v in variables if v in first_update]
        nodes.append(
            Node(
                op.label,
                sum(align_up(graph.tensors[t].nbytes) for t in outs),
                round(cycles[op.index] * per),
                int(cycles[op.index]),
                tuple(reads),
                recomputable=not updated_variables(op),
                recompute_until=min(limits) if limits else None,
                output=any(t in graph.outputs for t in op.outputs),
            )
        )
        for t in outs:
            producer[t] = stage[op_index]
    if page is None:
        return ScheduleProblem(tuple(nodes))
    if energy is None:
        out_cost, in_cost, fixed = page.out_per_byte, page.in_per_byte, page.latency
    else:  # a transfer's latency is the core waiting: priced as its cycles
        out_cost = math.ceil(page.out_per_byte * energy.per_cycle + energy.out_extra)
        in_cost = math.ceil(page.in_per_byte * energy.per_cycle + energy.in_extra)
        fixed = math.ceil(page.latency * energy.per_cycle)
    return ScheduleProblem(
        tuple(nodes),
        page_out_cost=out_cost,
        page_in_cost=in_cost,
        page_out_time=page.out_per_byte,
        page_in_time=page.in_per_byte,
        fixed_cost=fixed,
        fixed_time=page.latency,
    )


def scheduled_graph(graph: Graph, schedule: Schedule, order: Sequence[int] | None = None) -> Graph:
    """`graph` with its operators in the schedule's order (stages in `order`, as the problem
    was built), recomputations as copies. Plan it in stored order: another order could move a
    copy away from the reader it was made for."""
    first = len(graph.inputs)
    order = list(range(len(graph.operators))) if order is None else list(order)
    tensors = list(graph.tensors)
    current: dict[int, int] = {}  # original tensor -> the tensor holding its latest value
    ops: list[Operator] = []
    runs = [0] * len(graph.operators)
    for t, stage in enumerate(schedule.stages):
        for node in stage.compute:
            if node < first:
                continue  # a graph input: the host writes it
            op = graph.operators[order[node - first]]
            inputs = tuple(current.get(x, x) for x in op.inputs)
            outputs = op.outputs
            if node != t:  # a recomputation: new tensors for its outputs
                runs[op.index] += 1
                outputs = tuple(_copy(tensors, x, runs[op.index]) for x in op.outputs)
            for x, y in zip(op.outputs, outputs, strict=True):
                current[x] = y
            ops.append(replace(op, index=len(ops), inputs=inputs, outputs=outputs))
    return replace(graph, tensors=tuple(tensors), operators=tuple(ops))


def _copy(tensors: list[Tensor], t: int, run: int) -> int:
    tensors.append(replace(tensors[t], index=len(tensors), name=f"{tensors[t].name}/again{run}"))
    return len(tensors) - 1


def estimated_cycles(graph: Graph) -> list[int]:
    """Per operator, a cost until measured ones are used: its multiply-accumulates, or its
    output elements for an operator without any (at least 1)."""
    costs = []
    for op in graph.operators:
        elements = sum(graph.tensors[t].num_elements for t in op.outputs)
        costs.append(max(operator_macs(graph, op), elements, 1))
    return costs


@dataclass(frozen=True)
class ScheduledTraining:
    """A training graph scheduled under a RAM budget: the graph to build (recomputations as
    copies), the schedule, and its outcome next to store-all's (same problem, same costs)."""

    graph: Graph
    problem: ScheduleProblem
    schedule: Schedule
    outcome: Outcome
    store_all: Outcome
    budget: int | None = None  # the RAM budget the schedule was found under


def schedule_training(
    graph: Graph,
    scheduler: str,
    budgets: Budgets,
    *,
    cycles: Sequence[int] | None = None,
    page: PageCosts | None = None,
    order: Sequence[int] | None = None,
    energy: EnergyPrices | None = None,
) -> ScheduledTraining:
    """Schedules `graph` (stages in `order`) with the named scheduler, minimising time, or
    energy when priced; ScheduleError when it cannot."""
    problem = training_problem(graph, cycles or estimated_cycles(graph), page, order, energy)
    schedule = SCHEDULERS.get(scheduler)(problem, budgets)
    outcome = validate(problem, schedule, ram_budget=budgets.ram, time_budget=budgets.time)
    base = simulate(problem, store_all(problem))
    rewritten = scheduled_graph(graph, schedule, order)
    return ScheduledTraining(rewritten, problem, schedule, outcome, base, budgets.ram)
