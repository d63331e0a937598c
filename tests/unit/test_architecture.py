"""The house's layering, checked on the source: data flows model -> plan -> codegen -> pipeline
-> firmware -> link -> commands, and a lower layer never imports a higher one (HOUSE_STYLE.md,
"The shape of the system"; docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

import mcugen
from mcugen.codegen.lower import LOWERINGS
from mcugen.errors import McugenError
from mcugen.plan import dynamic, paging
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.plan import partition as partitions
from mcugen.registry import Registry
from support import EXAMPLE, ROOT

PACKAGE = Path(mcugen.__file__).resolve().parent

#: package folder -> packages of mcugen it must not import.
FORBIDDEN = {
    "plan": (
        "mcugen.codegen",
        "mcugen.pipeline",
        "mcugen.firmware",
        "mcugen.link",
        "mcugen.commands",
    ),
    "model": (
        "mcugen.plan",
        "mcugen.codegen",
        "mcugen.pipeline",
        "mcugen.firmware",
        "mcugen.link",
        "mcugen.commands",
    ),
    "codegen": ("mcugen.pipeline", "mcugen.firmware", "mcugen.link", "mcugen.commands"),
    "firmware": ("mcugen.link", "mcugen.commands"),
    # the stages pipeline.py runs import neither it nor what sits above it (no cycles)
    "patching.py": ("mcugen.pipeline", "mcugen.firmware", "mcugen.link", "mcugen.commands"),
    "kernel_choice.py": ("mcugen.pipeline", "mcugen.firmware", "mcugen.link", "mcugen.commands"),
    "planned.py": ("mcugen.pipeline", "mcugen.firmware", "mcugen.link", "mcugen.commands"),
    "kernel_costs.py": ("mcugen.pipeline", "mcugen.firmware", "mcugen.link", "mcugen.commands"),
    "options.py": ("mcugen.pipeline", "mcugen.patching", "mcugen.codegen.render", "mcugen.link"),
    "report": ("mcugen.commands", "mcugen.cli"),
    # the Python API, the figures it shares with the commands, and the sweep engine sit below
    # the commands (issue 36): the commands call them, never the other way
    "api.py": ("mcugen.commands", "mcugen.cli"),
    "figures.py": ("mcugen.commands", "mcugen.cli", "mcugen.api"),
    "sweep": ("mcugen.commands", "mcugen.cli"),
}


def imports_of(path: Path) -> list[str]:
    """Every module named by an import statement of `path`, at any depth (lazy imports too)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_lower_layers_import_no_higher_one(folder: str) -> None:
    where = PACKAGE / folder
    files = [where] if where.is_file() else sorted(where.rglob("*.py"))
    assert files
    bad = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in files
        for name in imports_of(path)
        if name.startswith(FORBIDDEN[folder])
    ]
    assert not bad, "\n".join(bad)


