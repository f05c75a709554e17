"""A loopback LLM server speaking the real wire protocols, with scripted behaviour per request.

Routes (what the real SDKs call when given this server's base URL):
- OpenAI chat completions, SSE:  POST /v1/chat/completions             (openai: base_url=server.openai_url)
- Groq (same protocol):          POST /openai/v1/chat/completions      (groq: base_url=server.url)
- Gemini:                        POST /v1beta/models/M:streamGenerateContent?alt=sse
                                                                        (google-genai: base_url=server.url)

Usage::

    with LLMServer() as server:                       # port 0 → a free port; stops by itself too
        server.script("gpt-test", Fail(500), Reply("Paris is the capital [1]."))
        ...  # point a client at server.openai_url; each request pops the next behaviour for its
             # model; an unscripted request gets `server.default` (a short clean reply)
        server.requests                               # RecordedRequest list (route, model, body, times)

Behaviours: `Reply` (clean stream, optional time-to-first-token and per-chunk delay), `Fail` (an
HTTP error status with the provider's error body), `Stall` (nothing before `seconds`), `Drop`
(some chunks, then the connection is cut without the end of the chunked body).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    text: str | list[str] = "This is a scripted answer [1]."
    ttft: float = 0.0  # seconds between the response headers and the first text chunk
    chunk_delay: float = 0.0

    def chunks(self) -> list[str]:
        if isinstance(self.text, list):
            return self.text
        words = re.findall(r"\S+\s*", self.text)
        return words or [self.text]


@dataclass
class Fail:
    status: int = 500
    # the error body echoes the key the client sent, as real providers partly do: a client that
    # logs error bodies would leak it, and the tests would see that
    echo_key: bool = True


@dataclass
class Stall:
    seconds: float = 30.0
    headers_first: bool = True  # send 200 + headers, then nothing


@dataclass
class Drop:
    text: str | list[str] = "This answer will be cut off in the middle of"
    after: int = 3  # chunks sent before the connection is cut

    def chunks(self) -> list[str]:
        return Reply(self.text).chunks()


Behaviour = Reply | Fail | Stall | Drop


@dataclass
class RecordedRequest:
    route: str  # openai | groq | gemini
    model: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict[str, Any]
    behaviour: Behaviour
    received_at: float  # time.perf_counter()
    first_token_at: float | None = None  # when the first text chunk was written


@dataclass
class _State:
    scripts: dict[str, deque] = field(default_factory=lambda: defaultdict(deque))
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


_GEMINI = re.compile(r"^/v1beta/models/(?P<model>[^/:]+):streamGenerateContent")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - the model list local servers (Ollama, llama.cpp) serve
        if self.path.split("?", 1)[0] in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "local-test", "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        path = self.path.split("?", 1)[0]
        m = _GEMINI.match(path)
        if m:
            route, model = "gemini", m.group("model")
        elif path == "/openai/v1/chat/completions":
            route, model = "groq", str(body.get("model", ""))
        elif path == "/v1/chat/completions":
            route, model = "openai", str(body.get("model", ""))
        else:
            self._send_json(404, {"error": {"message": f"no route {path}"}})
            return
        state = self.server.state
        with state.lock:
            queued = state.scripts.get(model)
            behaviour = queued.popleft() if queued else self.server.default
            rec = RecordedRequest(
                route,
                model,
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                body,
                behaviour,
                time.perf_counter(),
            )
            state.requests.append(rec)
        if isinstance(behaviour, Fail):
            self._fail(route, behaviour)
        elif isinstance(behaviour, Stall):
            self._stall(behaviour)
        else:
            self._stream(route, model, behaviour, rec)

    # ------------------------------------------------------------------ behaviours
    def _key(self) -> str:
        auth = self.headers.get("Authorization", "")
        return auth.removeprefix("Bearer ").strip() or self.headers.get("x-goog-api-key", "")

    def _fail(self, route: str, b: Fail) -> None:
        note = f" Incorrect API key provided: {self._key()}." if b.echo_key else ""
        if route == "gemini":
            status = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED"}.get(
                b.status, "RESOURCE_EXHAUSTED" if b.status == 429 else "INTERNAL"
            )
            payload = {"error": {"code": b.status, "message": f"scripted failure.{note}", "status": status}}
        else:
            payload = {"error": {"message": f"scripted failure.{note}", "type": "server_error", "code": None}}
        self._send_json(b.status, payload)

    def _stall(self, b: Stall) -> None:
        if b.headers_first:
            self._start_stream()
        self._sleep(b.seconds)
        self.close_connection = True
        _hard_close(self.connection)

    def _stream(self, route: str, model: str, b: Reply | Drop, rec: RecordedRequest) -> None:
        chunks = b.chunks()
        drop_after = b.after if isinstance(b, Drop) else None
        self._start_stream()
        if isinstance(b, Reply) and b.ttft:
            self._sleep(b.ttft)
        for i, text in enumerate(chunks):
            if drop_after is not None and i >= drop_after:
                self.close_connection = True
                _hard_close(self.connection)
                return
            if rec.first_token_at is None:
                rec.first_token_at = time.perf_counter()
            self._event(_payload(route, model, text, last=False))
            if isinstance(b, Reply) and b.chunk_delay:
                self._sleep(b.chunk_delay)
        if drop_after is not None:  # fewer chunks than `after`: cut before the end marker
            self.close_connection = True
            _hard_close(self.connection)
            return
        self._event(_payload(route, model, "", last=True))
        if route != "gemini":
            self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")  # end of the chunked body

    # ------------------------------------------------------------------ wire helpers
    def _sleep(self, seconds: float) -> None:
        self.server.state.stopping.wait(seconds)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def _event(self, payload: dict) -> None:
        self._write_chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _send_json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _payload(route: str, model: str, text: str, *, last: bool) -> dict:
    if route == "gemini":
        cand: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
        if last:
            cand["finishReason"] = "STOP"
        out: dict[str, Any] = {"candidates": [cand], "modelVersion": model}
        if last:
            out["usageMetadata"] = {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
        return out
    delta = {} if last else {"role": "assistant", "content": text}
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": "stop" if last else None}],
    }


def _hard_close(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, addr: tuple[str, int], state: _State, default: Behaviour) -> None:
        super().__init__(addr, _Handler)
        self.state = state
        self.default = default

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (a cancelled or abandoned stream) is normal here: stay quiet."""
        import sys

        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class LLMServer:
    """The loopback server. Start with `start()` or as a context manager; it stops itself after
    `max_lifetime` seconds in any case, so a forgotten one cannot outlive the test run."""

    def __init__(self, *, default: Behaviour | None = None, max_lifetime: float = 300.0) -> None:
        self._state = _State()
        self._default: Behaviour = default or Reply("A default answer from the loopback server [1].")
        self._max_lifetime = max_lifetime
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> LLMServer:
        self._server = _Server(("127.0.0.1", 0), self._state, self._default)
        self._thread = threading.Thread(target=self._server.serve_forever, name="llm-server", daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self._max_lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        self._state.stopping.set()
        if self._timer is not None:
            self._timer.cancel()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ addresses
    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """Base URL for groq and google-genai (they append their own paths)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for the openai SDK and OpenAI-compatible clients."""
        return f"{self.url}/v1"

    # ------------------------------------------------------------------ scripting
    def script(self, model: str, *behaviours: Behaviour) -> LLMServer:
        """Queue behaviours for requests naming `model` (one per request, in order)."""
        with self._state.lock:
            self._state.scripts[model].extend(behaviours)
        return self

    def set_default(self, behaviour: Behaviour) -> None:
        self._default = behaviour
        if self._server is not None:
            self._server.default = behaviour

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    def requests_for(self, model: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.model == model]

    def clear(self) -> None:
        with self._state.lock:
            self._state.scripts.clear()
            self._state.requests.clear()
