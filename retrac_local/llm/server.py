"""An OpenAI-compatible chat server as the LLM backend (llama.cpp's server, vLLM, Ollama, …):
the path for models that outgrow one workstation. Structured output goes through the server's own
JSON-schema support; the reply is validated here like any other backend's.

Only the URL the configuration names is contacted: nothing is sent anywhere else. Redirects are
not followed (an error names where it pointed), the proxy variables of the environment are ignored
(a proxy is used only when the settings name one), and a password in the URL is sent as HTTP basic
authentication, never printed.
"""

from __future__ import annotations

import base64
import json
import os
import time
import urllib.error
import urllib.request
from typing import Any, NoReturn
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel

from retrac_local.config import ModelSettings, SamplingSettings, mask_credentials
from retrac_local.errors import ContextOverflowError, ModelError
from retrac_local.llm.base import Generation, Message, Usage, completed

CHARS_PER_TOKEN = 3.5  # when the server cannot count tokens: a cautious estimate
TOKENIZE_ENDPOINTS = {"/extras/tokenize": "input", "/tokenize": "content"}  # llama-cpp-python's, llama.cpp's


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an error: following it would send the prompt (and the key) to another address."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> NoReturn:
        raise ModelError(
            f"the model server {mask_credentials(req.full_url)} redirected ({code}) to "
            f"{mask_credentials(newurl)}; redirects are not followed: set that address as the url"
        )


def _opener(proxy: str | None) -> urllib.request.OpenerDirector:
    proxies = (
        {"http": proxy, "https": proxy} if proxy else {}
    )  # {}: the environment's proxy variables are ignored
    return urllib.request.build_opener(urllib.request.ProxyHandler(proxies), _NoRedirect())


class ServerLLM:
    def __init__(self, settings: ModelSettings, sampling: SamplingSettings) -> None:
        if not settings.url:
            raise ModelError("a server backend needs a url")
        parts = urlsplit(settings.url)  # http(s) with a host: checked when the settings load
        self._basic = None
        if parts.username or parts.password:  # credentials leave the URL: sent as a header, never shown
            pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
            self._basic = "Basic " + base64.b64encode(pair.encode()).decode()
            parts = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1])
        self.url = parts.geturl().rstrip("/")
        self.settings, self.sampling = settings, sampling
        self.name = f"{settings.server_model}@{self.url}"
        self.n_ctx = settings.n_ctx
        self._opener = _opener(settings.proxy)
        self._tokenize_path: str | None = None  # found on first use

    # -- HTTP ------------------------------------------------------------------------------------
    def _post(self, path: str, body: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self._basic:
            headers["Authorization"] = self._basic
        if self.settings.api_key_env:
            key = os.environ.get(self.settings.api_key_env)
            if not key:
                raise ModelError(f"the API key variable {self.settings.api_key_env} is not set")
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        try:
            with self._opener.open(request, timeout=timeout or self.settings.timeout_s) as response:
                reply = json.loads(response.read())
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:300]
            if e.code == 400 and ("context" in detail.lower() or "too long" in detail.lower()):
                raise ContextOverflowError(f"{self.name}: {detail}", prompt_tokens=0, n_ctx=self.n_ctx) from e
            raise ModelError(f"the model server {self.url} answered {e.code}: {detail}") from e
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            raise self._unreachable(e) from e
        except (ValueError, UnicodeDecodeError) as e:
            raise ModelError(f"the model server {self.url} sent a reply that is not JSON ({path})") from e
        if not isinstance(reply, dict):
            raise ModelError(f"the model server {self.url} sent a reply that is not a JSON object ({path})")
        return reply

    def _unreachable(self, e: Exception) -> ModelError:
        return ModelError(
            f"cannot reach the model server {self.url}: {getattr(e, 'reason', e)}; is it running?"
        )

    def check(self) -> ServerLLM:
        """Fail before a run starts when the server is not there."""
        request = urllib.request.Request(
            self.url + "/v1/models", headers={"Authorization": self._basic} if self._basic else {}
        )
        try:
            with self._opener.open(request, timeout=10):
                return self
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            raise self._unreachable(e) from e

    # -- the LLM interface -----------------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        if self._tokenize_path is None:  # the first endpoint that answers, else an estimate
            self._tokenize_path = ""
            for path, field in TOKENIZE_ENDPOINTS.items():
                try:
                    self._post(path, {field: "x"}, timeout=10)
                    self._tokenize_path = path
                    break
                except ModelError:
                    continue
        if self._tokenize_path:
            tokens = self._post(self._tokenize_path, {TOKENIZE_ENDPOINTS[self._tokenize_path]: text}).get(
                "tokens"
            )
            if not isinstance(tokens, list):
                raise ModelError(
                    f"the model server {self.url} answered {self._tokenize_path} without a list of tokens"
                )
            return len(tokens)
        return int(len(text) / CHARS_PER_TOKEN) + 1

    def _response_format(self, schema: type[BaseModel]) -> dict[str, Any]:
        json_schema = schema.model_json_schema()
        if self.settings.schema_format == "json_object":
            return {"type": "json_object", "schema": json_schema}
        return {
            "type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": json_schema, "strict": True},
        }

    def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int = 256,
        temperature: float | None = None,
    ) -> Generation[Any]:
        body: dict[str, Any] = {
            "model": self.settings.server_model,
            "messages": list(messages),
            "max_tokens": max_tokens,
            "temperature": self.sampling.temperature if temperature is None else temperature,
            "top_p": self.sampling.top_p,
            "seed": self.sampling.seed,
        }
        if schema is not None:
            body["response_format"] = self._response_format(schema)
        started = time.perf_counter()
        reply = self._post("/v1/chat/completions", body)
        try:
            choice = reply["choices"][0]
            text = choice["message"]["content"] or ""
            usage = reply.get("usage") or {}
        except (KeyError, IndexError, TypeError) as e:
            raise ModelError(
                f"the model server {self.url} sent a reply that is not a chat completion: {str(reply)[:200]}"
            ) from e
        return completed(
            text,
            choice.get("finish_reason") or "stop",
            Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                cached_tokens=int((usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0) or 0),
                seconds=time.perf_counter() - started,
            ),
            schema,
        )
