"""`retrac serve`: the local web page (retrac_local/web)."""

from __future__ import annotations

import socket

import click


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="address to listen on (a loopback address unless the page must be reached from elsewhere)",
)
@click.option("--port", type=click.IntRange(1, 65535), default=8750, show_default=True)
@click.option(
    "--token",
    envvar="RETRAC_SERVE_TOKEN",
    default=None,
    help="secret every request must carry (better: RETRAC_SERVE_TOKEN, which keeps it out of the process "
    "list); without one, a new one is made and printed. Loopback is no boundary between the accounts of "
    "one machine, so there is always one",
)
def serve(host: str, port: int, token: str | None) -> None:
    """Open the page in a browser: ask, watch the run, read its report, manage the collection."""
    from retrac_local.config import load_settings
    from retrac_local.lazy import require
    from retrac_local.web.security import serve_token

    uvicorn = require("uvicorn", purpose="retrac serve")
    from retrac_local.web.app import create_app

    _check_free(host, port)
    try:
        token = serve_token(token)
    except ValueError as e:
        raise click.ClickException(f"--token / RETRAC_SERVE_TOKEN: {e}") from e
    shown = f"[{host}]" if ":" in host else host
    if host in ("0.0.0.0", "::"):
        shown = "127.0.0.1"
    url = f"http://{shown}:{port}/?token={token}"
    app = create_app(load_settings(), host=host, token=token, port=port)
    click.echo(f"retrac-local is at {url}  (Ctrl-C stops it; runs in progress stay resumable)")
    click.echo("Open that address once: it sets a cookie. Programs send 'Authorization: Bearer TOKEN'.")
    from retrac_local.web.protocol import with_header_deadline

    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=3,
        http=with_header_deadline(),  # a client stopped mid-headers is let go
    )


def _check_free(host: str, port: int) -> None:
    """A clear message for a port in use or an address this machine does not have."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            raise click.ClickException(
                f"cannot listen on {host}:{port}: {e.strerror}; choose another --port or --host"
            ) from e
