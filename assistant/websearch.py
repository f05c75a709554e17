"""Web search through SerpAPI's JSON API (`GET {base_url}/search.json?engine=…&q=…&api_key=…`).

The answer box (when there is one) and up to `max_results` organic results become numbered context
Hits whose `source_path` is the result's URL. No key, a failed or slow call, or a body that is not
the expected JSON → no web context and a notice; the turn goes on. The key is never logged: it is
scrubbed from error messages and from httpx's own request log lines.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from assistant.config import WebSearchSettings, secret
from knowledge.types import Hit

log = logging.getLogger(__name__)

NO_KEY = "Web search isn't set up (no SERPAPI_API_KEY), so this answer has no web results."
FAILED = "Web search failed ({why}), so this answer has no web results."


@dataclass
class WebResults:
    hits: list[Hit] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    ms: float = 0.0
    ok: bool = False


class _RedactKey(logging.Filter):
    """Replaces `api_key=<value>` in httpx's request log lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001 - never break logging
            return True
        if "api_key=" in msg:
            record.msg = _redact_query(msg)
            record.args = ()
        return True


def _redact_query(text: str) -> str:
    return re.sub(r"(api_key=)[^&\s\"']+", r"\1***", text)


_httpx_filter = _RedactKey()


def _install_log_filter() -> None:
    for name in ("httpx", "httpcore"):
        lg = logging.getLogger(name)
        if _httpx_filter not in lg.filters:
            lg.addFilter(_httpx_filter)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return " ".join(_text(v) for v in value if isinstance(v, str | int | float)).strip()
    if isinstance(value, int | float):
        return str(value)
    return ""


def parse_serpapi(data: Any, max_results: int) -> list[Hit]:
    """SerpAPI JSON → numbered Hits (answer box first). Raises ValueError when it isn't SerpAPI JSON."""
    if not isinstance(data, dict):
        raise ValueError("the response is not a JSON object")
    if data.get("error") and not data.get("organic_results"):
        raise ValueError(f"SerpAPI said: {str(data['error'])[:120]}")
    organic = data.get("organic_results") or []
    box = data.get("answer_box") or {}
    if not isinstance(organic, list) or not isinstance(box, dict):
        raise ValueError("unexpected JSON layout")
    hits: list[Hit] = []
    if box:
        parts = [_text(box.get(k)) for k in ("answer", "result", "snippet", "snippet_highlighted_words")]
        parts += [_text(x) for x in box.get("list", []) if isinstance(box.get("list"), list)]
        body = " ".join(dict.fromkeys(p for p in parts if p))
        if body:
            hits.append(_hit(box.get("link") or "", box.get("title") or "Answer box", body))
    for row in organic:
        if len(hits) >= max_results + (1 if box else 0):
            break
        if not isinstance(row, dict):
            continue
        link, title, snippet = _text(row.get("link")), _text(row.get("title")), _text(row.get("snippet"))
        if not link or not (title or snippet):
            continue
        hits.append(_hit(link, title, snippet or title))
    n = len(hits)
    for i, h in enumerate(hits, start=1):
        h.chunk_id = f"web:{i}"
        h.score = round(1.0 - (i - 1) / max(n, 1), 4)  # rank-based: the search engine's order
        h.first_stage_rank = i
    return hits


def _hit(link: str, title: str, text: str) -> Hit:
    return Hit(chunk_id="", source_path=str(link), title=str(title), chunk_text=str(text), score=0.0)


class WebSearch:
    """One SerpAPI client per Assistant. Thread-safe (an httpx.Client is); sessions share it."""

    def __init__(
        self,
        settings: WebSearchSettings,
        key: Callable[[], str | None] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self._key = key or (lambda: secret(settings.key_env))
        self._transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        _install_log_filter()

    @property
    def configured(self) -> bool:
        return bool(self._key())

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    base_url=self.settings.base_url.rstrip("/"),
                    timeout=httpx.Timeout(self.settings.timeout),
                    transport=self._transport,
                    follow_redirects=True,
                )
            return self._client

    def search(self, query: str) -> WebResults:
        started = time.perf_counter()
        key = self._key()
        if not key:
            return WebResults(notices=[NO_KEY])
        params = {
            "engine": self.settings.engine,
            "q": query,
            "api_key": key,
            "num": str(self.settings.max_results),
        }
        why = ""
        try:
            resp = self._http().get("/search.json", params=params)
            if resp.status_code != 200:
                why = f"HTTP {resp.status_code}"
            else:
                hits = parse_serpapi(resp.json(), self.settings.max_results)
                ms = (time.perf_counter() - started) * 1000
                log.info("web search: %d results in %.0f ms", len(hits), ms)
                notices = [] if hits else ["The web search found nothing for this question."]
                return WebResults(hits=hits, notices=notices, ms=ms, ok=True)
        except httpx.TimeoutException:
            why = f"no reply within {self.settings.timeout:g} s"
        except httpx.HTTPError as exc:
            why = f"could not reach the search service ({type(exc).__name__})"
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            why = f"unreadable reply: {str(exc)[:100]}"
        why = why.replace(key, "***")
        log.warning("web search failed: %s", why)
        return WebResults(notices=[FAILED.format(why=why)], ms=(time.perf_counter() - started) * 1000)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
