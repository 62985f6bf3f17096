"""`retrac rules`: the catalogue of code rules, and which the settings switch off."""

from __future__ import annotations

import click

from retrac_local.cli.app import make_app


@click.command("rules")
@click.option("--json", "as_json", is_flag=True, help="a JSON list of {name, stage, description, enabled, …}")
def rules_cmd(as_json: bool) -> None:
    """The code rules of the answering layer: name, stage, the failure each prevents, and whether it is on
    (switch one off with rules.disabled in config.toml or RETRAC_RULES__DISABLED='["name"]')."""
    from retrac_local.cli.render import echo_json
    from retrac_local.rules.catalogue import RULES

    disabled = set(make_app().settings.rules.disabled)
    rows = [r.to_dict(enabled=r.name not in disabled) for r in RULES]
    if as_json:
        echo_json(rows)
        return
    width = max(len(r.name) for r in RULES)
    for r in RULES:
        state = "on " if r.name not in disabled else "OFF"
        click.echo(f"{state} {r.name:<{width}}  {r.description}")
    click.echo(
        f"\n{len(RULES) - len(disabled & {r.name for r in RULES})} of {len(RULES)} on; docs/RULES.md says more"
    )
