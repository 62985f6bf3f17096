"""`retrac config init` and `retrac config show`: every setting with its description and default, as
a commented TOML file; the effective value of each, and where it came from."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from retrac_local.config import Settings, config_file_path, read_config_file

ENV_PREFIX = "RETRAC_"
DERIVED = {"home"}  # set by RETRAC_HOME, not written into the file that lives inside it


def _toml_value(value: Any) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, Path):
        value = str(value)
    return json.dumps(value, ensure_ascii=False)


def commented_toml(settings: Settings | None = None) -> str:
    """Every section and field with its description; values are the defaults, commented out, so
    that the file changes nothing until a line is uncommented."""
    defaults = settings or Settings()
    lines = [
        "# retrac-local configuration. Uncomment a line to change it; unset values use the default shown.",
        "# Environment variables override this file: RETRAC_SECTION__KEY=value (e.g. RETRAC_BUDGET__MAX_ROUNDS=6).",
        "",
    ]
    nested: list[tuple[str, BaseModel, str]] = []
    for name, field in Settings.model_fields.items():
        value = getattr(defaults, name)
        if name in DERIVED:
            continue
        if isinstance(value, BaseModel):
            nested.append((name, value, field.description or ""))
            continue
        lines += [
            f"# {field.description}" if field.description else "",
            f"# {name} = {_toml_value(value)}",
            "",
        ]
    for name, section, description in nested:
        lines.append(f"[{name}]" + (f"  # {description}" if description else ""))
        for key, field in type(section).model_fields.items():
            if field.description:
                lines.append(f"# {field.description}")
            value = getattr(section, key)
            if value is None:
                lines.append(f"# {key} =   (unset by default; give a value to set it)")
            else:
                lines.append(f"# {key} = {_toml_value(value)}")
        lines.append("")
    return "\n".join(line for line in lines).rstrip() + "\n"


def _get(data: dict[str, Any], path: list[str]) -> tuple[bool, Any]:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return False, None
        data = data[part]
    return True, data


def effective(settings: Settings) -> list[dict[str, Any]]:
    """One row per setting: name, value, and source (file, environment variable, or default)."""
    path = config_file_path(settings.home)
    file_values = read_config_file(path)
    rows = []
    dumped = settings.model_dump(mode="json")
    for name, value in dumped.items():
        items = value.items() if isinstance(value, dict) else [(None, value)]
        for key, leaf in items:
            parts = [name] if key is None else [name, key]
            env = ENV_PREFIX + "__".join(p.upper() for p in parts)
            in_file, _ = _get(file_values, parts)
            if env in os.environ:
                source = f"environment {env}"
            elif name == "home" and "RETRAC_HOME" in os.environ:
                source = "environment RETRAC_HOME"
            elif in_file:
                source = f"file {path}"
            else:
                source = "default"
            rows.append({"name": ".".join(parts), "value": leaf, "source": source})
    return rows


def settings_rows(settings: Settings) -> list[dict[str, Any]]:
    """`effective`, with every secret masked (a URL's password, a secret-named storage option):
    what may be shown on a screen."""
    from retrac_local.config import masked

    return [r | {"value": masked(r["value"])} for r in effective(settings)]
