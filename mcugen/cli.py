"""mcugen: fit and run TensorFlow Lite models on microcontrollers.

Command line: sub-command NAME is mcugen.commands.NAME: its `arguments` (the parser), `HELP`,
`OUTPUTS` (what it writes) and `cmd_NAME` (the handler). Only the module of the sub-command that
runs is imported (the others' planners, solvers and plotting stay unloaded), except for
`mcugen --help`, which lists them all.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import NoReturn

from mcugen import __version__, progress
from mcugen.errors import McugenError

#: The sub-commands in the order `mcugen --help` lists them.
COMMANDS = (
    "plan", "build", "run", "verify", "optimize", "measure", "report", "flash", "export", "train",
    "quantize", "boards", "ops", "sweep",
)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:  # the sub-command's module is imported while the parser is built: Ctrl-C may land there
        args = _parser(argv).parse_args(argv)
        progress.configure(quiet=args.quiet)
        check_outputs(args)
        return int(command(args.command)(args))
    except McugenError as err:
        print(f"mcugen: error: {err.line()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("mcugen: interrupted; no partial output is left", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except Exception as exc:  # a bug: still one line unless asked for the traceback
        if os.environ.get("MCUGEN_DEBUG"):
            raise
        print(
            f"mcugen: internal error: {type(exc).__name__}: {exc}; this is a bug in mcugen, "
            "rerun with MCUGEN_DEBUG=1 for a traceback and report it",
            file=sys.stderr,
        )
        return 70


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, an output path mcugen may not write, or two outputs that name
    the same path (the command's `OUTPUTS`: attribute and "file" or "folder")."""
    from mcugen.outputs import check_output_dir, check_output_file

    seen: dict[Path, str] = {}
    for attr, kind in getattr(_module(args.command), "OUTPUTS", ()):
        path = getattr(args, attr, None)
        if not isinstance(path, Path):
            continue
        resolved = check_output_dir(path) if kind == "folder" else check_output_file(path)
        flag = "--" + attr.replace("_", "-")
        if resolved in seen:
            raise McugenError(f"{seen[resolved]} and {flag} name the same file", where=str(path))
        seen[resolved] = flag


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"mcugen.commands.{name}")


def command(name: str) -> Callable[[argparse.Namespace], int]:
    """The function that runs sub-command `name`: `mcugen.commands.<name>.cmd_<name>`."""
    run: Callable[[argparse.Namespace], int] = getattr(_module(name), f"cmd_{name}")
    return run


class _Parser(argparse.ArgumentParser):
    """argparse with mcugen's one error line: what is wrong and where to look, no usage block
    (sub-command parsers are made of the same class). An option the sub-command does not take
    is named with the commands that do."""

    #: the sub-command being parsed, set by `_parser` (unknown options are reported for it)
    command: str | None = None

    def error(self, message: str) -> NoReturn:
        prog = f"mcugen {self.command}" if self.command else self.prog
        line = McugenError(message, hint=f"`{prog} --help` lists the options").line()
        if self.command and message.startswith("unrecognized arguments:"):
            line = _misplaced(self.command, message.split(":", 1)[1].split()) or line
        self.exit(2, f"mcugen: error: {line}\n")


def _misplaced(command: str, words: list[str]) -> str:
    """One line for the first option of `words` that `command` does not take but other
    sub-commands do, naming them; "" when no sub-command takes it."""
    for word in words:
        option = word.split("=", 1)[0]
        if not option.startswith("--"):
            continue
        takers = [name for name in COMMANDS if option in _options_of(name)]
        if takers:
            which = ", ".join(f"`mcugen {name}`" for name in takers)
            return (
                f"`mcugen {command}` does not take {option}; {which} "
                f"{'does' if len(takers) == 1 else 'do'} (`mcugen {command} --help` lists the "
                "options)"
            )
    return ""


def _options_of(name: str) -> set[str]:
    each = _Parser(prog=f"mcugen {name}")
    _module(name).arguments(each)
    return set(each._option_string_actions)


def _parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser of `argv`'s sub-command (the first word that is not an option), or of them all
    when it names none of them (`mcugen --help`, a typo: argparse lists the choices)."""
    p: argparse.ArgumentParser = _Parser(prog="mcugen", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"mcugen {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    named = next((a for a in argv if not a.startswith("-")), None)
    if named in COMMANDS:
        p.command = named  # type: ignore[attr-defined]
    for name in (named,) if named in COMMANDS else COMMANDS:
        module = _module(name)
        each = sub.add_parser(name, help=module.HELP)
        module.arguments(each)
        each.add_argument(
            "-q", "--quiet", action="store_true", help="no progress line on the terminal"
        )
    return p


if __name__ == "__main__":
    sys.exit(main())
