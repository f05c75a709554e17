"""Loopback servers for the hostile suite.

- `Echo`: a behaviour for `tests.llm_server.LLMServer` that streams back the prompt it received
  (system and user text, flattened) — the worst case of a model that repeats its instructions and
  context: whatever Hark sends to a provider, the user would see.
- `WebServer`: a SerpAPI-shaped `GET /search.json` server whose behaviour a test switches between
  ok, slow, garbage JSON, wrong JSON layout, HTML, HTTP errors (echoing the key, as real services
  do), and a huge body. "Down" is a closed port (`closed_port()`).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.llm_server import LLMServer, Reply


def prompt_text(body: dict[str, Any]) -> str:
    """All text of an OpenAI-style (`messages`) or Gemini-style (`contents`) request body."""
    parts: list[str] = []
    for m in body.get("messages") or []:
        c = m.get("content")
        if isinstance(c, str):
            parts.append(f"<{m.get('role')}> {c}")
        elif isinstance(c, list):
            parts += [f"<{m.get('role')}> {p.get('text', '')}" for p in c if isinstance(p, dict)]
    si = body.get("systemInstruction") or body.get("system_instruction") or {}
    for p in si.get("parts") or []:
        parts.append(f"<system> {p.get('text', '')}")
    for c in body.get("contents") or []:
        for p in c.get("parts") or []:
            parts.append(f"<{c.get('role', 'user')}> {p.get('text', '')}")
    return "\n".join(parts)


@dataclass
class Echo(Reply):
    """Streams back the whole prompt of the request it answers (in ~200-character chunks)."""

    server: LLMServer | None = None

    def chunks(self) -> list[str]:
        assert self.server is not None
        mine = [r for r in self.server.requests if r.behaviour is self]
        text = prompt_text(mine[-1].body) if mine else "(no request)"
        return [text[i : i + 200] for i in range(0, len(text), 200)] or ["(empty prompt)"]


def echo_server() -> tuple[LLMServer, Echo]:
    server = LLMServer(max_lifetime=600).start()
    echo = Echo(server=server)
    server.set_default(echo)
    return server, echo


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERP_OK = {
    "search_metadata": {"status": "Success"},
    "answer_box": {"title": "Capital of Australia", "answer": "Canberra", "link": "https://example.org/au"},
    "organic_results": [
        {"position": 1, "title": "Canberra - Wikipedia", "link": "https://example.org/canberra",
         "snippet": "Canberra is the capital city of Australia."},
        {"position": 2, "title": "Australia facts", "link": "https://example.org/facts",
         "snippet": "Sydney is the largest city; Canberra is the capital."},
    ],
}


class _WebHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _WebHTTP

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:  # noqa: N802
        st = self.server.owner
        query = parse_qs(urlsplit(self.path).query)
        st.calls.append({"path": self.path, "query": query, "at": time.perf_counter()})
        key = (query.get("api_key") or [""])[0]
        mode = st.mode
        if mode == "slow":
            st.stopping.wait(st.slow_seconds)
            self._send(200, json.dumps(SERP_OK).encode(), "application/json")
        elif mode == "ok":
            self._send(200, json.dumps(SERP_OK).encode(), "application/json")
        elif mode == "garbage":
            self._send(200, b'{"organic_results": [{"title": "trunc', "application/json")
        elif mode == "wrong_layout":
            self._send(200, json.dumps({"organic_results": "not a list", "answer_box": [1, 2]}).encode(), "application/json")
        elif mode == "html":
            self._send(200, b"<html><body>Captcha required</body></html>", "text/html")
        elif mode == "huge":
            row = {"title": "x" * 1000, "link": "https://example.org/x", "snippet": "y" * 5000}
            body = json.dumps({"organic_results": [row] * 2000}).encode()
            self._send(200, body, "application/json")
        elif mode.startswith("http"):
            status = int(mode[4:])
            self._send(status, json.dumps({"error": f"Invalid API key. Your API key: {key}"}).encode(), "application/json")
        else:
            self._send(500, b"unknown mode", "text/plain")

    def _send(self, status: int, data: bytes, ctype: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass


class _WebHTTP(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: WebServer) -> None:
        super().__init__(("127.0.0.1", 0), _WebHandler)
        self.owner = owner


class WebServer:
    """SerpAPI-shaped loopback server; `mode` picks the behaviour (see module docstring)."""

    def __init__(self, mode: str = "ok", slow_seconds: float = 5.0) -> None:
        self.mode = mode
        self.slow_seconds = slow_seconds
        self.calls: list[dict[str, Any]] = []
        self.stopping = threading.Event()
        self._http: _WebHTTP | None = None

    def __enter__(self) -> WebServer:
        self._http = _WebHTTP(self)
        threading.Thread(target=self._http.serve_forever, daemon=True, name="web-server").start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()

    @property
    def url(self) -> str:
        assert self._http is not None
        return f"http://127.0.0.1:{self._http.server_address[1]}"
