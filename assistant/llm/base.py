"""The provider interface, in the style of simonw/llm: one small class per provider whose
`stream(messages, ...)` yields text chunks.

A provider knows its SDK and nothing else: no fallback, no cool-down, no threads (that is
`chain.py`). It raises `ProviderError` with a coarse `kind` and the HTTP status, never the SDK's
message (provider error bodies can echo a partly masked key).
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from assistant.config import ProviderSettings, secret

log = logging.getLogger(__name__)

Role = Literal["system", "user", "assistant"]
ErrorKind = Literal[
    "auth", "rate_limit", "server", "timeout", "connection", "truncated", "bad_request", "other"
]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class CallOptions:
    max_tokens: int = 1024
    temperature: float = 0.2
    connect_timeout: float = 5.0
    # the SDK's per-read timeout: bounds how long a worker thread can stay blocked on a socket
    read_timeout: float = 20.0


@dataclass
class CallContext:
    """Per-call state shared by the chain and the provider's worker thread."""

    stop: threading.Event = field(default_factory=threading.Event)
    _closers: list[Callable[[], None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on_abort(self, closer: Callable[[], None]) -> None:
        """Register how to close the open response (called when the chain abandons the call)."""
        with self._lock:
            self._closers.append(closer)
            stopped = self.stop.is_set()
        if stopped:
            _quiet(closer)

    def abort(self) -> None:
        self.stop.set()
        with self._lock:
            closers, self._closers = self._closers, []
        for closer in closers:
            _quiet(closer)


def _quiet(fn: Callable[[], None]) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001 - closing a half-dead connection may fail any way it likes
        log.debug("closing an abandoned response failed", exc_info=False)


class ProviderError(Exception):
    """A provider call failed. `kind` and `status` only: no SDK message, no key."""

    def __init__(self, kind: ErrorKind, status: int | None = None) -> None:
        super().__init__(f"{kind}" + (f" (HTTP {status})" if status else ""))
        self.kind: ErrorKind = kind
        self.status = status


def status_kind(status: int | None) -> ErrorKind:
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status is not None and status >= 500:
        return "server"
    if status == 408:
        return "timeout"
    if status is not None and 400 <= status < 500:
        return "bad_request"
    return "other"


def classify_transport(exc: BaseException) -> ErrorKind:
    """Map an httpx/httpx2 (or SDK-wrapped) transport exception to a kind, by class name."""
    names = {c.__name__ for c in type(exc).__mro__}
    if names & {"TimeoutException", "APITimeoutError", "ReadTimeout", "ConnectTimeout", "TimeoutError"}:
        return "timeout"
    if names & {"RemoteProtocolError", "ReadError", "StreamError", "IncompleteRead"}:
        return "truncated"
    if names & {"ConnectError", "APIConnectionError", "NetworkError", "ConnectionError", "TransportError"}:
        return "connection"
    return "other"


class Provider(ABC):
    """One LLM endpoint. `stream` yields text chunks and ends normally only on a complete answer."""

    kind: str = ""

    def __init__(self, name: str, settings: ProviderSettings) -> None:
        self.name = name
        self.settings = settings
        self._lock = threading.Lock()

    @property
    def needs_key(self) -> bool:
        return bool(self.settings.key_env)

    def api_key(self) -> str | None:
        """The key from the environment (None when not set). Never log or store the result."""
        return secret(*self.settings.key_env) if self.settings.key_env else None

    def available(self) -> bool:
        """Enabled, and its key is present when it needs one."""
        return self.settings.enabled and (not self.needs_key or self.api_key() is not None)

    def prepare(self) -> None:
        """Import the SDK and build the client (local work, no network). The chain runs it before
        the first-token clock starts, so a slow first import is not mistaken for a slow provider."""
        return None

    @abstractmethod
    def stream(self, messages: list[Message], options: CallOptions, ctx: CallContext) -> Iterator[str]:
        """Text chunks of the answer. Raises `ProviderError`, including kind "truncated" when the
        stream ends without the provider's end-of-answer marker."""

    def __repr__(self) -> str:  # no key, ever
        return f"{type(self).__name__}(name={self.name!r}, model={self.settings.model!r})"
