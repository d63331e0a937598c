"""A partitioned model on several QEMU twins, host-relayed (link/multiboard.py, issue 16): the LCP
example on 2, 3 and 4 twins (`branch`, `cpsat`, `pipeline`) and an Inception-style net on 2 equal
the single-board run and TFLM bit for bit; only the stem's and the branches' outputs cross
board-to-board links, with the bytes the partition models; the three branchy examples on 2, 3 and
4 twins; a model no single F767 holds runs on two, checked against TFLM; twins are reaped on
Ctrl-C; the CLI's report on mixed boards and its errors."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mcugen import cli
from mcugen.boards import Target, load_board, resolve_target
from mcugen.commands._partition import board_specs
from mcugen.link import linked_run, multiboard, qemu
from mcugen.link.host_run import random_inputs
from mcugen.link.linked_run import run_partition
from mcugen.link.multiboard import (
    Firmware,
    RelayRun,
    TwinRun,
    build_boards,
    build_firmware,
    run_twin,
)
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.plan.partition import HOST, PARTITIONERS, LinkModel, Partition, partition_problem
from mcugen.plan.partition.segments import BoardProgram, Segment, board_programs, segments
from mcugen.reference import tflm_outputs
from support import NEEDS_TWIN, ROOT, example_module, sweep
from testgraphs import inception

pytestmark = NEEDS_TWIN

LCP = ROOT / "examples" / "lcp_k4_int8.tflite"
F767 = "nucleo-f767"


def f767s(n: int) -> str:
    return ",".join([F767] * n)


class Twins:
    """One model's firmware: the whole model on one board, and each board program built once
    (keyed by its bytes); runs go board to board over link UARTs unless told otherwise."""

    def __init__(self, graph: Graph, workdir: Path) -> None:
        self.graph, self.workdir = graph, workdir
        base = resolve_target(load_board(F767), emulate=True)
        self.target: Target = replace(base, links=base.port_board.link_uarts)
        self.options = PlanOptions(core=self.target.port_board.core, keep_input="auto")
        self.built: dict[bytes, Firmware] = {}
        self.sample = random_inputs(graph, 0)
        ops = tuple(range(len(graph.operators)))
        one = build_firmware(graph, ops, self.target, self.options, workdir / "one")
        self.single: TwinRun = run_twin(one, self.sample)
        self.tflm = tflm_outputs(write_model(graph), graph, [self.sample])[0]

    def firmware(self, programs: Sequence[BoardProgram]) -> list[Firmware]:
        found = []
        for prog in programs:
            key = write_model(prog.graph)
            if key not in self.built:
                directory = self.workdir / f"fw{len(self.built)}"
                targets = [self.target] * (prog.board + 1)
                self.built[key] = build_boards([prog], targets, lambda _t: self.options, directory)[
                    0
                ]
            found.append(self.built[key])
        return found

    def partition(self, boards: int, strategy: str) -> Partition:
        problem = partition_problem(self.graph, board_specs(f767s(boards)), LinkModel(921600))
        return PARTITIONERS.get(strategy)(problem)

    def run(self, part: Partition, links: str = "uart") -> tuple[tuple[Segment, ...], RelayRun]:
        segs = segments(self.graph, part)
        programs = board_programs(self.graph, segs)
        firmware = self.firmware(programs)
        return segs, run_partition(self.graph, segs, programs, firmware, self.sample, links=links)

    def assert_exact(self, run: RelayRun) -> None:
        for ours, single, tflm in zip(run.outputs, self.single.outputs, self.tflm, strict=True):
            assert ours.tobytes() == single.tobytes()
            np.testing.assert_array_equal(ours, tflm)
        assert multiboard.outputs_equal(run.outputs, self.single.outputs)


@pytest.fixture(scope="module")
def lcp(workdir: Path) -> Twins:
    return Twins(import_model(LCP.read_bytes()), workdir / "lcp")


def board_links(run: RelayRun) -> dict[tuple[int, int], int]:
    return {k: n for k, n in run.link_bytes.items() if HOST not in k}


@pytest.mark.parametrize(("boards", "strategy"), [(2, "branch"), (3, "branch"), (4, "cpsat")])
def test_lcp_branches_exact(lcp: Twins, boards: int, strategy: str) -> None:
    part = lcp.partition(boards, strategy)
    segs, run = lcp.run(part)
    lcp.assert_exact(run)
    g = lcp.graph
    stem = g.operators[0].outputs[0]
    pooled = {op.outputs[0] for op in g.operators if op.opcode == "AVERAGE_POOL_2D"}
    crossing = {t for s in segs for t in s.inputs if s.source(t, segs) not in (HOST, s.board)}
    assert stem in crossing and crossing <= {stem} | pooled
    assert crossing == set(part.crossing())
    assert board_links(run) == {k: n for k, n in part.link_bytes.items() if HOST not in k}
    remote = [t for t in pooled if part.assignment[g.producers()[t]] != 0]
    assert sum(board_links(run).values()) == 512 * (boards - 1) + 24 * len(remote)
    assert {s.board for s in segs} == set(range(boards))
    assert sum(run.board_instructions(b) for b in range(boards)) > lcp.single.instructions * 0.99


def test_lcp_pipeline_exact(lcp: Twins) -> None:
    part = lcp.partition(3, "pipeline")
    _, run = lcp.run(part)
    lcp.assert_exact(run)
    assert board_links(run) == {k: n for k, n in part.link_bytes.items() if HOST not in k}
    assert sum(board_links(run).values()) > 512 * 2 + 24 * 2  # cuts activations mid-branch


def test_inception_two_twins_exact(workdir: Path) -> None:
    """Two of each Inception block's four branches on board 1 (no strategy splits this small
    net: its activations cost more on a link than its branches' compute): the cut crosses each
    fork and join, so board 0 runs three segments and board 1 two."""
    graph = import_model(write_model(inception(0, blocks=2, channels=8, hw=16)))
    assert [graph.operators[k].opcode for k in (9, 18)] == ["CONCATENATION"] * 2
    twins = Twins(graph, workdir / "inception")
    problem = partition_problem(graph, board_specs(f767s(2)), LinkModel(921600))
    on_1 = {2, 3, 4, 5, 6, 11, 12, 16, 17}  # the 1x1-3x3 and 1x1-3x3-3x3 / pool-1x1 branches
    part = Partition.of("forced", problem, [int(k in on_1) for k in range(len(graph.operators))])
    segs, run = twins.run(part)
    assert [s.board for s in segs] == [0, 1, 0, 1, 0]
    twins.assert_exact(run)
    assert board_links(run) == {k: n for k, n in part.link_bytes.items() if HOST not in k}


@pytest.fixture(scope="module")
def branchy(workdir: Path) -> Callable[[str], Twins]:
    """examples/make_branchy_nets.py's models, each built and run on one board once."""
    built: dict[str, Twins] = {}

    def get(kind: str) -> Twins:
        if kind not in built:
            path = ROOT / "examples" / f"{kind}_int8.tflite"
            built[kind] = Twins(import_model(path.read_bytes()), workdir / kind)
        return built[kind]

    return get


