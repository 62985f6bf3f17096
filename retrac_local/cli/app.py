"""What every `retrac` command shares: the error boundary and the app built from the settings."""

from __future__ import annotations

from typing import Any

import click

from retrac_local.errors import RetracError


class Group(click.Group):
    """Turns RetracError into a one-line message at the boundary, and nowhere else (a URL's password
    masked, whichever layer wrote the message)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RetracError as e:
            from retrac_local.config import mask_credentials

            raise click.ClickException(mask_credentials(str(e))) from e


def make_app(overrides: dict[str, Any] | None = None) -> Any:
    from retrac_local.api import Retrac
    from retrac_local.config import load_settings

    return Retrac(load_settings(**(overrides or {})))
