"""`openai:MODEL`: any OpenAI-compatible chat-completions endpoint (DeepSeek, vLLM, Ollama,
llama.cpp server) through the official `openai` SDK, imported lazily. I/O: the network.

Retries: the SDK's own retry is switched off (`max_retries=0`) so exactly one layer retries, here,
and only where no completion was received: a connection error or timeout, HTTP 429, HTTP 5xx.
A received completion is final whatever it says (spec §4: never a second call). A 400 is not
retried blindly: only a 400 that names the structured-output parameter is answered by asking again
with the next weaker format (json_schema -> json_object -> none), because no completion came back;
the client remembers the downgrade. Any other 4xx is an LLMUnavailable error.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from plan07 import caps
from plan07.decompose.client import Completion
from plan07.errors import InputError, LLMUnavailable
from plan07.model import Usage

# Structured-output modes, strongest first. PLAN07_LLM_RESPONSE_FORMAT picks the starting one.
MODES = ("json_schema", "json_object", "none")
# plan07's own variable -> the OpenAI SDK's, read when plan07's is unset or empty
ENV_FALLBACK = {"PLAN07_LLM_BASE_URL": "OPENAI_BASE_URL", "PLAN07_LLM_API_KEY": "OPENAI_API_KEY"}
_FORMAT_WORDS = ("response_format", "response format", "json_schema", "json_object", "json mode")


class OpenAIClient:
    """One chat-completions request per call (plus transport retries); see the module docstring."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str,
        timeout_s: float = caps.LLM_TIMEOUT_S,
        max_attempts: int = caps.LLM_MAX_ATTEMPTS,
        backoff_s: float = caps.LLM_BACKOFF_S,
        mode: str = "json_schema",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if mode not in MODES:
            raise InputError(f"unknown response format {mode!r}; known: {', '.join(MODES)}",
                             field="PLAN07_LLM_RESPONSE_FORMAT")
        self.name = f"openai:{model}"
        self.model = model
        self.base_url = base_url
        self.mode = mode
        self._api_key = api_key
        from plan07.sandbox import remember

        remember(api_key)  # redacted from every output, wherever it came from
        self._timeout_s = timeout_s
        self._max_attempts = max(1, max_attempts)
        self._backoff_s = backoff_s
        self._sleep = sleep
        self._sdk: Any = None

    @classmethod
    def from_env(cls, model: str) -> OpenAIClient:
        """Base URL and key from PLAN07_LLM_BASE_URL / PLAN07_LLM_API_KEY, each falling back to
        the OpenAI SDK's own OPENAI_BASE_URL / OPENAI_API_KEY (one of each pair required);
        optional PLAN07_LLM_TIMEOUT (seconds) and PLAN07_LLM_RESPONSE_FORMAT (a mode). Refused
        here, before any other stage runs, without the openai extra."""
        from plan07 import extras

        if not extras.available("openai"):
            raise extras.missing("openai", f"--llm openai:{model}")
        env = {k: os.environ.get(k, "").strip() for k in (*ENV_FALLBACK, *ENV_FALLBACK.values(),
                                                         "PLAN07_LLM_TIMEOUT",
                                                         "PLAN07_LLM_RESPONSE_FORMAT")}
        for key, hint in (("PLAN07_LLM_BASE_URL", "e.g. http://127.0.0.1:8000/v1"),
                          ("PLAN07_LLM_API_KEY", "any non-empty string for a local server")):
            if not env[key] and not env[ENV_FALLBACK[key]]:
                raise InputError(f"{key} (or {ENV_FALLBACK[key]}) is not set; export it ({hint}) "
                                 f"to use openai:{model}", field="--llm")
        timeout = caps.LLM_TIMEOUT_S
        if env["PLAN07_LLM_TIMEOUT"]:
            try:
                timeout = float(env["PLAN07_LLM_TIMEOUT"])
            except ValueError:
                raise InputError(f"not a number of seconds: {env['PLAN07_LLM_TIMEOUT']!r}",
                                 field="PLAN07_LLM_TIMEOUT") from None
        base_url, api_key = (env[k] or env[ENV_FALLBACK[k]] for k in ENV_FALLBACK)
        return cls(model, base_url=base_url, api_key=api_key, timeout_s=timeout,
                   mode=env["PLAN07_LLM_RESPONSE_FORMAT"] or "json_schema")

    def _client(self) -> Any:
        if self._sdk is None:
            from plan07 import extras

            # lazy: ~0.4 s, and only this client needs it
            openai = extras.require("openai", f"--llm {self.name}")
            self._sdk = openai.OpenAI(base_url=self.base_url, api_key=self._api_key,
                                      timeout=self._timeout_s, max_retries=0)
        return self._sdk

    def _format(self, response_format: dict[str, Any] | None) -> dict[str, Any] | None:
        if response_format is None or self.mode == "none":
            return None
        if self.mode == "json_object" or response_format.get("type") != "json_schema":
            return {"type": "json_object"}
        return response_format

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float,
        max_completion_tokens: int,
        response_format: dict[str, Any] | None,
    ) -> Completion:
        client = self._client()  # the openai extra, or one line naming its `pip install`
        import openai

        attempt = 0
        while True:
            fmt = self._format(response_format)
            kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                      "temperature": temperature,
                                      "max_completion_tokens": max_completion_tokens}
            if fmt is not None:
                kwargs["response_format"] = fmt
            attempt += 1
            try:
                resp = client.chat.completions.create(**kwargs)
            except openai.BadRequestError as exc:
                if fmt is not None and _names_format(exc):
                    self.mode = MODES[MODES.index(self.mode) + 1]  # no completion: ask weaker
                    attempt -= 1
                    continue
                raise LLMUnavailable(f"{self.name}: the endpoint refused the request "
                                     f"(HTTP 400, not retried): {_message(exc)}") from None
            except (openai.APIConnectionError, openai.RateLimitError,
                    openai.InternalServerError) as exc:
                if attempt >= self._max_attempts:
                    raise LLMUnavailable(
                        f"{self.name}: no completion from {self.base_url} after {attempt} "
                        f"attempt(s): {_message(exc)}; check PLAN07_LLM_BASE_URL and the server"
                    ) from None
                self._sleep(self._delay(attempt, exc))
                continue
            except openai.APIStatusError as exc:
                raise LLMUnavailable(f"{self.name}: HTTP {exc.status_code} (not retried): "
                                     f"{_message(exc)}") from None
            except openai.OpenAIError as exc:
                raise LLMUnavailable(f"{self.name}: unusable response: {exc}") from None
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                # a 200 whose body is not a chat completion (HTML, bad JSON, wrong shape)
                raise LLMUnavailable(f"{self.name}: the endpoint's reply is not a chat "
                                     f"completion ({type(exc).__name__}: "
                                     f"{' '.join(str(exc).split())[:160]})") from None
            try:
                return _completion(resp)
            except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
                raise LLMUnavailable(f"{self.name}: the endpoint's reply is not a chat "
                                     f"completion ({type(exc).__name__})") from None

    def _delay(self, attempt: int, exc: Exception) -> float:
        """Exponential backoff, or the server's Retry-After when it gives a short one."""
        delay: float = min(self._backoff_s * 2.0 ** (attempt - 1), caps.LLM_MAX_BACKOFF_S)
        response = getattr(exc, "response", None)
        header: str | None = (response.headers.get("retry-after")
                              if response is not None else None)
        try:
            if header is not None:
                return float(min(max(float(header), 0.0), caps.LLM_MAX_BACKOFF_S))
        except ValueError:
            pass
        return delay


def _message(exc: Exception) -> str:
    return " ".join(str(getattr(exc, "message", exc)).split())[:300]


def _names_format(exc: Exception) -> bool:
    text = f"{getattr(exc, 'message', '')} {getattr(exc, 'body', '')}".lower()
    return any(w in text for w in _FORMAT_WORDS)


def _completion(resp: Any) -> Completion:
    """The first choice's text (empty when the endpoint sent none) and its usage."""
    if isinstance(resp, str | bytes) or not hasattr(resp, "choices"):
        raise TypeError(f"a {type(resp).__name__}, not a chat completion object")
    choices = resp.choices or []
    text, finish = "", None
    if choices:
        text = getattr(choices[0].message, "content", None) or ""
        finish = getattr(choices[0], "finish_reason", None)
    u = getattr(resp, "usage", None)
    usage = Usage(prompt_tokens=int(getattr(u, "prompt_tokens", 0) or 0),
                  completion_tokens=int(getattr(u, "completion_tokens", 0) or 0))
    return Completion(text=text, usage=usage, finish_reason=finish)
