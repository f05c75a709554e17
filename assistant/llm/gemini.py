"""Gemini through `google-genai` (the maintained SDK; `google-generativeai` is end-of-life).

The SDK's single timeout (milliseconds) bounds connect and each read alike, so Gemini gets the
read timeout for both; the chain enforces its own connect/first-token/total deadlines on top.
SDK retries are off (no `retry_options`). The `genai.Client` is kept on the provider: a client
that goes out of scope closes its HTTP connection before the stream is read.
"""

from __future__ import annotations

import hashlib
import logging
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


class GeminiProvider(Provider):
    kind = "gemini"

    def __init__(self, name: str, settings: ProviderSettings) -> None:
        super().__init__(name, settings)
        self._client: Any = None
        self._client_fingerprint = ""

    def _get_client(self, key: str) -> Any:
        from google import genai
        from google.genai import types

        fingerprint = hashlib.sha256(key.encode()).hexdigest()
        with self._lock:
            if self._client is None or fingerprint != self._client_fingerprint:
                http = types.HttpOptions(api_version="v1beta")
                if self.settings.base_url:
                    http = types.HttpOptions(base_url=self.settings.base_url, api_version="v1beta")
                self._client = genai.Client(api_key=key, http_options=http)
                self._client_fingerprint = fingerprint
            return self._client

    def prepare(self) -> None:
        key = self.api_key()
        if key is not None:
            self._get_client(key)

    def stream(self, messages: list[Message], options: CallOptions, ctx: CallContext) -> Iterator[str]:
        from google.genai import errors, types

        key = self.api_key()
        if key is None:
            raise ProviderError("auth")
        client = self._get_client(key)
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        contents = [
            types.Content(
                role="model" if m.role == "assistant" else "user", parts=[types.Part(text=m.content)]
            )
            for m in messages
            if m.role != "system"
        ]
        config = types.GenerateContentConfig(
            system_instruction=system or None,
            temperature=options.temperature,
            max_output_tokens=options.max_tokens,
            http_options=types.HttpOptions(timeout=int(options.read_timeout * 1000)),
        )
        finished = False
        try:
            stream = client.models.generate_content_stream(
                model=self.settings.model, contents=contents, config=config
            )
            for chunk in stream:
                if ctx.stop.is_set():
                    return
                text = _chunk_text(chunk)
                if text:
                    yield text
                if any(getattr(c, "finish_reason", None) for c in (chunk.candidates or ())):
                    finished = True
        except errors.APIError as exc:
            raise ProviderError(status_kind(exc.code), exc.code) from None
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001 - transport errors come through raw
            if ctx.stop.is_set():
                return
            raise ProviderError(classify_transport(exc)) from None
        if not finished and not ctx.stop.is_set():
            raise ProviderError("truncated")


def _chunk_text(chunk: Any) -> str:
    parts: list[str] = []
    for cand in chunk.candidates or ():
        content = getattr(cand, "content", None)
        for part in getattr(content, "parts", None) or ():
            if getattr(part, "text", None) and not getattr(part, "thought", False):
                parts.append(part.text)
    return "".join(parts)
