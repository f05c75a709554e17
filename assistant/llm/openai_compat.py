"""OpenAI, Groq and any OpenAI-compatible server (Ollama, llama.cpp server, LM Studio, vLLM).

OpenAI and OpenAI-compatible servers go through the `openai` SDK (`base_url` for local servers),
Groq through the `groq` SDK (same chat-completions wire protocol, path `/openai/v1/...`). Retries
are off (`max_retries=0`): the chain fails over instead of waiting for the SDK's back-off.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterator
from typing import Any

from assistant.config import ProviderSettings
from assistant.llm.base import (
    CallContext,
    CallOptions,
    Message,
    Provider,
    ProviderError,
    classify_transport,
    status_kind,
)

log = logging.getLogger(__name__)

_NO_KEY = "no-key-needed"  # local servers ignore the key, the SDK insists on one
PROBE_SECONDS = 0.5  # a local server that does not answer `GET /models` within this is not running
PROBE_TTL = {True: 30.0, False: 10.0}  # how long a probe's answer holds (running / not running)


class OpenAICompatProvider(Provider):
    """Chat completions over server-sent events, through the `openai` or `groq` SDK."""

    def __init__(self, name: str, settings: ProviderSettings) -> None:
        super().__init__(name, settings)
        self.kind = settings.kind
        self._client: Any = None
        self._client_fingerprint = ""
        self._probe: tuple[bool, float] | None = None  # (answers, when)

    def available(self) -> bool:
        """A keyless OpenAI-compatible server (Ollama, llama.cpp) counts only while it answers at
        its address, so with none running the chain goes straight to the extractive answer."""
        if not super().available():
            return False
        if self.kind != "openai_compatible" or self.needs_key or not self.settings.base_url:
            return True
        now = time.monotonic()
        with self._lock:
            if self._probe is not None and now - self._probe[1] < PROBE_TTL[self._probe[0]]:
                return self._probe[0]
        answers = _answers(self.settings.base_url)
        with self._lock:
            self._probe = (answers, time.monotonic())
        return answers

    def _sdk(self) -> Any:
        if self.kind == "groq":
            import groq

            return groq
        import openai

        return openai

    def _get_client(self, key: str | None) -> Any:
        fingerprint = hashlib.sha256((key or "").encode()).hexdigest()
        with self._lock:
            if self._client is None or fingerprint != self._client_fingerprint:
                sdk = self._sdk()
                kwargs: dict[str, Any] = {"api_key": key or _NO_KEY, "max_retries": 0}
                if self.settings.base_url:
                    kwargs["base_url"] = self.settings.base_url
                cls = sdk.Groq if self.kind == "groq" else sdk.OpenAI
                self._client = cls(**kwargs)
                self._client_fingerprint = fingerprint
            return self._client

    def prepare(self) -> None:
        self._sdk()
        self._get_client(self.api_key())

    def stream(self, messages: list[Message], options: CallOptions, ctx: CallContext) -> Iterator[str]:
        sdk = self._sdk()
        key = self.api_key()
        if self.needs_key and key is None:
            raise ProviderError("auth")
        client = self._get_client(key)
        token_limit = "max_completion_tokens" if self.kind == "openai" else "max_tokens"
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": True,
            "temperature": options.temperature,
            token_limit: options.max_tokens,
            "timeout": sdk.Timeout(options.read_timeout, connect=options.connect_timeout),
        }
        try:
            stream = client.chat.completions.create(**request)
        except sdk.APIStatusError as exc:
            raise ProviderError(status_kind(exc.status_code), exc.status_code) from None
        except sdk.APITimeoutError:
            raise ProviderError("timeout") from None
        except sdk.APIConnectionError:
            raise ProviderError("connection") from None
        except Exception as exc:  # noqa: BLE001 - any SDK/transport surprise is a failed call
            raise ProviderError(classify_transport(exc)) from None
        ctx.on_abort(stream.close)
        yield from self._read(stream, sdk, ctx)

    @staticmethod
    def _read(stream: Any, sdk: Any, ctx: CallContext) -> Iterator[str]:
        finished = False
        try:
            for chunk in stream:
                if ctx.stop.is_set():
                    return
                for choice in chunk.choices or ():
                    delta = getattr(choice, "delta", None)
                    text = getattr(delta, "content", None) if delta is not None else None
                    if text:
                        yield text
                    if choice.finish_reason:
                        finished = True
        except sdk.APIStatusError as exc:  # an error event inside the stream
            raise ProviderError(status_kind(exc.status_code), exc.status_code) from None
        except sdk.APITimeoutError:
            raise ProviderError("timeout") from None
        except Exception as exc:  # noqa: BLE001
            if ctx.stop.is_set():
                return
            kind = classify_transport(exc)
            raise ProviderError("truncated" if kind in ("connection", "other") else kind) from None
        finally:
            stream.close()
        if not finished and not ctx.stop.is_set():
            raise ProviderError("truncated")


def _answers(base_url: str) -> bool:
    """Whether an HTTP server answers `GET {base_url}/models` (any status counts)."""
    import httpx

    try:
        httpx.get(base_url.rstrip("/") + "/models", timeout=PROBE_SECONDS)
    except Exception:  # noqa: BLE001 - refused, timed out, not HTTP: no server there
        return False
    return True
