"""Prompt templates, kept as package data and rendered with undefined variables as errors."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


@cache
def _env() -> Environment:
    return Environment(
        loader=FileSystemLoader(PROMPTS_DIR),
        undefined=StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


def render(name: str, **values: Any) -> str:
    return _env().get_template(f"{name}.j2").render(**values).strip()
