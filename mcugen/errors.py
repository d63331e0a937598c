"""User-facing errors: one clear line that says what, where and what to do."""

from __future__ import annotations

import re


class McugenError(Exception):
    """An error caused by the user's input or environment, not a bug in mcugen.

    The CLI prints `str(err)` on one line and exits with `exit_code`; no traceback.
    """

    exit_code = 2
    #: A quoted part longer than the first limit is cut to it; while the line is still longer
    #: than `LINE_BUDGET`, to the next (a message can quote a name, a shape and a size at once).
    QUOTE_LIMITS = (200, 100, 50)
    LINE_BUDGET = 400
    _BRACKETS = {")": "(", "]": "[", "}": "{"}

    def __init__(self, what: str, *, where: str = "", hint: str = "") -> None:
        self.what = what
        self.where = where
        self.hint = hint
        super().__init__(self.line())

    def line(self) -> str:
        """`where: what; hint` as one short printable line. Names, shapes and sizes read from a
        model file may hold anything (a fuzzed shape of 2,000 dimensions, a name of 16 KB), so:
        - a prefix said twice in a row ("operator 3 (ADD): operator 3 (ADD): ...") is said once;
        - a run of U+FFFD (bytes that were not UTF-8) becomes one U+FFFD and its length
          (U+FFFD×812), and characters that are not printable are escaped (\\xNN, \\uNNNN);
        - each quoted part (a word with the brackets it opens and closes, or words joined by ", "
          as a list is) longer than 200 characters keeps its first 200 (up to a list item's end),
          an ellipsis, the count of characters left out and its closing bracket; if the line is
          still over `LINE_BUDGET`, the next of `QUOTE_LIMITS` applies instead.
        O(length of the text)."""
        head = self.where + ": " + self.what if self.where else self.what
        text = self._printable(self._said_once(head))
        if self.hint:
            text += "; " + self._printable(self.hint)
        shown = text
        for limit in self.QUOTE_LIMITS:
            shown = self._cap_quotes(text, limit)
            if len(shown) <= self.LINE_BUDGET:
                break
        return shown

    @staticmethod
    def _said_once(text: str) -> str:
        """`text` without a ": "-separated segment that repeats the one before it."""
        kept: list[str] = []
        for segment in text.split(": "):
            if not kept or segment != kept[-1]:
                kept.append(segment)
        return ": ".join(kept)

    @staticmethod
    def _printable(text: str) -> str:
        def escaped(ch: str) -> str:
            code = ord(ch)
            if ch.isprintable():
                return ch
            if code < 0x100:
                return f"\\x{code:02x}"
            return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

        text = re.sub("\ufffd{2,}", lambda m: f"\ufffd×{len(m.group())}", text)
        return "".join(escaped(ch) for ch in text)

    @classmethod
    def _cap_quotes(cls, text: str, limit: int) -> str:
        """`text` with every quoted part longer than `limit` cut (see `line`)."""
        pairs = cls._bracket_pairs(text)
        out: list[str] = []
        start = 0
        while start < len(text):
            if text[start] == " ":
                out.append(" ")
                start += 1
                continue
            end = start
            while end < len(text) and text[end] != " ":
                end = pairs.get(end, end) + 1
                listed = text[end : end + 1] == " " and text[end + 1 : end + 2] not in ("", " ")
                if text[end - 1] == "," and listed:
                    end += 1  # ", " and a word: the list goes on
            out.append(cls._cut(text[start:end], limit))
            start = end
        return "".join(out)

    @classmethod
    def _bracket_pairs(cls, text: str) -> dict[int, int]:
        """Opening bracket position -> its closing bracket's, for the brackets that match."""
        pairs: dict[int, int] = {}
        opened: list[int] = []
        for i, ch in enumerate(text):
            if ch in "([{":
                opened.append(i)
            elif ch in cls._BRACKETS:
                if opened and text[opened[-1]] == cls._BRACKETS[ch]:
                    pairs[opened.pop()] = i
                else:
                    opened.clear()  # a stray closer: nothing before it matches past it
        return pairs

    @staticmethod
    def _cut(part: str, limit: int) -> str:
        """`part`, or its first `limit` characters (up to a list item's end), an ellipsis, the
        count of characters left out and the brackets and punctuation that end it."""
        if len(part) <= limit + 30:  # cutting less would not shorten it past the marker
            return part
        ending = len(part)
        while ending > len(part) - 4 and part[ending - 1] in ")]},;:.":
            ending -= 1
        keep = part[:limit]
        item_end = keep.rfind(", ")
        if item_end > limit // 2:
            keep = keep[: item_end + 2]
        escape = keep.rfind("\\", len(keep) - 9)  # never half of \xNN, \uNNNN or \UNNNNNNNN
        if escape >= 0 and escape + {"x": 4, "u": 6, "U": 10}.get(part[escape + 1], 0) > len(keep):
            keep = keep[:escape]
        left = ending - len(keep)
        return f"{keep}…[{left:,} more characters]{part[ending:]}"


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
