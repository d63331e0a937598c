"""`mcugen export` on the command line: what it writes per format, its manifests parse against
what each tool documents, and bad input is one line, a non-zero exit and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mcugen.cli import main
from mcugen.model.tflite_write import write_model
from support import EXAMPLE, mobilenet_stem

#: Keys each manifest must have: PlatformIO library.json (docs.platformio.org, "library.json"),
#: Arduino library.properties (arduino.github.io/arduino-cli, "Library specification"), Zephyr
#: module.yml (docs.zephyrproject.org, "Modules": build.cmake, build.kconfig).
ARDUINO_KEYS = {"name", "version", "author", "maintainer", "sentence", "paragraph", "category"}
ARDUINO_KEYS |= {"url", "architectures"}


def export(tmp: Path, *args: str) -> tuple[int, Path]:
    out = tmp / "lib"
    return main(["export", str(EXAMPLE), "-o", str(out), "--name", "tiny", *args]), out


def test_lib_export_writes_the_header_sources_and_no_main(tmp_path: Path, capsys) -> None:
    code, out = export(tmp_path, "--cpu", "cortex-m7", "--arena-section", ".dtcm_bss")
    assert code == 0, capsys.readouterr().err
    header = (out / "include/tiny.h").read_text()
    for api in ("tiny_init(void)", "tiny_init_with_arena(", "tiny_invoke(void)", "TINY_ARENA"):
        assert api in header
    assert "tiny_invoke_profiled(" in header and "TINY_INPUT0_SCALE" in header
    sources = sorted(p.name for p in (out / "src").glob("*.c"))
    assert "tiny_k_conv_2d_stem_s8.c" in sources and not any("protocol" in s for s in sources)
    assert all("main(" not in (out / "src" / s).read_text() for s in sources)
    assert 'section(".dtcm_bss")' in (out / "src/tiny_arena.c").read_text()
    assert not list(tmp_path.glob(".lib.*")), "staging directory left behind"


def test_packages_parse_as_their_tools_document(tmp_path: Path) -> None:
    formats = ("cmake", "platformio", "zephyr", "arduino")
    for fmt in formats:
        assert main(["export", str(EXAMPLE), "-o", str(tmp_path / fmt), "--format", fmt]) == 0
    assert "add_library(tiny_cnn_int8 STATIC" in (tmp_path / "cmake/CMakeLists.txt").read_text()
    pio = json.loads((tmp_path / "platformio/library.json").read_text())
    assert pio["name"] == "tiny_cnn_int8" and pio["build"]["srcDir"] == "src"
    module = yaml.safe_load((tmp_path / "zephyr/zephyr/module.yml").read_text())
    assert module["build"] == {"cmake": "zephyr", "kconfig": "zephyr/Kconfig"}
    assert "config TINY_CNN_INT8" in (tmp_path / "zephyr/zephyr/Kconfig").read_text()
    lines = (tmp_path / "arduino/library.properties").read_text().splitlines()
    props = dict(ln.split("=", 1) for ln in lines if ln and not ln.startswith("#"))
    assert ARDUINO_KEYS <= props.keys() and props["includes"] == "tiny_cnn_int8.h"
    assert (tmp_path / "arduino/src/tiny_cnn_int8.h").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--format", "keil"], "unknown format 'keil'"),
        (["--name", "9lives"], "bad library name '9lives'"),
        (["--name", "mcu"], "bad library name 'mcu'"),
        (["--cpu", "z80"], "unknown --cpu 'z80'"),
        (["--cpu", "cortex-m7", "--board", "nucleo-f767"], "--cpu and --board conflict"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys, args: list[str], message: str
) -> None:
    code, out = export(tmp_path, *args)
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and not out.exists() and list(tmp_path.iterdir()) == []


def test_a_non_empty_output_directory_is_left_alone(tmp_path: Path, capsys) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "mine.c").write_text("int x;\n")
    code, out = export(tmp_path)
    err = capsys.readouterr().err
    assert (
        code == 2
        and "holds files mcugen did not write: mine.c" in err
        and len(err.strip().splitlines()) == 1
    )
    assert sorted(p.name for p in out.iterdir()) == ["mine.c"]


def test_board_verdict_and_a_library_that_does_not_fit(tmp_path: Path, capsys) -> None:
    """`--board`: the library's arena and weights against the board's RAM (less its stack) and
    flash, printed when they fit; exit 3, one error line and nothing written when not."""
    code, out = export(tmp_path, "--board", "nucleo-f767")
    text = capsys.readouterr().out
    assert code == 0 and "fits nucleo-f767: RAM 4,704 of 516,096 bytes (arena 4,704;" in text
    big = tmp_path / "big.tflite"
    big.write_bytes(write_model(mobilenet_stem(0, hw=128, width=8)))
    lib = tmp_path / "big_lib"
    code = main(["export", str(big), "-o", str(lib), "--board", "netduinoplus2", *NO_PATCH])
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert code == 3 and len(err) == 1 and "does not fit netduinoplus2" in err[0], err
    assert "does NOT fit netduinoplus2: RAM" in captured.out and "over by" in captured.out
    assert not lib.exists() and not list(tmp_path.glob(".big_lib*"))
    assert main(["export", str(big), "-o", str(lib), "--cpu", "cortex-m4"]) == 0  # no board
    capsys.readouterr()
    # planned for the board, as `plan --board` plans it: a patch stage makes it fit
    assert (
        main(["export", str(big), "-o", str(tmp_path / "patched"), "--board", "netduinoplus2"]) == 0
    )
    assert "fits netduinoplus2" in capsys.readouterr().out


#: no patch stage (by default one is planned when the model would not fit the --board otherwise)
NO_PATCH = ("--patch-overhead", "0")


def test_the_library_arena_is_the_plans(tmp_path: Path, capsys) -> None:
    """`export` prints the arena `plan` gives for the same model and options (neither keeps the
    input for a runner, as the firmware `build` makes does: its arena differs by that)."""
    for options in ((), ("--kernels", "reference"), ("--order", "stored")):
        assert main(["plan", str(EXAMPLE), "--json", "--no-strategies", *options]) == 0
        plan = json.loads(capsys.readouterr().out)
        arena = (plan.get("paging") or {}).get("fast_bytes", plan["arena_bytes"])
        code, out = export(tmp_path / "-".join(options or ("default",)), *options)
        assert code == 0 and f"arena:    {arena} bytes" in capsys.readouterr().out


def test_the_library_is_planned_for_the_boards_memories(tmp_path: Path, capsys) -> None:
    """`export --board` plans against the board as `plan --board` does: `--ram-budget` pages to
    disco-f746ng's SDRAM (it was refused: export planned for no board, so with no external RAM),
    with the arena `plan --keep-input no --pools single` gives; `--keep-input yes` keeps the
    input's bytes in the arena."""
    on = ("--board", "disco-f746ng", "--ram-budget", "4000")
    # exit 3: disco-f746ng's own port does not set up its SDRAM yet (the library's user does)
    assert (
        main(["plan", str(EXAMPLE), *on, "--keep-input", "no", "--pools", "single", "--json"]) == 3
    )
    paging = json.loads(capsys.readouterr().out)["paging"]
    code, _ = export(tmp_path / "paged", *on)
    out = capsys.readouterr().out
    assert code == 0 and paging["fast_bytes"] <= 4000 and paging["slow_bytes"] > 0
    assert f"arena:    {paging['fast_bytes']} bytes" in out
    assert f"slow:     {paging['slow_bytes']} bytes" in out
    arenas = []
    for keep in ("no", "yes"):
        code, _ = export(tmp_path / keep, "--board", "nucleo-f767", "--keep-input", keep)
        found = capsys.readouterr().out
        assert code == 0
        arenas.append(int(found.split("arena:")[1].split()[0]))
    assert arenas[1] > arenas[0]
