"""User-facing errors: one clear line that says what, where and what to do."""

from __future__ import annotations


class McugenError(Exception):
    """An error caused by the user's input or environment, not a bug in mcugen.

    The CLI prints `str(err)` on one line and exits with `exit_code`; no traceback.
    """

    exit_code = 2

    def __init__(self, what: str, *, where: str = "", hint: str = "") -> None:
        self.what = what
        self.where = where
        self.hint = hint
        super().__init__(self.line())

    def line(self) -> str:
        """One printable line: names read from a model file may hold any character."""
        parts = [f"{self.where}: {self.what}" if self.where else self.what]
        if self.hint:
            parts.append(self.hint)
        return "".join(ch if ch.isprintable() else " " for ch in "; ".join(parts))


class ModelError(McugenError):
    """The .tflite file is malformed, truncated or uses something mcugen cannot run."""


class UnsupportedError(McugenError):
    """The model is valid but uses an operator or type the runtime lacks."""


class BuildError(McugenError):
    """Compiling or linking the generated firmware failed."""

    exit_code = 3


class DoesNotFit(BuildError):
    """The model's plan needs more RAM or flash than the board has (found before compiling)."""


class RunError(McugenError):
    """Running the firmware (host, emulator or board) failed."""

    exit_code = 4


class OutputError(McugenError):
    """An output path mcugen may not or cannot write: a user's files are there, it is the working
    folder or a parent of it, or the file system refuses (mcugen/outputs.py). Checked before any
    work; exit 2, as for any other bad argument."""
