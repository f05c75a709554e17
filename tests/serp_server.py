"""A loopback server speaking SerpAPI's JSON (`GET /search.json`), and a URL where nothing listens.

    with SerpServer() as serp:        # port 0 → a free port
        cfg.websearch.base_url = serp.url
        serp.state.mode = "slow"      # switch the behaviour between requests
        serp.state.requests           # each request's query parameters (q, engine, api_key, …)

Modes: `ok` (an answer box and `organic` numbered results naming the query), `empty` (no results),
`slow` (the `ok` reply after `delay` seconds), `garbage` (truncated JSON), `layout` (JSON of the
wrong shape), `html` (a captcha page), `huge` (a ~12 MB valid reply), `http<status>` (that status
with the key echoed back in the body, as real services do). A server that is down is
`closed_port_url()`.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


def closed_port_url() -> str:
    """`http://127.0.0.1:PORT` where nothing listens (connection refused): a server that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def serp_payload(query: str, organic: int = 25, answer: str | None = "Paris") -> dict[str, Any]:
    data: dict[str, Any] = {
        "search_metadata": {"status": "Success"},
        "search_parameters": {"engine": "google", "q": query},
        "organic_results": [
            {
                "position": i,
                "title": f"Result {i} about {query}",
                "link": f"https://example.org/{i}",
                "snippet": f"Snippet number {i}: facts about {query}.",
            }
            for i in range(1, organic + 1)
        ],
    }
    if answer:
        data["answer_box"] = {"type": "organic_result", "title": "Answer", "answer": answer,
                              "link": "https://example.org/answer"}  # fmt: skip
    return data


@dataclass
class SerpState:
    mode: str = "ok"  # see the module docstring
    delay: float = 2.0  # seconds a `slow` reply waits
    answer: str | None = "Paris is the capital of France."
    organic: int = 25
    requests: list[dict[str, list[str]]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)  # ends a `slow` wait at shutdown


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Serp

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        st = self.server.state
        url = urlsplit(self.path)
        params = parse_qs(url.query)
        st.paths.append(url.path)
        st.requests.append(params)
        q = (params.get("q") or [""])[0]
        mode = st.mode
        if mode == "slow":
            st.stopping.wait(st.delay)
        if mode == "garbage":
            return self._send(200, b'{"organic_results": [ {"title": "trunc', "application/json")
        if mode == "layout":
            body = json.dumps({"organic_results": "not a list", "answer_box": [1, 2]}).encode()
            return self._send(200, body, "application/json")
        if mode == "html":
            return self._send(200, b"<html><body>Captcha required</body></html>", "text/html")
        if mode == "huge":
            row = {"title": "x" * 1000, "link": "https://example.org/x", "snippet": "y" * 5000}
            return self._send(200, json.dumps({"organic_results": [row] * 2000}).encode(), "application/json")
        if mode.startswith("http"):
            key = (params.get("api_key") or [""])[0]
            body = json.dumps({"error": f"Invalid API key. Your API key: {key}"}).encode()
            return self._send(int(mode[4:]), body, "application/json")
        organic = 0 if mode == "empty" else st.organic
        data = serp_payload(q, organic=organic, answer=None if mode == "empty" else st.answer)
        return self._send(200, json.dumps(data).encode(), "application/json")

    def _send(self, status: int, data: bytes, ctype: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout tests)
            pass


class _Serp(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, state: SerpState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


class SerpServer:
    """`with SerpServer() as s:` → `s.url` for `websearch.base_url`, `s.state` to switch behaviour."""

    def __init__(self, mode: str = "ok", delay: float = 2.0) -> None:
        self.state = SerpState(mode=mode, delay=delay)
        self._server = _Serp(self.state)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True, name="serp-server")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> SerpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.state.stopping.set()
        self._server.shutdown()
        self._server.server_close()
