"""The fallback chain: providers in the configured order, ending in the extractive answerer.

Each call runs the provider's stream in a worker thread that feeds a queue; the caller's thread
waits on the queue against the deadlines, so a provider that never sends a token, stalls mid-way or
hangs on a socket cannot hold the turn longer than the configured timeouts, and a cancel event is
seen within `POLL_SECONDS`.

Failover rules:
- no key / disabled → skipped silently (debug log); cooling down → skipped (info log);
- error, timeout, 401/403, 429 or 5xx before the first token → the next provider at once;
- the stream breaks after it started (dropped connection, stall, error event, no end marker) →
  a `Switch(discard=True)` item tells the caller that the text streamed so far is void, and the
  next provider starts the answer from scratch (nothing is glued onto a half answer);
- a provider failing `failures_before_cooldown` times in a row (or once with 401/403) is skipped
  for `cooldown_seconds`; a success resets it.
The chain's state is only that health table (shared by sessions, guarded by a lock).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

from assistant.config import LLMSettings, ProviderSettings
from assistant.events import NOT_KNOWN
from assistant.llm.base import CallContext, CallOptions, Message, Provider, ProviderError

log = logging.getLogger(__name__)

POLL_SECONDS = 0.05  # how often a waiting chain looks at the cancel event
PREPARE_SECONDS = 60.0  # bound on importing an SDK and building its client (local work)
EXTRACTIVE = "extractive"


@dataclass
class Attempt:
    """One provider's part in a call, for the trace. Holds no key and no SDK message."""

    provider: str
    outcome: str  # ok | failed | broken | skipped_cooldown | cancelled
    error: str = ""  # auth | rate_limit | server | timeout | connection | truncated | …
    status: int | None = None
    first_token_ms: float | None = None
    total_ms: float = 0.0
    chars: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Switch:
    """The stream of `provider` failed; when `discard`, the text it streamed is void."""

    provider: str
    reason: str
    discard: bool


@dataclass
class ChainResult:
    provider: str  # the provider whose text is the answer; "extractive"; "" when none (complete())
    text: str
    attempts: list[Attempt] = field(default_factory=list)
    cancelled: bool = False


ChainItem = str | Switch | ChainResult


@dataclass
class _Health:
    failures: int = 0
    cooling_until: float = 0.0


def make_provider(name: str, settings: ProviderSettings) -> Provider:
    if settings.kind == "gemini":
        from assistant.llm.gemini import GeminiProvider

        return GeminiProvider(name, settings)
    from assistant.llm.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(name, settings)


