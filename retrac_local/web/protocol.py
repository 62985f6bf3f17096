"""uvicorn's HTTP/1.1 protocol with a deadline for a request's headers: uvicorn waits for ever for
a client that opens a connection and stops half-way through its headers (it kept one 90 s), and a
few such clients hold every connection the page can take. Whatever has not sent a whole request
head within `seconds` of connecting (or of its last response) is closed."""

from __future__ import annotations

from typing import Any

HEADER_TIMEOUT_S = 10.0


def with_header_deadline(seconds: float = HEADER_TIMEOUT_S) -> type:
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadline(H11Protocol):  # type: ignore[misc]
        _deadline: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            if before is None or before.response_complete:
                self._arm()  # a new request head is due
            super().data_received(data)
            if self.cycle is not before:  # its head arrived whole
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self.cycle is None or self.cycle.response_complete:
                self.transport.close()

    return HeaderDeadline
