"""Partitioning: a registry of pure functions `(PartitionProblem, *, budget) -> Partition` that
spread one model's operators over several boards joined by serial links (issue 16; LCP, Hadidi
et al., "Toward Collaborative Inferencing of Deep Neural Networks on Internet of Things
Devices", IEEE IoT Journal 2020).

Strategies:
- `single`: everything on board 0, the baseline every speed-up is measured against;
- `pipeline`: consecutive stages of the stored order, one per board, balanced by compute and cut
  where RAM runs out (model parallelism: it lets a model fit, it does not make one inference
  faster);
- `branch`: LCP's low-communication split: the independent branches between a fork and its
  join spread over the boards, the stem and the merge on board 0 (branch.py);
- `cpsat` (default): OR-Tools CP-SAT over assignment and schedule, minimising the modelled
  latency under the boards' limits, warm-started from the best heuristic, with its proven bound.
Every partition is validated (partition.py) and carries `lower_bound`. segments.py cuts a
partition into per-board sub-models, which link/multiboard.py runs on N QEMU twins with the host
relaying the tensors; board-to-board links are not built.
"""

from __future__ import annotations

from typing import Protocol

from mcugen.plan.partition.branch import branch
from mcugen.plan.partition.cpsat import cpsat
from mcugen.plan.partition.partition import Partition, Schedule, Transfer, lower_bound, misfit
from mcugen.plan.partition.pipeline import pipeline
from mcugen.plan.partition.problem import (
    HOST,
    BoardSpec,
    LinkModel,
    OpNode,
    PartitionDoesNotFit,
    PartitionInvalid,
    PartitionProblem,
    partition_problem,
)
from mcugen.registry import Registry

__all__ = [
    "DEFAULT",
    "HOST",
    "PARTITIONERS",
    "BoardSpec",
    "LinkModel",
    "OpNode",
    "Partition",
    "PartitionDoesNotFit",
    "PartitionInvalid",
    "PartitionProblem",
    "Partitioner",
    "Schedule",
    "Transfer",
    "lower_bound",
    "partition_problem",
]


class Partitioner(Protocol):
    def __call__(self, problem: PartitionProblem, *, budget: float | None = None) -> Partition: ...


PARTITIONERS: Registry[Partitioner] = Registry("partitioner", default="cpsat")
DEFAULT = PARTITIONERS.default


@PARTITIONERS.register("single")
def single(problem: PartitionProblem, *, budget: float | None = None) -> Partition:
    """Every operator on board 0, in the stored order."""
    del budget
    assignment = (0,) * len(problem.ops)
    reason = misfit(problem, assignment, range(len(problem.ops)))
    if reason:
        raise PartitionDoesNotFit(
            f"the model does not fit one board: {reason}", hint="partition it over more boards"
        )
    return Partition.of("single", problem, assignment)


PARTITIONERS.add("pipeline", pipeline)
PARTITIONERS.add("branch", branch)
PARTITIONERS.add("cpsat", cpsat)
