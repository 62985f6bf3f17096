"""The server backend sends private text to one address only: no redirect followed, no proxy from
the environment, http(s) only, and no password printed. Tiny HTTP servers on loopback stand in for
a model server, another origin and a proxy."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from click.testing import CliRunner

from retrac_local.cli.main import cli
from retrac_local.config import ModelSettings, SamplingSettings, load_settings, mask_credentials
from retrac_local.errors import ConfigError, ModelError
from retrac_local.llm.server import ServerLLM

COMPLETION = {
    "choices": [{"message": {"content": "hello"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1},
}


class Recorder:
    """A loopback HTTP server that records each request and answers with `reply(path)`."""

    def __init__(self, reply: Any) -> None:
        self.requests: list[dict[str, Any]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                recorder.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": self.rfile.read(length).decode() if length else "",
                    }
                )
                status, headers, body = reply(self.path)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def servers() -> Iterator[list[Recorder]]:
    made: list[Recorder] = []
    yield made
    for s in made:
        s.close()


def _json(body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


def _llm(url: str, **extra: Any) -> ServerLLM:
    return ServerLLM(ModelSettings(url=url, **extra), SamplingSettings())


def test_a_redirect_to_another_origin_is_an_error_and_nothing_reaches_it(
    servers: list[Recorder], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = Recorder(lambda path: _json(COMPLETION))
    server = Recorder(lambda path: (307, {"Location": elsewhere.url + path}, b""))
    servers += [elsewhere, server]
    monkeypatch.setenv("KEY", "sk-secret")
    with pytest.raises(ModelError, match="redirected \\(307\\) to .*redirects are not followed"):
        _llm(server.url, api_key_env="KEY").generate([{"role": "user", "content": "private text"}])
    assert len(server.requests) == 1 and elsewhere.requests == []


def test_the_environment_proxy_is_ignored_and_a_configured_one_is_used(
    servers: list[Recorder], monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = Recorder(lambda path: _json(COMPLETION))
    server = Recorder(lambda path: _json(COMPLETION))
    servers += [proxy, server]
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, proxy.url)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    assert _llm(server.url).generate([{"role": "user", "content": "private text"}]).text == "hello"
    assert proxy.requests == [] and "private text" in server.requests[0]["body"]
    _llm(server.url, proxy=proxy.url).generate([{"role": "user", "content": "asked for"}])
    assert len(proxy.requests) == 1 and proxy.requests[0]["path"].startswith("http://127.0.0.1")


def test_a_password_in_the_url_is_sent_as_basic_auth_and_never_shown(servers: list[Recorder]) -> None:
    server = Recorder(lambda path: (500, {}, b"boom"))
    servers.append(server)
    url = server.url.replace("http://", "http://alice:hunter2@")
    llm = _llm(url)
    assert "hunter2" not in llm.name and "hunter2" not in llm.url
    with pytest.raises(ModelError) as failure:
        llm.generate([{"role": "user", "content": "x"}])
    assert "hunter2" not in str(failure.value)
    assert server.requests[0]["headers"]["Authorization"] == "Basic YWxpY2U6aHVudGVyMg=="  # alice:hunter2
    assert mask_credentials(f"see {url}/v1") == f"see {server.url.replace('http://', 'http://alice:***@')}/v1"


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.org/x", "http://", "gopher://h:70/"])
def test_only_http_addresses_are_accepted_when_the_settings_load(url: str) -> None:
    with pytest.raises(ConfigError, match="is not an http:// or https:// address"):
        load_settings(planner={"url": url})


def test_a_bad_url_and_a_failed_model_check_are_reported_and_exit_non_zero(
    servers: list[Recorder], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRAC_PLANNER__URL", "ftp://bob:hunter2@example.org/")
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code != 0 and "hunter2" not in result.output and "Traceback" not in result.output
    server = Recorder(lambda path: (404, {}, b"no"))  # reachable, but no /v1/models: the check fails
    servers.append(server)
    monkeypatch.setenv("RETRAC_PLANNER__URL", server.url.replace("http://", "http://bob:hunter2@"))
    result = CliRunner().invoke(cli, ["models", "--check"])
    assert result.exit_code == 1 and "loads: NO" in result.output and "hunter2" not in result.output
    assert "bob:***@" in result.output


def test_a_tokenize_reply_without_tokens_is_a_model_error(servers: list[Recorder]) -> None:
    server = Recorder(lambda path: _json({"tokenz": [1, 2]}) if "tokenize" in path else _json(COMPLETION))
    servers.append(server)
    with pytest.raises(ModelError, match="without a list of tokens"):
        _llm(server.url).count_tokens("some text")
