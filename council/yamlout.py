"""A fast YAML writer for council's own plain data (mappings, lists, strings, numbers, booleans,
None). PyYAML's representer took ~90% of a twelve-agent supervisor's CPU, on the critical path
between phases; this writes the same data in block style, with every string double-quoted and
escaped, so that `yaml.safe_load` reads back exactly what was written (tested round-trip)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

# Line breaks YAML folds inside quoted scalars, and the byte-order mark: always escaped.
_ESCAPE_ALWAYS = {"\x85", "\u2028", "\u2029", "\ufeff"}


def dump(data: Mapping[str, Any]) -> str:
    lines: list[str] = []
    _mapping(data, 0, lines)
    return "\n".join(lines) + "\n"


_SCALAR, _MAP, _SEQ = 0, 1, 2


def _kind(value: Any) -> int:
    """What a value is written as. Plain types are checked by identity first: the ABC checks
    (isinstance against Mapping, Sequence) were most of a large state's writing time."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return _SCALAR
    if kind is dict:
        return _MAP
    if kind is list or kind is tuple:
        return _SEQ
    if isinstance(value, Mapping):
        return _MAP
    if isinstance(value, Sequence) and not isinstance(value, str):
        return _SEQ
    return _SCALAR


def _mapping(data: Mapping[str, Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    if not data:
        lines.append(f"{pad}{{}}")
        return
    for key, value in data.items():
        head = f"{pad}{_key(str(key))}:"
        kind = _kind(value)
        if kind == _MAP and value:
            lines.append(head)
            _mapping(value, indent + 2, lines)
        elif kind == _SEQ and value:
            lines.append(head)
            _sequence(value, indent + 2, lines)
        else:
            lines.append(f"{head} {_scalar(value)}")


def _sequence(data: Sequence[Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for value in data:
        kind = _kind(value)
        if kind == _MAP and value:
            inner: list[str] = []
            _mapping(value, indent + 2, inner)
            lines.append(f"{pad}- {inner[0].lstrip()}")
            lines.extend(inner[1:])
        elif kind == _SEQ and value:
            if all(_kind(v) == _SCALAR for v in value):
                lines.append(f"{pad}- [{', '.join(_scalar(v) for v in value)}]")
            else:
                lines.append(f"{pad}-")
                _sequence(value, indent + 2, lines)
        else:
            lines.append(f"{pad}- {_scalar(value)}")


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


@functools.lru_cache(maxsize=4096)
def _key(key: str) -> str:
    """Identifiers (field, phase and seat names) plain, anything else quoted."""
    if _PLAIN_KEY.match(key) and key.lower() not in _RESERVED:
        return key
    return _string(key)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if "e" in text and "." not in text:  # YAML 1.1 needs a dot in an exponent float
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    if isinstance(value, str):
        return _string(value)
    kind = _kind(value)
    if kind == _MAP:
        return "{}"
    if kind == _SEQ:
        return "[]"
    raise TypeError(f"cannot write {type(value).__name__} to state.yaml")


_NEEDS_ESCAPE = re.compile(r'[^\x20-\x7e]|["\\]')


def _string(text: str) -> str:
    if _NEEDS_ESCAPE.search(text) is None:  # printable ASCII without quotes: as it is
        return '"' + text + '"'  # not an f-string: a str subclass may format itself
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch.isprintable() and ch not in _ESCAPE_ALWAYS:
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else
                       f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    out.append('"')
    return "".join(out)