BRANCHY_CORE = {
    ("inception", 2, "pipeline"),
    ("nas_cells", 3, "pipeline"),
    ("two_tower", 2, "cpsat"),
    ("two_tower", 4, "pipeline"),
}


@pytest.mark.parametrize(
    ("kind", "boards", "strategy"),
    sweep(
        [
            *((kind, n, "pipeline") for kind in ("inception", "nas_cells") for n in (2, 3, 4)),
            ("two_tower", 2, "cpsat"),
            ("two_tower", 3, "pipeline"),
            ("two_tower", 4, "pipeline"),
        ],
        # the suite: each model, each board count, both strategies (benchmarks/sweeps.py: all)
        lambda case: case in BRANCHY_CORE,
    ),
)
def test_branchy_models_exact(
    branchy: Callable[[str], Twins], kind: str, boards: int, strategy: str
) -> None:
    """Inception modules, two DARTS cells and the two-input, two-output towers on 2, 3 and 4
    twins: pipeline stages cut through the forks (several tensors cross each cut); cpsat puts a
    tower on each board, each input loaded on its tower's board, and only the two 16-byte
    summaries cross. The relay's bytes per link, host links included, are the partition's."""
    twins = branchy(kind)
    part = twins.partition(boards, strategy)
    segs, run = twins.run(part)
    twins.assert_exact(run)
    assert {s.board for s in segs} == set(range(boards))
    assert dict(run.link_bytes) == dict(part.link_bytes)
    if strategy == "cpsat":
        assert board_links(run) == {(0, 1): 16, (1, 0): 16}
        assert {(a, b) for a, b in run.link_bytes if a == HOST} == {(HOST, 0), (HOST, 1)}


