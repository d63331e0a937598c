"""The Python API (mcugen/api.py, docs/api.md): the figures of the commands' JSON, a model as a
path, bytes or a graph, one-line errors, no files left behind, and docs/api.md's search example
run as written."""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from mcugen import api, cli
from mcugen.errors import McugenError
from mcugen.model.load import load_model
from support import EXAMPLE, ROOT, int8_classifier
from support.tflm import NEEDS_TWIN


def _cli_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    cli.main(argv)
    out: dict = json.loads(capsys.readouterr().out)
    return out


def test_plan_is_the_json_of_mcugen_plan(capsys: pytest.CaptureFixture[str]) -> None:
    result = api.plan(EXAMPLE, board="nucleo-f767", strategies=True)
    assert result.report == _cli_json(
        ["plan", str(EXAMPLE), "--board", "nucleo-f767", "--json"], capsys
    )
    fit = result.report["fit"]
    assert (result.fits, result.ram_need, result.flash_need) == (
        fit["fits"],
        fit["ram_need"],
        fit["flash_need"],
    )
    assert result.arena_bytes == result.report["arena_bytes"] and result.flash_linked
    assert result.estimated_instructions and result.estimated_ms and result.estimated_uj
    with pytest.raises(FrozenInstanceError):
        result.arena_bytes = 0  # type: ignore[misc]


def test_a_path_bytes_and_a_graph_plan_alike() -> None:
    by_path = api.plan(EXAMPLE, board="nucleo-l4r5zi", link=False)
    by_bytes = api.plan(EXAMPLE.read_bytes(), board="nucleo-l4r5zi", link=False)
    by_graph = api.plan(load_model(EXAMPLE), board="nucleo-l4r5zi", link=False)
    assert by_path == by_bytes == by_graph
    built = api.plan(int8_classifier(seed=1))  # no board: the host, no fit verdict
    assert len(built.model_sha256) == 64 and built.fits is None and built.board == "host"


def test_options_as_names_or_plan_options() -> None:
    named = api.plan(EXAMPLE, board="nucleo-f767", options={"order": "stored"}, link=False)
    options = api.plan_options({"order": "stored"}, api.target("nucleo-f767"))
    typed = api.plan(EXAMPLE, board="nucleo-f767", options=options, link=False)
    assert named == typed and named.report["order_strategy"] == "stored"
    with pytest.raises(McugenError, match="unknown planning option 'colour'"):
        api.plan(EXAMPLE, options={"colour": "red"})
    with pytest.raises(McugenError, match="unknown order strategy 'fastest'"):
        api.plan(EXAMPLE, options={"order": "fastest"})
    with pytest.raises(McugenError, match="kernels is one of"):
        api.plan(EXAMPLE, options={"kernels": "fastest"})
    with pytest.raises(McugenError, match="file not found"):
        api.plan(ROOT / "no_such_model.tflite")


def test_a_search_loop_leaves_no_files_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    graph = int8_classifier(seed=2)
    results = {api.plan(graph, board="nucleo-f767", link=False).arena_bytes for _ in range(200)}
    assert len(results) == 1
    api.build(graph, board="nucleo-f767")
    assert os.listdir(tmp_path) == []


@NEEDS_TWIN
def test_run_build_and_verify_on_a_twin(capsys: pytest.CaptureFixture[str]) -> None:
    run = api.run(EXAMPLE, board="nucleo-f767")
    ran = _cli_json(["run", str(EXAMPLE), "--board", "nucleo-f767", "--emulate", "--json"], capsys)
    ours = json.loads(json.dumps(dict(run.report)))
    assert {k: v for k, v in ours.items() if k != "seconds"} == {
        k: v for k, v in ran.items() if k != "seconds"
    }
    assert run.unit == "instructions" and run.per_inference == ran["per_inference"]
    assert run.estimated_uj == ran["estimate"]["uj"]
    built = api.build(EXAMPLE, board="nucleo-f767")
    assert built.executable is None and built.flash_bytes and built.ram_bytes
    checked = api.verify(int8_classifier(seed=3), board="nucleo-l4r5zi", samples=2)
    assert checked.ok and checked.samples == 2 and checked.report["ok"]


def test_the_search_example_of_docs_api_md_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "docs" / "api.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text, re.S)[-1]
    exec(compile(code, "docs/api.md", "exec"), {"__name__": "docs_api"})
    assert re.match(r"fastest that fits: side \d+, width \d+", capsys.readouterr().out)


def test_commands_build_options_as_the_api_does() -> None:
    parsed = cli._parser(["plan", str(EXAMPLE)]).parse_args(
        ["plan", str(EXAMPLE), "--order", "stored", "--no-inplace"]
    )
    from mcugen.commands._common import plan_options

    on = api.target(None)
    assert plan_options(parsed, target=on) == api.plan_options(
        {"order": "stored", "no_inplace": True}, on
    )


def test_the_api_is_versioned() -> None:
    assert api.API_VERSION == 1
    assert Path(api.__file__).name == "api.py"