def test_the_import_check_can_fail(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from mcugen.codegen.lower import op_traits\n")
    assert "mcugen.codegen.lower" in imports_of(sample)


FAMILIES: list[Registry] = [
    orders.ORDERS,
    layouts.LAYOUTS,
    dynamic.ALLOCATORS,
    LOWERINGS,
    paging.PAGERS,
    partitions.PARTITIONERS,
]


@pytest.mark.parametrize("registry", FAMILIES, ids=lambda r: r.family)
def test_every_family_refuses_an_unknown_name_with_the_valid_names(registry: Registry) -> None:
    with pytest.raises(McugenError) as caught:
        registry.get("no_such_name")
    line = caught.value.line()
    listing = f"choose one of: {', '.join(registry.names())}"
    if registry is LOWERINGS:  # 67 operators: the line names the command that lists them
        listing = "`mcugen ops` lists them"
    assert line == f"unknown {registry.family} 'no_such_name'; {listing}"
    assert "\n" not in line and len(registry) >= 3


@pytest.mark.parametrize(
    "registry",
    [orders.ORDERS, layouts.LAYOUTS, dynamic.ALLOCATORS, paging.PAGERS, partitions.PARTITIONERS],
    ids=lambda r: r.family,
)
def test_every_strategy_family_has_a_registered_default(registry: Registry) -> None:
    assert registry.default in registry
    assert registry.get() is registry.get(registry.default)


def test_a_name_cannot_be_registered_twice() -> None:
    registry: Registry[int] = Registry("thing", default="a")
    registry.add("a", 1)
    with pytest.raises(RuntimeError, match="two items registered as thing 'a'"):
        registry.add("a", 2)
    assert list(registry) == ["a"] and registry["a"] == 1


OPTIONS: dict[str, Registry[Any]] = {
    "--order": orders.ORDERS,
    "--layout": layouts.LAYOUTS,
    "--allocator": dynamic.ALLOCATORS,
}
#: optimize writes a .tflite for stock TFLM: it takes no --allocator (argparse refuses it).
CASES = [
    (command, option)
    for command in ("plan", "build", "optimize")
    for option in OPTIONS
    if (command, option) != ("optimize", "--allocator")
]


@pytest.mark.parametrize(("command", "option"), CASES)
def test_the_command_line_gives_the_registry_error_for_unknown_names(
    command: str, option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registry = OPTIONS[option]
    from mcugen import cli

    out = tmp_path / "out"
    extra = {"plan": [], "build": ["-o", str(out)], "optimize": ["-o", str(out)]}[command]
    code = cli.main([command, str(EXAMPLE), option, "no_such_name", *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        f"mcugen: error: unknown {registry.family} 'no_such_name'; "
        f"choose one of: {', '.join(registry.names())}\n"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "arguments",
    [
        ["verify", str(EXAMPLE), "--samples", "0"],
        ["verify", str(EXAMPLE), "--samples", "-2"],
        ["plan", str(EXAMPLE), "--time-budget", "-1"],
        ["plan", str(EXAMPLE), "--time-budget", "nan"],
        ["plan", str(EXAMPLE), "--time-budget", "many"],
    ],
)
def test_numeric_options_out_of_range_are_refused(
    arguments: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from mcugen import cli

    with pytest.raises(SystemExit) as stopped:
        cli.main(arguments)
    assert stopped.value.code == 2
    assert "is not a number between" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["run", "--board", "nucleo-f767", "--port", "/dev/no-such-tty"], "serial port not found"),
        (["run", "--board", "nucleo-f767", "--emulate", "--port", "/dev/null"], "conflict"),
        (["verify", "--port", "/dev/null"], "the host board runs as a process"),
        (["flash"], "say which board to flash"),
    ],
)
def test_device_options_that_cannot_work_are_refused_before_building(
    arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcugen import cli

    code = cli.main([arguments[0], str(EXAMPLE), *arguments[1:]])
    captured = capsys.readouterr()
    assert code == 2 and message in captured.err and captured.err.count("\n") == 1
    assert "compiled" not in captured.out


def test_a_missing_board_is_said_not_silently_assumed(capsys: pytest.CaptureFixture[str]) -> None:
    from mcugen import cli

    assert cli.main(["run", str(EXAMPLE)]) == 0
    assert capsys.readouterr().out.startswith("mcugen: no --board given: using the host board")


# --- One memory target, one route from flags (issue 33) ---------------------------------------

#: Where a board's memory facts may be stated: its board.toml (read by boards.py) and the one
#: builder of what a plan may use (plan/target.py).
MEMORY_FACTS_HOME = ("boards.py", "plan/target.py")
#: Field names that, two or more in one class, restate a board's memory (as BoardLimits,
#: PoolTarget, PagingTarget and StateTarget did before MemoryTarget).
MEMORY_FIELDS = {
    "ram_size", "flash_size", "ram_origin", "flash_origin", "firmware_ram", "stack_bytes",
    "memories", "ram_budget", "ram", "flash",
}  # fmt: skip
#: Address ranges of Cortex-M memories (code/flash, SRAM, external RAM and flash).
ADDRESS_RANGES = (
    (0x0800_0000, 0x0FFF_FFFF),
    (0x2000_0000, 0x2FFF_FFFF),
    (0x6000_0000, 0xDFFF_FFFF),
)


def memory_facts(path: Path) -> list[str]:
    """Board memory facts stated in `path`: a class with two or more memory fields, or a literal
    that is a memory address."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            fields = {
                s.target.id
                for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            }
            if len(fields & MEMORY_FIELDS) >= 2:
                found.append(f"class {node.name} ({', '.join(sorted(fields & MEMORY_FIELDS))})")
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            if any(low <= node.value <= high for low, high in ADDRESS_RANGES):
                found.append(f"address {node.value:#x} at line {node.lineno}")
    return found


def test_board_memory_facts_live_in_board_toml_and_the_memory_target() -> None:
    bad = [
        f"{path.relative_to(PACKAGE)}: {fact}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).as_posix() not in MEMORY_FACTS_HOME
        for fact in memory_facts(path)
    ]
    assert not bad, "\n".join(bad)


def test_the_memory_fact_check_can_fail(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from dataclasses import dataclass\n\n"
        "@dataclass\nclass Limits:\n    ram_size: int\n    firmware_ram: int\n\n"
        "SDRAM = 0xC000_0000\n"
    )
    assert memory_facts(sample) == [
        "class Limits (firmware_ram, ram_size)",
        "address 0xc0000000 at line 8",
    ]


def test_no_getattr_args_below_the_command_layer() -> None:
    """The options reach the planner as one PlanOptions built in commands/ (issue 33 item 2)."""
    above = ("cli.py", "commands/")
    bad = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.relative_to(PACKAGE).as_posix().startswith(above)
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if "getattr(args" in line
    ]
    assert not bad, "\n".join(bad)


# --- Module size (HOUSE_STYLE.md rule 6: modules under about 400 lines; issue 33) ---------------

MODULE_LINES = 400
#: Where the limit holds: every Python module of the package, its tests and their C drivers, the
#: generated test graphs, the benchmarks and the examples.
SIZED = {
    "mcugen": ("*.py",),
    "tests": ("*.py", "*.c", "*.h"),
    "testgraphs": ("*.py",),
    "benchmarks": ("*.py",),
    "examples": ("*.py",),
}


def modules_over(paths: list[Path], limit: int = MODULE_LINES) -> list[str]:
    """The paths of more than `limit` lines, each with its count."""
    counts = {path: len(path.read_text().splitlines()) for path in paths}
    return [f"{path}: {n} lines" for path, n in counts.items() if n > limit]


def test_no_module_is_over_400_lines() -> None:
    files = [
        path
        for folder, patterns in SIZED.items()
        for pattern in patterns
        for path in sorted((ROOT / folder).rglob(pattern))
    ]
    assert len(files) > 400, "modules not found"
    bad = modules_over(files)
    assert not bad, "split these by job:\n" + "\n".join(bad).replace(f"{ROOT}/", "")


def test_the_module_size_check_can_fail(tmp_path: Path) -> None:
    at_limit, over = tmp_path / "at_limit.py", tmp_path / "over.py"
    at_limit.write_text("x = 1\n" * MODULE_LINES)
    over.write_text("x = 1\n" * (MODULE_LINES + 1))
    assert modules_over([at_limit, over]) == [f"{over}: 401 lines"]