def test_a_model_no_board_holds_runs_on_two_against_tflm(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The wide two-tower (two 253,952-byte maps and a third being written live at once on one
    board), run whole: one F767 fails with the one-line error before compiling; two run it,
    checked against TFLM."""
    model = tmp_path / "wide.tflite"
    model.write_bytes(write_model(example_module("make_branchy_nets").two_tower(64, 62, 1)))
    whole = ("--patch-overhead", "0")
    code, out, err = run_cli(capsys, str(model), "--board", F767, "--emulate", *whole)
    # stdout holds at most the kernel-choice note (the memory choice tried first: it does not
    # fit either); the error is one line on stderr
    assert code == 3 and all(
        line.startswith(("mcugen: kernels", "  op ")) for line in out.splitlines()
    )
    assert len(err.strip().splitlines()) == 1
    assert "model does not fit nucleo-f767's twin (mps2-an500): RAM needs" in err
    argv = ("--boards", f767s(2), "--emulate", "--partition-work", "0.2", "--json", *whole)
    code, out, err = run_cli(capsys, str(model), *argv)
    assert code == 0, err
    r = json.loads(out)
    assert r["reference"] == "TFLM (tflite_micro)" and r["outputs_equal"] is True
    assert r["single_board"].startswith("model does not fit nucleo-f767")
    assert r["speedup"] is None and r["single_board_instructions"] is None
    assert r["board_to_board_bytes"] == 2 * 62
    assert all(b["arena_bytes"] < 512 * 1024 for b in r["boards"])


def test_twins_reaped_on_interrupt(lcp: Twins, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the middle of a run on three boards (two twins up): no QEMU is left."""
    part = lcp.partition(3, "branch")
    calls = []
    real = linked_run.run_phase

    def interrupted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 2:
            assert len(qemu._LIVE) == 2
            raise KeyboardInterrupt
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(linked_run, "run_phase", interrupted)
    with pytest.raises(KeyboardInterrupt):
        lcp.run(part)
    assert not qemu._LIVE


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_report_mixed_boards(capsys: pytest.CaptureFixture[str]) -> None:
    mixed = f"{F767},disco-f746ng"
    code, out, err = run_cli(
        capsys, str(LCP), "--boards", mixed, "--emulate", "--partition", "branch", "--json"
    )
    assert code == 0, err
    r = json.loads(out)
    assert r["outputs_equal"] is True and r["reference"] == f"the single-board run ({F767})"
    assert r["board_to_board_bytes"] == 512 + 24
    assert [b["name"] for b in r["boards"]] == [F767, "disco-f746ng"]
    assert all(row["bytes"] == row["model_bytes"] for row in r["links"])
    assert 1.0 < r["speedup"] < 2.0
    assert r["single_board_instructions"] > sum(b["instructions"] for b in r["boards"]) * 0.9


def test_cli_says_when_outputs_differ(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bit-exact verdict can fail: one byte of a relayed output flipped makes the report say
    DIFFERENT, the error line name the bug, and the exit status 1."""
    from mcugen.commands import _run_boards

    def corrupted(*args: object, **kwargs: object) -> RelayRun:
        run = run_partition(*args, **kwargs)  # type: ignore[arg-type]
        run.outputs[0].reshape(-1)[0] ^= 1
        return run

    monkeypatch.setattr(_run_boards, "run_partition", corrupted)
    code, out, err = run_cli(capsys, str(LCP), "--boards", f767s(2), "--emulate", "--links", "host")
    assert code == 1 and "DIFFERENT (a bug in mcugen)" in out
    assert f"outputs differ from the single-board run ({F767})'s" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--boards", F767, "--emulate"], "a partition needs two or more"),
        (["--boards", f767s(2)], "not built yet"),
        (["--boards", f"{F767},no-such-board", "--emulate"], "no-such-board"),
        (["--boards", f767s(2), "--emulate", "--board", F767], "--board and --boards"),
        (["--partition", "branch"], "--partition spreads the model over --boards"),
    ],
)
def test_cli_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run_cli(capsys, str(LCP), *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and not out
