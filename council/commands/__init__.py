"""The questions a person or a client asks of council (status, list, report, cancel, ask,
adopt, doctor, start, resume), one module each: a function that returns one typed answer.
The command line (cli.py), the MCP tools (hosts/mcptools.py) and the hosts' hooks
(hosts/flow.py) only render these answers, so a figure (a percent, a phase word) is computed
once, and an answer's JSON is the same on every surface: `data(answer)`, whose JSON Schema
(the MCP tools' outputSchema) is `json_schema(type(answer))`.

A field marked TEXT is what a rendering draws from (a table's rows, the run's state) and is
left out of the data and the schema."""

from __future__ import annotations

from dataclasses import asdict, fields, is_dataclass
from typing import Any, get_args, get_origin, get_type_hints

TEXT = {"text": True}  # field metadata: for the text, not the data


def data(answer: Any) -> dict[str, Any]:
    """An answer as data (JSON's types), without its TEXT fields."""
    return {f.name: _plain(getattr(answer, f.name)) for f in fields(answer)
            if not f.metadata.get("text")}


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def json_schema(kind: Any) -> dict[str, Any]:
    """The JSON Schema of an answer's type: a dataclass is an object that has every field
    (but its TEXT ones), `X | None` may be null, `list[X]` is an array of X, a `dict` an
    object, `Any` anything."""
    if is_dataclass(kind):
        hints = get_type_hints(kind)
        properties = {f.name: json_schema(hints[f.name]) for f in fields(kind)
                      if not f.metadata.get("text")}
        return {"type": "object", "properties": properties, "required": list(properties)}
    if kind is Any:
        return {}
    if get_origin(kind) is list:
        return {"type": "array", "items": json_schema(get_args(kind)[0])}
    if kind is dict or get_origin(kind) is dict:
        return {"type": "object"}
    inner = [arg for arg in get_args(kind) if arg is not type(None)]
    if len(inner) == 1:  # X | None
        schema = json_schema(inner[0])
        return {**schema, "type": [schema["type"], "null"]}
    return {"type": _JSON_TYPES[kind]}
