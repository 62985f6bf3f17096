"""What guards the page's door, as one ASGI middleware, applied to every request in this order:

1. **Host.** A request must name this server (a loopback name, or the address it was bound to):
   a web page that points its own domain at 127.0.0.1 (DNS rebinding) is refused.
2. **Token** (`retrac serve` always sets one, on loopback too: other accounts of the machine reach
   127.0.0.1 as well). `Authorization: Bearer T`, or the cookie that opening the printed URL
   (`/?token=T`) once sets — named for the port, so that another server on this host never gets
   it; anything else gets 401. Without a token (a program embedding the app) the Host check holds
   even on a wildcard address.
3. **Cross-site requests.** A request that changes something (any method but GET and HEAD) from a
   browser must come from this origin and carry the page's CSRF token in `X-Retrac-CSRF`; a
   program that sends the bearer token is exempt, having proved it holds the secret.
4. **Headers.** A strict Content-Security-Policy (scripts, styles and connections only from this
   server, no frames), no MIME sniffing, no referrer, no caching of API answers.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "retrac_token"  # + "_PORT": one cookie per server of this host
CSRF_HEADER = "x-retrac-csrf"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SAFE_METHODS = {"GET", "HEAD"}
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    return host.strip("[]") in ("0.0.0.0", "::", "")


def _host_name(value: str) -> str:
    """The name in a Host header, without its port: `[::1]:8750` → `::1`."""
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Guard:
    def __init__(self, app: App, *, bound_host: str, token: str | None, csrf: str, port: int = 8750) -> None:
        self.app = app
        self.token = token
        self.csrf = csrf
        self.cookie = f"{COOKIE}_{port}"
        # Any Host only behind a token: a rebinding page cannot read a secret it was never given.
        self.any_host = is_wildcard(bound_host) and bool(token)
        self.hosts = LOOPBACK_NAMES | {bound_host.strip("[]").lower()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await _plain(send, *refusal)
            return
        if self.token and self._token_in_query(scope):
            await self._set_cookie(scope, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                ]
                if scope["path"].startswith("/api/"):
                    extra.append((b"cache-control", b"no-store"))
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    h for h in extra if h[0] not in names
                ]
            await send(message)

        await self.app(scope, receive, with_headers)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        host = _host_name(headers.get("host", "")).lower()
        if not host or (not self.any_host and host not in self.hosts):
            return 400, f"this server does not answer to the host {host!r}; open it by the address it printed"
        bearer = self._bearer(headers)
        if self.token and not (bearer or self._cookie_ok(headers) or self._token_in_query(scope)):
            return (
                401,
                "a token is needed: open the URL the server printed, or send 'Authorization: Bearer TOKEN'",
            )
        if scope["method"] not in SAFE_METHODS and not bearer:
            origin = headers.get("origin")
            if origin is not None and origin.split("://", 1)[-1].lower() != headers.get("host", "").lower():
                return 403, "a request from another site was refused"
            if headers.get("sec-fetch-site") in ("cross-site", "same-site"):
                return 403, "a request from another site was refused"
            if not _same(headers.get(CSRF_HEADER, ""), self.csrf):
                return 403, "the page's CSRF token is missing or stale; reload the page and try again"
        return None

    def _bearer(self, headers: dict[str, str]) -> bool:
        value = headers.get("authorization", "")
        return bool(self.token) and value.startswith("Bearer ") and _same(value[7:], self.token or "")

    def _cookie_ok(self, headers: dict[str, str]) -> bool:
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header is no token
            return False
        morsel = cookie.get(self.cookie)
        return morsel is not None and _same(morsel.value, self.token or "")

    def _token_in_query(self, scope: Scope) -> bool:
        given = parse_qs(scope.get("query_string", b"").decode()).get("token", [""])[0]
        return scope["method"] == "GET" and bool(given) and _same(given, self.token or "")

    async def _set_cookie(self, scope: Scope, send: Send) -> None:
        """`/?token=T` (checked already): set the cookie and send the browser on without the token
        in its address bar and history."""
        query = {k: v for k, v in parse_qs(scope.get("query_string", b"").decode()).items() if k != "token"}
        location = scope["path"] + (f"?{urlencode(query, doseq=True)}" if query else "")
        cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode()),
                    (b"set-cookie", cookie.encode()),
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})


def _same(given: str, secret: str) -> bool:
    """A constant-time comparison that takes any text a client sends (a header decoded as Latin-1,
    a query string with any character): a non-ASCII value is simply not the secret."""
    return hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), secret.encode("utf-8", "surrogatepass")
    )


def serve_token(given: str | None) -> str:
    """The token `retrac serve` guards the page with: the one given, or a new one. A blank one is
    refused: it would guard nothing."""
    if given is None:
        return new_secret()
    if not given.strip() or given != given.strip():
        raise ValueError("a blank token, or one with spaces around it, guards nothing; give another or none")
    return given


async def _plain(send: Send, status: int, reason: str) -> None:
    body = json.dumps({"error": reason}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"content-security-policy", CSP.encode()),
                (b"x-content-type-options", b"nosniff"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def new_secret() -> str:
    return secrets.token_urlsafe(24)
