"""The house's layering, checked on the source: data flows model -> plan -> codegen -> host, and a
lower layer never imports a higher one (HOUSE_STYLE.md, "The shape of the system")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mcugen
from mcugen.codegen.lower import LOWERINGS
from mcugen.errors import McugenError
from mcugen.plan import dynamic
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.registry import Registry

PACKAGE = Path(mcugen.__file__).resolve().parent

#: package folder -> packages of mcugen it must not import.
FORBIDDEN = {
    "plan": ("mcugen.codegen", "mcugen.host", "mcugen.commands", "mcugen.pipeline"),
    "model": ("mcugen.plan", "mcugen.codegen", "mcugen.host", "mcugen.commands"),
    "codegen": ("mcugen.host", "mcugen.commands"),
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
    files = sorted((PACKAGE / folder).rglob("*.py"))
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


FAMILIES: list[Registry] = [orders.ORDERS, layouts.LAYOUTS, dynamic.ALLOCATORS, LOWERINGS]


@pytest.mark.parametrize("registry", FAMILIES, ids=lambda r: r.family)
def test_every_family_refuses_an_unknown_name_with_the_valid_names(registry: Registry) -> None:
    with pytest.raises(McugenError) as caught:
        registry.get("no_such_name")
    line = caught.value.line()
    assert line == (
        f"unknown {registry.family} 'no_such_name'; choose one of: {', '.join(registry.names())}"
    )
    assert "\n" not in line and len(registry) >= 3


@pytest.mark.parametrize(
    "registry", [orders.ORDERS, layouts.LAYOUTS, dynamic.ALLOCATORS], ids=lambda r: r.family
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
