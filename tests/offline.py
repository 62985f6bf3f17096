"""`python -m tests.offline ARGS…` runs the `retrac` command with network sockets made impossible:
any attempt to open an internet socket raises. The slow tier runs ingest, ask and resume this way."""

from __future__ import annotations

import socket

BLOCKED = (socket.AF_INET, socket.AF_INET6)


class NoNetworkSocket(socket.socket):
    def __init__(self, family: int = -1, type: int = -1, proto: int = -1, fileno: int | None = None) -> None:
        if fileno is None and (family == -1 or family in BLOCKED):
            raise OSError(
                f"network access attempted (socket family {family}): retrac-local must work offline"
            )
        super().__init__(family, type, proto, fileno)


def block() -> None:
    socket.socket = NoNetworkSocket  # type: ignore[misc]
    socket.create_connection = lambda *a, **k: NoNetworkSocket()  # type: ignore[assignment]


if __name__ == "__main__":
    block()
    from retrac_local.cli.main import cli

    cli()
