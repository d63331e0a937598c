"""Memory planning: TFLM's arena head against mcugen's arena for every registered strategy pair.

For every model in ../shared/models and the generated irregular graphs (testgraphs),
one markdown table: TFLM's head measured with tflite_micro in this run (its greedy-by-size plan of
the stored order, kernel scratch included), the peak live bytes of the stored order (no layout of
it is smaller), mcugen's arena for each order/layout pair without shared storage (the default
pair, TFLM's pair, every order with the default layout, every layout with the default order:
what stock TFLM reaches with `mcugen optimize`), the default pair with in-place sharing (what
mcugen's own runtime uses), the best arena, TFLM head / best, and the planning time of that
default in-place plan. Every plan reserves the arena scratch TFLM's kernels request
(mcugen/plan/tflm_scratch.py), so the figures compare with TFLM's head like for like
(stored/greedy_by_size reproduces it); mcugen's own kernels request about as much. Then summary
lines. A failure in one entry prints an error cell and the run goes on.
Run: PYTHONPATH=. python benchmarks/planning.py [--quick] [--models DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcugen.codegen.lower import op_traits
from mcugen.errors import McugenError
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.plan.compare import (
    StrategyRun,
    best_run,
    compare_strategies,
    run_pair,
    strategy_pairs,
)
from mcugen.plan.order import peak_of
from mcugen.plan.tflm_scratch import tflm_scratch_bytes
from mcugen.reference import tflm_arena_head, tflm_graph_head
from testgraphs import benchmark_suite

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
QUICK_MAX_OPERATORS = 40
QUICK_MAX_FILE_BYTES = 1 << 20


@dataclass
class Entry:
    name: str
    generated: bool
    operators: int = 0
    tflm_head: int | str = "-"
    stored_peak: int | str = "-"
    runs: dict[tuple[str, str], StrategyRun] = field(default_factory=dict)
    in_place: StrategyRun | None = None  # the default pair with storage sharing (mcugen's own)
    best: StrategyRun | None = None
    error: str = ""

    @property
    def order_bound(self) -> int:
        """The best proven lower bound on the peak of any order (no storage shared)."""
        return max((r.unshared_order_bound for r in self.runs.values() if not r.error), default=0)

    @property
    def ceiling(self) -> float | None:
        """TFLM head / proven order bound: what no order and layout can beat without sharing."""
        if isinstance(self.tflm_head, int) and self.order_bound:
            return self.tflm_head / self.order_bound
        return None

    @property
    def ratio(self) -> float | None:
        if isinstance(self.tflm_head, int) and self.best and self.best.arena_bytes:
            return self.tflm_head / self.best.arena_bytes
        return None


def _short(exc: BaseException) -> str:
    text = exc.what if isinstance(exc, McugenError) else f"{type(exc).__name__}: {exc}"
    return text.replace("|", "/").replace("\n", " ")[:80]


def measure(
    name: str, load: Callable[[], Graph], tflite: Path | None, pairs: Sequence[tuple[str, str]]
) -> Entry:
    """One table row. `tflite` is the model file (None: write the graph to a temporary file)."""
    entry = Entry(name, generated=tflite is None)
    try:
        graph = load()
        entry.operators = len(graph.operators)
        entry.tflm_head = _tflm_head(graph, tflite)
        scratch = tflm_scratch_bytes(graph)
        entry.stored_peak = peak_of(graph, tuple(range(len(graph.operators))), scratch)
        runs = compare_strategies(graph, pairs, scratch=scratch)
        entry.runs = {(r.order, r.layout): r for r in runs}
        default = (orders.DEFAULT, layouts.DEFAULT)
        traits = op_traits(graph)
        entry.in_place, _ = run_pair(graph, *default, scratch=scratch, traits=traits)
        entry.best = best_run([*runs, entry.in_place])
    except Exception as exc:  # one broken model must not stop the table
        entry.error = _short(exc)
    return entry


def _tflm_head(graph: Graph, tflite: Path | None) -> int | str:
    try:
        return tflm_arena_head(tflite) if tflite is not None else tflm_graph_head(graph)
    except Exception as exc:
        return f"error: {_short(exc)}"


def _cell(run: StrategyRun | None) -> str:
    if run is None:
        return "-"
    return f"error: {run.error[:40]}" if run.error else str(run.arena_bytes)


def _best_cell(e: Entry) -> str:
    best = e.best
    if best is None:
        return "-"
    shared = " in place" if best is e.in_place else ""
    return f"{best.arena_bytes} ({best.order}/{best.layout}{shared})"


def table(entries: Sequence[Entry], pairs: Sequence[tuple[str, str]]) -> list[str]:
    head = ["model", "ops", "TFLM head", "stored LB", *(f"{o}/{lay}" for o, lay in pairs)]
    head += ["default in place", "best", "TFLM/best", "TFLM/order LB", "default ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in entries:
        cells = [e.name + (" (gen)" if e.generated else ""), str(e.operators or "-")]
        if e.error:
            cells += [f"error: {e.error}"] + ["-"] * (len(head) - 3)
        else:
            cells += [str(e.tflm_head), str(e.stored_peak)]
            cells += [_cell(e.runs.get(p)) for p in pairs]
            cells += [_cell(e.in_place), _best_cell(e)]
            cells.append(f"{e.ratio:.2f}" if e.ratio is not None else "-")
            cells.append(f"{e.ceiling:.2f}" if e.ceiling is not None else "-")
            run = e.in_place
            cells.append(f"{run.plan_seconds * 1000:.1f}" if run and not run.error else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def summary(entries: Sequence[Entry]) -> list[str]:
    ok = [e for e in entries if not e.error and e.best is not None]
    lines = []
    for label, gen in (("generated graphs", True), ("real models", False)):
        ratios = [e.ratio for e in ok if e.generated == gen and e.ratio is not None]
        if ratios:
            lines.append(
                f"mean TFLM head / best mcugen arena on {label}: {statistics.mean(ratios):.2f} "
                f"(min {min(ratios):.2f}, max {max(ratios):.2f}, {len(ratios)} models)"
            )
    lines += _ceiling_lines(ok)
    at_bound = [e for e in ok if e.best is not None and e.best.at_lower_bound]
    lines.append(
        f"best arena at the lower bound of its own order: {len(at_bound)} of {len(ok)} models"
    )
    pairs = [(e.best.arena_bytes, e.tflm_head) for e in ok if e.best is not None]
    measured = [(arena, head) for arena, head in pairs if isinstance(head, int)]
    within = sum(1 for arena, head in measured if arena <= head)
    lines.append(f"best arena <= TFLM head: {within} of {len(measured)} models measured by TFLM")
    lines.append(_time_line(ok))
    failed = [e.name for e in entries if e.error]
    if failed:
        lines.append(f"entries that failed: {', '.join(failed)}")
    return lines


def _ceiling_lines(ok: Sequence[Entry]) -> list[str]:
    """How far orders alone can go on the generated graphs: where the exact search proved the
    minimum peak over all orders, TFLM head / that minimum bounds TFLM/best (sharing aside)."""
    gen = [e for e in ok if e.generated and e.ceiling is not None and e.best is not None]
    proven = [e for e in gen if e.best is not None and e.order_bound >= e.best.peak_live_bytes]
    if not proven:
        return []
    best = [e.ratio for e in proven if e.ratio is not None]
    ceiling = [e.ceiling for e in proven if e.ceiling is not None]
    return [
        f"generated graphs whose minimum peak over all orders is proven: {len(proven)} of "
        f"{len(gen)}; on them TFLM head / proven minimum is {statistics.mean(ceiling):.2f} on "
        f"average and mcugen reaches {statistics.mean(best):.2f} (sharing storage can go beyond)"
    ]


def _time_line(ok: Sequence[Entry]) -> str:
    timed = [(e.in_place.plan_seconds, e) for e in ok if e.in_place and not e.in_place.error]
    big = [(s, e) for s, e in timed if e.operators >= 300]
    text = f"default strategies ({orders.DEFAULT}/{layouts.DEFAULT}, in place): "
    if big:
        s, e = max(big, key=lambda x: x[0])
        text += f"max planning time on >=300-operator graphs {s * 1000:.1f} ms ({e.name}); "
    else:
        text += "no graph with >=300 operators in this run; "
    if timed:
        s, e = max(timed, key=lambda x: x[0])
        text += f"max on any model {s * 1000:.1f} ms ({e.name}, {e.operators} ops)"
    return text


def entries_to_run(models: Path, quick: bool) -> list[tuple[str, Callable[[], Graph], Path | None]]:
    todo: list[tuple[str, Callable[[], Graph], Path | None]] = []
    for path in sorted(models.glob("*.tflite")) if models.is_dir() else []:
        if quick and (
            path.stat().st_size > QUICK_MAX_FILE_BYTES
            or len(load_model(path).operators) > QUICK_MAX_OPERATORS
        ):
            continue
        todo.append((path.stem, lambda p=path: load_model(p), path))  # type: ignore[misc]
    for name, build in benchmark_suite(quick):
        todo.append((name, build, None))
    return todo


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"CI-sized: real models up to {QUICK_MAX_OPERATORS} ops, one graph per family",
    )
    parser.add_argument("--models", type=Path, default=SHARED_MODELS, help="directory of .tflite")
    args = parser.parse_args(argv)
    pairs = strategy_pairs([(orders.DEFAULT, layouts.DEFAULT)])
    entries = []
    for name, load, path in entries_to_run(args.models, args.quick):
        entries.append(measure(name, load, path, pairs))
        print(f"measured {name}", file=sys.stderr, flush=True)
    print(
        f"orders: {', '.join(sorted(orders.ORDERS))} (default {orders.DEFAULT}); "
        f"layouts: {', '.join(sorted(layouts.LAYOUTS))} (default {layouts.DEFAULT})"
    )
    print()
    print("\n".join(table(entries, pairs)))
    print()
    print("\n".join(summary(entries)))
    if not args.models.is_dir():
        print(f"({args.models} not found: generated graphs only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
