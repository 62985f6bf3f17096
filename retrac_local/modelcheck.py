"""The configured model of each role, as `retrac models` and the settings page show it: file or
server, size, context, and (when asked) whether it loads."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from retrac_local.config import mask_credentials
from retrac_local.errors import RetracError

if TYPE_CHECKING:
    from retrac_local.api import Retrac


def model_rows(app: Retrac, check: bool = False) -> list[dict[str, Any]]:
    s = app.settings
    rows = []
    for role in ("planner", "compressor"):
        role_settings = getattr(s, role)
        if role_settings.url:
            row: dict[str, Any] = {
                "role": role,
                "server": mask_credentials(role_settings.url),
                "model": role_settings.server_model,
                "n_ctx": role_settings.n_ctx,
            }
        else:
            path = s.model_path(role)  # type: ignore[arg-type]
            row = {
                "role": role,
                "path": str(path),
                "present": path.exists(),
                "size": path.stat().st_size if path.exists() else None,
                "n_ctx": role_settings.n_ctx,
                "n_gpu_layers": role_settings.n_gpu_layers,
            }
        if check:
            try:
                app.make_llm(role)  # type: ignore[arg-type]
                row["loads"], row["error"] = True, None
            except RetracError as e:
                row["loads"], row["error"] = False, str(e)
        rows.append(row)
    return rows
