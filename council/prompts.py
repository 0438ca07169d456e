"""Renders the prompt templates shipped inside the package (council/prompts/*.j2).

The topic and the other agents' reports are only ever template *data*: Jinja never evaluates
a variable's content, and StrictUndefined turns a missing variable into an error."""

from __future__ import annotations

import functools
import hashlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2


@functools.cache
def _env() -> jinja2.Environment:
    """Made on the first render: a command that renders no prompt (status, list, a hook)
    does not load Jinja."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("council", "prompts"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701 - markdown for a model, not HTML
        keep_trailing_newline=True,
    )


def render(name: str, **data: Any) -> str:
    return _env().get_template(f"{name}.md.j2").render(**data)


def fence(data: str | bytes) -> str:
    """The code that ends a block of untrusted data in a prompt (earlier findings, stored
    pages, a report, the integrity failures): 16 hex digits of the data's own sha256, so no
    piece of the data can write the block's end line, and the same data fences the same way."""
    blob = data.encode("utf-8", "replace") if isinstance(data, str) else data
    return hashlib.sha256(blob).hexdigest()[:16]
