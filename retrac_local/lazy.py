"""Lazy imports of heavy optional libraries, with a message that says how to get them."""

from __future__ import annotations

import importlib
from types import ModuleType

from retrac_local.errors import DependencyError


def require(module: str, *, purpose: str) -> ModuleType:
    """Import `module` on first use; a missing library becomes an actionable DependencyError."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise DependencyError(
            f"{module} is needed for {purpose} but cannot be imported ({e}). Run `make setup`."
        ) from e
