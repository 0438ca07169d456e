"""Renders the prompt templates shipped inside the package (council/prompts/*.j2).

The topic and the other agents' reports are only ever template *data*: Jinja never evaluates
a variable's content, and StrictUndefined turns a missing variable into an error."""

from __future__ import annotations

from typing import Any

import jinja2

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("council", "prompts"),
    undefined=jinja2.StrictUndefined,
    autoescape=False,  # noqa: S701 - markdown for a model, not HTML
    keep_trailing_newline=True,
)


def render(name: str, **data: Any) -> str:
    return _ENV.get_template(f"{name}.md.j2").render(**data)
