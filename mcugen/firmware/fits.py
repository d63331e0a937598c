"""Whether a generated model fits its target, with the board's own facts (external memories its
port sets up, weights in external flash, where the state may go): the verdict `build` checks
before compiling and `plan --board` prints."""

from __future__ import annotations

from dataclasses import replace

from mcugen.boards import Target
from mcugen.firmware.project import model_weights, weights_memory
from mcugen.model.ir import Graph
from mcugen.pipeline import Generated
from mcugen.plan import dynamic
from mcugen.plan.fit import Fit, fit_of
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.target import memory_target


def state_hint(target: Target, plan: MemoryPlan) -> str:
    """What to do with a state that makes the RAM overflow, given the target's memories."""
    slow = memory_target(target).state_memory()
    if slow is None:
        return (
            f"{target.board.name} has no external RAM to hold the state (a board with SDRAM "
            "can: --board disco-f746ng)"
        )
    if plan.persistent.in_ram:
        return f"--state-memory auto or slow puts it in {slow.name}"
    return ""


def check_fits(gen: Generated, target: Target) -> None:
    """Fail before compiling when the plan does not fit the board (`plan.fit.fit_of`), or needs
    a memory the board's port does not set up yet (`Fit.not_ready`)."""
    if target.board.is_host:
        return
    allocator = gen.dynamic.mode if gen.dynamic is not None else dynamic.STATIC
    problem = target_fit(gen.graph, gen.plan, allocator, model_weights(gen), target).problem()
    if problem is not None:
        raise problem


def external_memories(plan: MemoryPlan, weights: int, target: Target) -> list[str]:
    """The memories outside the internal flash and RAM that a build of `plan` with `weights`
    bytes of constants uses on `target`."""
    used = []
    external = weights_memory(weights, target)
    if external is not None:
        used.append(external.name)
    paging = plan.paging
    if paging is not None and paging.slow.external and paging.slow_bytes:
        used.append(paging.slow.name)
    state = plan.persistent.memory
    if state and state not in used:
        used.append(state)
    return used


def target_fit(graph: Graph, plan: MemoryPlan, allocator: str, weights: int, target: Target) -> Fit:
    """`plan.fit.fit_of` on `target`, weights in external flash when they go there. The verdict
    names what it is for: the board itself, or its QEMU twin (`Fit.twin`); on the board, a
    memory its port does not set up yet is a reason it does not fit (`Fit.not_ready`)."""
    fit = replace(
        fit_of(graph, plan, allocator, weights, memory_target(target)),
        state_hint=state_hint(target, plan),
        twin=target.port_board.name if target.emulate and target.port_board != target.board else "",
    )
    if not target.emulate:
        by_name = {m.name: m for m in target.memories}
        waiting = [
            f"{name} ({by_name[name].kind})"
            for name in external_memories(plan, weights, target)
            if name in by_name and not by_name[name].port_ready
        ]
        if waiting:
            fit = replace(fit, not_ready=", ".join(waiting))
    external = weights_memory(weights, target)
    if external is None:
        return fit
    return replace(fit, weights=0, external_weights=weights, external_memory=external.name)
