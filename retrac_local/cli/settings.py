"""`retrac models` and `retrac config …`: what is configured, where it comes from, whether it loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from retrac_local.cli.app import Group, make_app


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--check", is_flag=True, help="load each model (or reach each server) and report whether it works"
)
def models(as_json: bool, check: bool) -> None:
    """The configured model of each role: file or server, size, context, and (with --check) whether it loads."""
    from retrac_local.cli.render import echo_json
    from retrac_local.modelcheck import model_rows

    rows = model_rows(make_app(), check)
    failed = [r["role"] for r in rows if r.get("loads") is False]
    if as_json:
        echo_json(rows)
    else:
        _print_models(rows)
    if failed:
        raise SystemExit(1)  # a script checking the models must see the failure


def _print_models(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        if "server" in r:
            where, state = f"{r['model']} at {r['server']}", "server"
        else:
            where = r["path"]
            state = f"{r['size'] / 1e6:.0f} MB" if r["present"] else "MISSING (run `make models`)"
        loads = "" if "loads" not in r else ("  loads: yes" if r["loads"] else f"  loads: NO — {r['error']}")
        click.echo(f"{r['role']:<11} {where}  {state}  n_ctx={r['n_ctx']}{loads}")


@click.group(cls=Group)
def config() -> None:
    """Write a commented config file, or show the effective settings and where each comes from."""


@config.command("init")
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="where to write it (default: $RETRAC_HOME/config.toml)",
)
@click.option("--force", is_flag=True, help="replace an existing file")
def config_init(output: Path | None, force: bool) -> None:
    """Write every setting with its description and default, commented out."""
    from retrac_local.config import config_file_path
    from retrac_local.config_doc import commented_toml

    path = output or config_file_path()
    if path.exists() and not force:
        raise click.ClickException(
            f"{path} exists; use --force to replace it, or --output to write elsewhere"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(commented_toml())
    click.echo(f"wrote {path}")


@config.command("show")
@click.option("--json", "as_json", is_flag=True)
def config_show(as_json: bool) -> None:
    """The effective value of every setting, and its source: file, environment, or default."""
    from retrac_local.cli.render import echo_json
    from retrac_local.config import load_settings
    from retrac_local.config_doc import settings_rows

    rows = settings_rows(load_settings())
    if as_json:
        echo_json(rows)
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        click.echo(f"{r['name']:<{width}}  {json.dumps(r['value'])}  ({r['source']})")
