"""`mcugen export` on the command line: what it writes per format, its manifests parse against
what each tool documents, and bad input is one line, a non-zero exit and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mcugen.cli import main
from support import EXAMPLE

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
