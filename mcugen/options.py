"""How to plan, as one typed and validated object (issue 33): built once from the command line
(commands/_common.plan_options) or the Python API, and passed down to every stage; no stage
reads the command line. The memory it may use is the `MemoryTarget` it carries."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mcugen.codegen.lower._variants import KERNEL_CHOICES
from mcugen.errors import McugenError
from mcugen.model import numerics
from mcugen.plan import dynamic, state_memory
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.plan import paging as pagers
from mcugen.plan import patches as patch_strategies
from mcugen.plan import pools as pool_strategies
from mcugen.plan.dynamic import Allocator
from mcugen.plan.paging.target import OBJECTIVES, PagingCosts
from mcugen.plan.target import MemoryTarget, memory_target
from mcugen.plan.weight_staging import STAGE_CHOICES

if TYPE_CHECKING:
    from mcugen.boards import Target

KEEP_INPUT = ("no", "yes", "auto")
PATCH_WHEN = ("auto", "always")


@dataclass(frozen=True)
class PlanOptions:
    """How to plan: strategies by name, aliasing and rewrites on or off, the time budget."""

    order: str = orders.DEFAULT
    layout: str = layouts.DEFAULT
    in_place: bool = True  # views, element-wise in place, concatenation slices
    #: Producers write straight into their channel slice of a concatenation along the last axis
    #: (plan/channel_slices.py), where the arena does not grow; needs `in_place`.
    concat_in_place: bool = True
    rewrites: bool = True  # PAD fused into convolutions, depthwise split over concatenation
    time_budget: float | None = None
    allocator: Allocator = dynamic.DEFAULT  # static offsets, or buffers that move
    #: Input 0 live to the end of every inference, so the firmware's MLPerf Tiny runner can load
    #: it straight into the arena and infer on it many times (no input-sized copy): "no", "yes",
    #: or "auto" (Cortex-M firmware: whichever takes less RAM, arena plus the runner's copy).
    keep_input: str = "no"
    #: What memory the plan may use (plan/target.py): the board's memories, RAM, flash, stack,
    #: firmware RAM and the RAM budget; None: no board (one arena, no paging, no fit verdict).
    target: MemoryTarget | None = None
    #: Pool assignment (plan/pools) by name, over the target's internal memories (none: one
    #: arena, as for the host). Static offsets only.
    pools: str = pool_strategies.DEFAULT
    #: Paging between the target's fast and slow memory (plan/paging/target.py): with a RAM
    #: budget always, else when the arena does not fit the RAM and the board has an external
    #: memory (`paging`). The pager by name, what it minimises, and whether kernels may work on
    #: the slow memory in place (not when `copies_only`).
    pager: str = pagers.DEFAULT
    objective: str = "cycles"
    copies_only: bool = False
    paged: bool = True  # False: never page (a baseline to compare a paged plan with)
    #: Kernels (mcugen/kernel_choice.py): "opt" the fastest whatever their scratch; "memory"
    #: the fastest that keep the arena at the reference kernels'; "auto" as "opt" unless the
    #: plan does not fit the board's RAM, then as "memory"; "reference" the reference kernels
    #: only. `core` is the target's (boards' `core`), which decides the variants.
    kernels: str = "auto"
    core: str = "host"
    #: Where the model state (the variable tensors) lives (plan/state_memory.py): auto, ram or
    #: slow; the host keeps it in its RAM.
    state_memory: str = state_memory.DEFAULT
    #: Patch stages (plan/patches): the MACs they may add, as a fraction of the model's (0:
    #: none), the strategy by name, and when they are tried (PATCH_WHEN): "auto" only when the
    #: graph run whole does not fit the board's RAM (the target's, else the pools of its memories)
    #: and the board has no external memory to page to (never without a board), "always" on
    #: every plan. Static offsets only; a stage is kept when the arena gets smaller.
    patch_overhead: float = patch_strategies.DEFAULT_OVERHEAD
    patcher: str = patch_strategies.DEFAULT
    patch_when: str = "auto"
    #: Weights copied from flash into free arena bytes before the operators that re-read them
    #: (plan/weight_staging.py): "off" (default) or "auto" (where the arena has room at that
    #: step; never a larger arena). Static offsets in one arena only.
    stage_weights: str = "off"
    #: An ONNX model's arithmetic (mcugen/model/numerics.py): "ort" (onnxruntime's), "fixed"
    #: (TFLite's, bit-exact with TFLM); None: the default, "ort" (a TFLite model refuses any).
    onnx_numerics: str | None = None

    def __post_init__(self) -> None:
        """Every strategy named exists (else the registries' one-line error with the names)."""
        orders.ORDERS.get(self.order)
        layouts.LAYOUTS.get(self.layout)
        dynamic.ALLOCATORS.get(self.allocator)
        pool_strategies.POOLS.get(self.pools)
        patch_strategies.PATCHERS.get(self.patcher)
        if not 0 <= self.patch_overhead <= 10:
            raise ValueError("patch_overhead is a fraction of the model's MACs, from 0 to 10")
        object.__setattr__(self, "allocator", Allocator(self.allocator))
        if self.keep_input not in KEEP_INPUT:
            raise ValueError(f"keep_input is one of {', '.join(KEEP_INPUT)}")
        if self.kernels not in KERNEL_CHOICES:
            raise ValueError(f"kernels is one of {', '.join(KERNEL_CHOICES)}")
        if self.patch_when not in PATCH_WHEN:
            raise ValueError(f"patch_when is one of {', '.join(PATCH_WHEN)}")
        pagers.get_pager(self.pager)
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective is one of {', '.join(OBJECTIVES)}")
        if self.stage_weights not in STAGE_CHOICES:
            raise ValueError(f"stage_weights is one of {', '.join(STAGE_CHOICES)}")
        if self.onnx_numerics not in (None, *numerics.CHOICES):
            raise ValueError(f"onnx_numerics is one of {', '.join(numerics.CHOICES)}")
        if self.state_memory not in state_memory.STATE_MEMORIES:
            raise ValueError(f"state memory is one of {', '.join(state_memory.STATE_MEMORIES)}")

    @property
    def paging(self) -> PagingCosts | None:
        """What paging costs on the target with these choices; None when it cannot page."""
        if self.target is None or not self.paged:
            return None
        return self.target.paging_costs(self.pager, self.objective, copies_only=self.copies_only)

    @property
    def ram_budget(self) -> int | None:
        return self.target.ram_budget if self.target is not None else None

    @property
    def board(self) -> MemoryTarget | None:
        """The target when it is a board (not the host): what the fit verdict counts against."""
        return self.target if self.target is not None and not self.target.host else None

    @classmethod
    def tflm(cls) -> PlanOptions:
        """TFLM's own plan: the stored order, greedy by size, nothing shared, the reference
        kernels' scratch."""
        return cls(
            order="stored",
            layout="greedy_by_size",
            in_place=False,
            rewrites=False,
            kernels="reference",
            patch_overhead=0.0,
        )

    def as_tflm(self) -> PlanOptions:
        """TFLM's plan (`tflm`) on the same board: its allocator, pools, paging, core and state
        (what `--tflm-plan` plans)."""
        return replace(
            PlanOptions.tflm(),
            allocator=self.allocator,
            target=self.target,
            pools=self.pools,
            pager=self.pager,
            objective=self.objective,
            copies_only=self.copies_only,
            core=self.core,
            state_memory=self.state_memory,
            onnx_numerics=self.onnx_numerics,
        )


#: The user's planning choices by the command line's names (`--no-inplace` is "no_inplace"):
#: what `options_from` takes from the arguments, the Python API and a sweep's grid file.
CHOICES = (
    "order", "layout", "no_inplace", "no_rewrite", "time_budget", "allocator", "keep_input",
    "pools", "kernels", "ram_budget", "pager", "objective", "copies_only", "state_memory",
    "stage_weights", "patcher", "patch_overhead", "tflm_plan", "no_concat_in_place",
    "onnx_numerics",
)  # fmt: skip


def options_from(
    choices: Mapping[str, Any], *, firmware: bool = False, target: Target | None = None
) -> PlanOptions:
    """The one builder of `PlanOptions` from the user's choices (CHOICES; absent or None: the
    command line's default), for `target` (None: the host): the CLI's arguments, the API's and a
    sweep grid's options all go through it. `--tflm-plan` overrides order, layout, sharing. For
    Cortex-M `firmware` the input stays in the arena when that saves the MLPerf runner's copy of
    it (keep_input "auto"); a target with memories gets pools. An unknown name is one error line."""
    unknown = sorted(k for k in choices if k not in CHOICES)
    if unknown:
        raise McugenError(
            f"unknown planning option '{unknown[0]}'", hint=f"choose from {', '.join(CHOICES)}"
        )

    def get(name: str, default: Any) -> Any:
        value = choices.get(name)
        return default if value is None else value

    try:
        options = _built(get, choices, target, firmware)
    except ValueError as exc:  # PlanOptions' checks of a value
        raise McugenError(str(exc)) from None
    return options.as_tflm() if get("tflm_plan", False) else options


def _built(
    get: Any, choices: Mapping[str, Any], target: Target | None, firmware: bool
) -> PlanOptions:
    return PlanOptions(
        target=memory_target(target, choices.get("ram_budget")),
        pager=get("pager", pagers.DEFAULT),
        objective=get("objective", "cycles"),
        copies_only=bool(get("copies_only", False)),
        state_memory=get("state_memory", state_memory.DEFAULT),
        kernels=get("kernels", "auto"),
        core=target.port_board.core if target is not None else "host",
        stage_weights=get("stage_weights", "off"),
        pools=get("pools", pool_strategies.DEFAULT),
        order=get("order", orders.DEFAULT),
        layout=get("layout", layouts.DEFAULT),
        in_place=not get("no_inplace", False),
        concat_in_place=not get("no_concat_in_place", False),
        onnx_numerics=choices.get("onnx_numerics"),
        rewrites=not get("no_rewrite", False),
        time_budget=choices.get("time_budget"),
        allocator=get("allocator", dynamic.STATIC),
        keep_input=get("keep_input", "auto" if firmware else "no"),
        patcher=get("patcher", patch_strategies.DEFAULT),
        **patch_choice(get("patch_overhead", "auto")),
    )


def patch_choice(overhead: float | str) -> dict[str, Any]:
    """PlanOptions' patch fields for `--patch-overhead`: "auto" (the default budget when the
    model needs it) or a budget tried on every plan."""
    if overhead == "auto":
        return {"patch_overhead": patch_strategies.DEFAULT_OVERHEAD, "patch_when": "auto"}
    return {"patch_overhead": float(overhead), "patch_when": "always"}
