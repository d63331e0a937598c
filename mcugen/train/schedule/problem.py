"""The training-schedule problem: which values to keep in RAM, recompute, or page to slow storage
and back, stage by stage, at the least cost under a RAM budget and a time budget (POET, Patil et
al., ICML 2022; its rematerialisation part is Checkmate's, Jain et al., MLSys 2020).

The nodes are a training graph's operators in one topological order (graph inputs first, as nodes
that cost nothing and cannot be recomputed). Stage t computes node t last; before it, it may
recompute earlier nodes (in increasing order) whose values were dropped. A value crosses from stage
t to t + 1 in RAM (kept), in slow storage (paged out, paged in when needed), or not at all. Costs
are integers in the problem's unit (cycles, or picojoules with an energy model), so sums are exact
and every machine gives the same schedule. `program.py` defines what a schedule does and costs;
every solver is checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from mcugen.errors import McugenError


class ScheduleError(McugenError):
    """No schedule meets the budgets."""


@dataclass(frozen=True)
class Budgets:
    """What a schedule may use (`ram` bytes of live values, `time` cycles; None: no limit), and
    how hard the exact scheduler searches: `work` CP-SAT deterministic time units; it stops once
    its schedule is within `gap` (a fraction of its cost) of the lower bound; a graph whose
    exact model would take more than `size` booleans gets the heuristic start and the bound."""

    ram: int | None = None
    time: int | None = None
    work: float = 10.0
    gap: float = 0.0
    size: int = 12_000


@dataclass(frozen=True)
class Node:
    """One operator: the bytes its outputs take in RAM, what computing it costs (`cost` in the
    objective's unit, `time` in cycles), the earlier nodes it reads, and whether it may run again
    (graph inputs, operators that update variables, and operators reading a variable after its
    update may not: `recompute_until` is the last stage at which a recomputation gives the same
    bits, None for no limit)."""

    name: str
    size: int
    cost: int
    time: int
    inputs: tuple[int, ...] = ()
    recomputable: bool = True
    recompute_until: int | None = None
    output: bool = False  # read by the host after the last stage


@dataclass(frozen=True)
class ScheduleProblem:
    """Nodes in stage order and the page costs per byte (objective unit and cycles) of the slow
    memory, None when there is none. `fixed` is the paging cost per transfer (a block device's
    latency), in the same units."""

    nodes: tuple[Node, ...]
    page_out_cost: int | None = None  # per byte
    page_in_cost: int | None = None
    page_out_time: int = 0  # cycles per byte
    page_in_time: int = 0
    fixed_cost: int = 0
    fixed_time: int = 0

    def __post_init__(self) -> None:
        for t, node in enumerate(self.nodes):
            if any(not 0 <= i < t for i in node.inputs):
                raise ValueError(f"node {t} ({node.name}) reads a node that is not before it")
            if node.size < 0 or node.cost < 0 or node.time < 0:
                raise ValueError(f"node {t} ({node.name}): negative size or cost")

    @property
    def paging(self) -> bool:
        return self.page_out_cost is not None and self.page_in_cost is not None

    @cached_property
    def consumers(self) -> tuple[tuple[int, ...], ...]:
        users: list[list[int]] = [[] for _ in self.nodes]
        for k, node in enumerate(self.nodes):
            for i in sorted(set(node.inputs)):
                users[i].append(k)
        return tuple(tuple(u) for u in users)

    def may_recompute(self, i: int, t: int) -> bool:
        """Node i may run again in stage t > i."""
        node = self.nodes[i]
        return node.recomputable and (node.recompute_until is None or t <= node.recompute_until)

    def out_cost(self, i: int) -> tuple[int, int]:
        """(cost, cycles) of paging node i's value out."""
        assert self.page_out_cost is not None
        size = self.nodes[i].size
        return (
            self.fixed_cost + size * self.page_out_cost,
            self.fixed_time + size * self.page_out_time,
        )

    def in_cost(self, i: int) -> tuple[int, int]:
        assert self.page_in_cost is not None
        size = self.nodes[i].size
        return (
            self.fixed_cost + size * self.page_in_cost,
            self.fixed_time + size * self.page_in_time,
        )
