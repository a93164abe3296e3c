"""What reaches a terminal (docs/safety.md "Nothing hostile reaches a terminal"). Pure.

A string plan07 prints may come from a model, a request, evidence or a test's output, and may hold
control characters: an OSC 52 clipboard write (`ESC ] 52 ; c ; ... BEL`), a cursor move, a
carriage return over a line, a newline that forges a line of plan07's own (`O1 passed` under a
real `O1 FAILED`), a bidi override that reorders what is shown. Colour codes are the least of it.

- `printable(text)`: every C0 and C1 control character, DEL and the bidi controls escaped
  (`\\n`, `\\r`, `\\t`, `\\x1b`, `\\u202e`), so one field is one line of plain text; `keep="\\n"`
  keeps the line breaks of a block (a test's output), which the caller then indents.
- `display(obj)`: a copy of a model (or dict, list, tuple) with every string `printable`, for the
  human renderings of the CLI.
- `json_text(text)`: a JSON text with the characters json.dumps leaves raw under
  `ensure_ascii=False` (DEL, C1, bidi controls) written as `\\uXXXX` escapes: the same data.
- `scrub(text, tty=...)`: the last line of defence on the output stream itself (plan07.cli's
  streams): every control character but newline, tab and carriage return escaped; on a
  terminal, the CSI sequences rich itself writes (colours, cursor and erase) are kept.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

T = TypeVar("T")

_CONTROLS = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[{_CONTROLS}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# what rich (and typer's echo) write to a terminal: SGR colours, cursor moves, erase, show/hide
_STREAM_KEEP = re.compile(f"\x1b\\[[0-9;?]*[ABCDEFGHJKSTfmhl]|\r|[{_CONTROLS}]")


def _escape(c: str) -> str:
    o = ord(c)
    return _NAMED.get(c) or (f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")


def printable(text: str, *, keep: str = "") -> str:
    """`text` with every control character escaped, but those in `keep` (e.g. "\\n")."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)


def block(text: str, indent: str = "  ") -> str:
    """A multi-line block (a test's output) as lines of its own: every control character but
    the line break escaped, and every line indented, so none of it reads as plan07's."""
    lines = printable(text.replace("\r\n", "\n"), keep="\n").split("\n")
    return "\n".join(indent + line if line else line for line in lines)


def display(obj: T) -> T:
    """A copy of `obj` with every string in it `printable` (pydantic models, dicts, lists and
    tuples walked; a model rebuilt without validation, so an escaped string may exceed a cap)."""
    return _display(obj)  # type: ignore[no-any-return]


def _display(obj: Any) -> Any:
    if isinstance(obj, str):
        return printable(obj)
    if isinstance(obj, list):
        return [_display(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_display(v) for v in obj)
    if isinstance(obj, dict):
        return {_display(k): _display(v) for k, v in obj.items()}
    fields = getattr(type(obj), "model_fields", None)
    if isinstance(fields, dict):
        return type(obj).model_construct(**{n: _display(getattr(obj, n)) for n in fields})
    return obj


def json_text(text: str) -> str:
    """A JSON text with DEL, C1 and the bidi controls as `\\uXXXX` (json.dumps escapes C0)."""
    if not _RAW_IN_JSON.search(text):
        return text
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def scrub(text: str, *, tty: bool) -> str:
    """What the output stream lets through: newline, tab and carriage return (the progress
    line's); on a terminal also the CSI sequences rich writes (colours, cursor, erase); every
    other control character as `\\uXXXX` (valid inside a JSON string too). Strings of a model's
    or a test's never get here raw (`printable`): this is the last line of defence."""
    if not _CONTROL.search(text):
        return text

    def one(m: re.Match[str]) -> str:
        s = m.group()
        if s in "\n\t\r" or (tty and len(s) > 1):
            return s
        return "".join(f"\\u{ord(c):04x}" if _CONTROL.match(c) else c for c in s)

    return _STREAM_KEEP.sub(one, text)