class LLMChain:
    """Streams an answer from the first provider that works. Thread-safe; one per app."""

    def __init__(self, settings: LLMSettings, providers: list[Provider] | None = None) -> None:
        self.settings = settings
        if providers is None:
            providers = []
            for name in settings.order:
                if name not in settings.providers:
                    log.warning("llm.order names %r, which is not in llm.providers; ignored", name)
                    continue
                providers.append(make_provider(name, settings.providers[name]))
        self.providers = providers
        self._health: dict[str, _Health] = {p.name: _Health() for p in providers}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ status
    def available(self) -> list[tuple[str, bool]]:
        """(provider name, enabled with its key present) in order; never the key itself."""
        return [(p.name, p.available()) for p in self.providers] + [(EXTRACTIVE, True)]

    def warm_up(self) -> None:
        """Import the SDKs and build the clients of the usable providers now (optional)."""
        for p in self.providers:
            if p.available():
                try:
                    p.prepare()
                except Exception:  # noqa: BLE001 - a provider that cannot even start fails at call time
                    log.warning("LLM provider %s could not be prepared", p.name)

    def cooling_down(self) -> list[str]:
        now = time.monotonic()
        with self._lock:
            return [n for n, h in self._health.items() if h.cooling_until > now]

    # ------------------------------------------------------------------ calls
    def stream(
        self,
        messages: list[Message],
        *,
        extractive: Callable[[], str] | None = None,
        cancel: threading.Event | None = None,
        max_tokens: int | None = None,
        first_token_timeout: float | None = None,
        total_timeout: float | None = None,
    ) -> Iterator[ChainItem]:
        """Text chunks, `Switch` items, and finally one `ChainResult`.

        Without `extractive`, a chain with no working provider ends with provider "" and no text.
        """
        s = self.settings
        first_timeout = min(first_token_timeout or s.first_token_timeout, s.first_token_timeout)
        total = min(total_timeout or s.total_timeout, s.total_timeout)
        options = CallOptions(
            max_tokens=max_tokens or s.max_tokens,
            temperature=s.temperature,
            connect_timeout=min(s.connect_timeout, first_timeout),
            read_timeout=first_timeout,
        )
        attempts: list[Attempt] = []
        for provider in self.providers:
            if cancel is not None and cancel.is_set():
                break
            if not provider.settings.enabled:
                continue
            if not provider.available():
                log.debug("LLM provider %s skipped: no key in the environment", provider.name)
                continue
            if self._cooling(provider.name):
                log.info("LLM provider %s skipped: cooling down after repeated failures", provider.name)
                attempts.append(Attempt(provider.name, "skipped_cooldown"))
                continue
            attempt = Attempt(provider.name, "failed")
            attempts.append(attempt)
            parts: list[str] = []
            for item in self._attempt(provider, messages, options, first_timeout, total, cancel, attempt):
                parts.append(item)
                yield item
            if attempt.outcome == "ok":
                self._record(provider.name, None)
                yield ChainResult(provider.name, "".join(parts), attempts)
                return
            if attempt.outcome == "cancelled":
                yield ChainResult(provider.name, "".join(parts), attempts, cancelled=True)
                return
            self._record(provider.name, attempt.error)
            if attempt.outcome == "broken":
                log.warning(
                    "LLM provider %s broke off mid-answer (%s); the next provider starts again",
                    provider.name,
                    attempt.error,
                )
                yield Switch(provider.name, attempt.error, discard=True)
            else:
                log.warning(
                    "LLM provider %s failed before the first token: %s%s",
                    provider.name,
                    attempt.error,
                    f" (HTTP {attempt.status})" if attempt.status else "",
                )
                yield Switch(provider.name, attempt.error, discard=False)
        if cancel is not None and cancel.is_set():
            yield ChainResult("", "", attempts, cancelled=True)
            return
        if extractive is None:
            yield ChainResult("", "", attempts)
            return
        t0 = time.monotonic()
        try:
            text = extractive()
        except Exception:  # noqa: BLE001 - the last link must always answer
            log.exception("the extractive answerer failed")
            text = NOT_KNOWN
        attempts.append(Attempt(EXTRACTIVE, "ok", total_ms=_ms(t0), chars=len(text)))
        yield text
        yield ChainResult(EXTRACTIVE, text, attempts)

    def complete(
        self, messages: list[Message], *, max_tokens: int = 256, timeout: float | None = None
    ) -> str | None:
        """The whole text from the first real provider that answers; None when none does."""
        result: ChainResult | None = None
        for item in self.stream(
            messages, max_tokens=max_tokens, first_token_timeout=timeout, total_timeout=timeout
        ):
            if isinstance(item, ChainResult):
                result = item
        if result is None or not result.provider or result.cancelled:
            return None
        return result.text

    # ------------------------------------------------------------------ internals
    def _attempt(
        self,
        provider: Provider,
        messages: list[Message],
        options: CallOptions,
        first_timeout: float,
        total: float,
        cancel: threading.Event | None,
        attempt: Attempt,
    ) -> Iterator[str]:
        """Yield the provider's chunks; set `attempt.outcome` to ok/failed/broken/cancelled."""
        ctx = CallContext()
        q: queue.SimpleQueue = queue.SimpleQueue()
        worker = threading.Thread(
            target=_pump, args=(provider, messages, options, ctx, q), name=f"llm-{provider.name}", daemon=True
        )
        begun = time.monotonic()
        worker.start()
        ready = started = False
        t0 = last = begun
        chars = 0
        try:
            while True:
                now = time.monotonic()
                if cancel is not None and cancel.is_set():
                    attempt.outcome = "cancelled"
                    return
                if not ready:
                    deadline = begun + PREPARE_SECONDS
                elif started:
                    deadline = min(t0 + total, last + first_timeout)
                else:
                    deadline = t0 + first_timeout
                if now >= deadline:
                    attempt.error = "timeout"
                    attempt.outcome = "broken" if started else "failed"
                    return
                wait = deadline - now if cancel is None else min(deadline - now, POLL_SECONDS)
                try:
                    kind, value = q.get(timeout=wait)
                except queue.Empty:
                    continue
                if kind == "ready":
                    ready = True
                    t0 = last = time.monotonic()  # the provider's clocks start now
                elif kind == "text":
                    if not started:
                        started = True
                        attempt.first_token_ms = _ms(t0)
                    last = time.monotonic()
                    chars += len(value)
                    yield value
                elif kind == "end":
                    attempt.outcome = "ok"
                    return
                else:
                    err: ProviderError = value
                    attempt.error, attempt.status = err.kind, err.status
                    attempt.outcome = "broken" if started else "failed"
                    return
        finally:
            attempt.total_ms = _ms(begun)
            attempt.chars = chars
            if attempt.outcome != "ok":
                ctx.abort()

    def _cooling(self, name: str) -> bool:
        with self._lock:
            return self._health[name].cooling_until > time.monotonic()

    def _record(self, name: str, error: str | None) -> None:
        with self._lock:
            h = self._health[name]
            if error is None:
                h.failures, h.cooling_until = 0, 0.0
                return
            h.failures += 1
            if h.failures >= self.settings.failures_before_cooldown or error == "auth":
                h.cooling_until = time.monotonic() + self.settings.cooldown_seconds
                log.info(
                    "LLM provider %s cools down for %.0f s after %d failure(s)",
                    name,
                    self.settings.cooldown_seconds,
                    h.failures,
                )


def _pump(
    provider: Provider, messages: list[Message], options: CallOptions, ctx: CallContext, q: queue.SimpleQueue
) -> None:
    """Worker thread: "ready" once the client is built, the stream's chunks, then "end" or the error."""
    try:
        provider.prepare()
        q.put(("ready", None))
        for chunk in provider.stream(messages, options, ctx):
            if ctx.stop.is_set():
                return
            q.put(("text", chunk))
            time.sleep(0)  # hand the GIL to the waiting caller now, not after the switch interval
        q.put(("end", None))
    except ProviderError as exc:
        q.put(("error", exc))
    except Exception as exc:  # noqa: BLE001 - a provider bug must not kill the turn
        log.debug("LLM provider %s raised %s", provider.name, type(exc).__name__)
        q.put(("error", ProviderError("other")))


def _ms(t0: float) -> float:
    return round((time.monotonic() - t0) * 1000.0, 2)
