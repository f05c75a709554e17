"""Shared pieces for the conversation tests: a tiny real library (real Ingestor, real LanceDB,
MiniLM), configs pointing at it, and a loopback server speaking SerpAPI's JSON.

The library is built once per test run (it is only read by the tests), in the run's temp folder.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.conftest import ROOT

DOCS = {
    "lease.md": """# Rental agreement for Flat 4B

## Notice period
The tenant must give two months' written notice before moving out. The landlord must give the
tenant three months' written notice to end the tenancy.

## Pets
Cats are allowed in the flat. Dogs require the landlord's written permission, and a pet deposit
of 300 euros is payable before the animal moves in.

## Rent
The monthly rent is 950 euros, due on the first working day of each month. Late payment incurs a
fee of 25 euros after five days.
""",
    "bicycle.md": """# City bicycle owner's manual

## Brakes
Check the brake pads every 500 kilometres. Replace the pads when the groove is less than one
millimetre deep. Never oil the rims or the brake discs.

## Tyres
Inflate the tyres to between 3.5 and 5 bar, as printed on the tyre wall. Check the pressure
every two weeks.
""",
    "handbook.md": """# Data Science course handbook

## Assessment
The course is assessed by three components: a written exam worth 50 percent, a group project
worth 30 percent, and weekly quizzes worth 20 percent.

## Attendance
Students must attend at least 80 percent of the lab sessions. Absences need a medical certificate.
""",
}


@dataclass
class Library:
    root: Path  # the documents
    uri: str  # the LanceDB folder
    store: Any
    embedder: Any


_built: dict[str, Library] = {}


def _build(base: str, emb: Any) -> Library:
    if base in _built:
        return _built[base]
    from knowledge.ingest import Ingestor
    from knowledge.settings import IngestSettings, StoreSettings
    from knowledge.store import ChunkStore

    base_dir = Path(base) / "conversation_library"
    docs = base_dir / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    uri = str(base_dir / "lancedb")
    store = ChunkStore.open(uri, emb.identity, emb.dim, StoreSettings(data_dir=str(base_dir)))
    report = Ingestor(store, emb, IngestSettings()).ingest([docs])
    assert store.count() >= len(DOCS), report
    _built[base] = Library(root=docs, uri=uri, store=store, embedder=emb)
    return _built[base]


def build_library(tmp_path_factory, minilm) -> Library:  # noqa: ANN001 - pytest fixtures
    """Built once per run with the session's MiniLM (tests/conftest.py `minilm`)."""
    return _build(str(tmp_path_factory.getbasetemp()), minilm)


def make_config(tmp_path: Path, library: Library | None = None, **changes: Any):  # noqa: ANN201
    """A HarkConfig whose traces live in `tmp_path`, MiniLM, and (optionally) the shared library."""
    from assistant.config import load_config

    cfg = load_config(ROOT / "config.yaml")
    cfg._base_dir = tmp_path
    cfg.embedder.backend = "minilm"
    cfg.intent.adapter_dir = str(ROOT / cfg.intent.adapter_dir)  # the committed adapter, if any
    if library is not None:
        cfg.store.uri = library.uri
    for dotted, value in changes.items():
        obj = cfg
        *path, last = dotted.split("__")
        for part in path:
            obj = getattr(obj, part)
        setattr(obj, last, value)
    return cfg


# ---- SerpAPI loopback ---------------------------------------------------------------------------------
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
    mode: str = "ok"  # ok | slow | garbage | layout | error | empty
    delay: float = 2.0
    answer: str | None = "Paris is the capital of France."
    organic: int = 25
    requests: list[dict[str, list[str]]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
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
        if st.mode == "slow":
            time.sleep(st.delay)
        if st.mode == "garbage":
            return self._send(200, b'{"organic_results": [ {"title": "trunc', "application/json")
        if st.mode == "layout":
            return self._send(200, json.dumps({"organic_results": "not a list"}).encode(), "application/json")
        if st.mode == "error":  # like SerpAPI: 401 with the key echoed back in the body
            key = (params.get("api_key") or [""])[0]
            body = json.dumps({"error": f"Invalid API key: {key}"}).encode()
            return self._send(401, body, "application/json")
        organic = 0 if st.mode == "empty" else st.organic
        data = serp_payload(q, organic=organic, answer=None if st.mode == "empty" else st.answer)
        return self._send(200, json.dumps(data).encode(), "application/json")

    def _send(self, status: int, data: bytes, ctype: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout test)
            pass


class _Serp(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: SerpState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


class SerpServer:
    """`with SerpServer() as s:` → `s.url` for `websearch.base_url`, `s.state` to switch behaviour."""

    def __init__(self) -> None:
        self.state = SerpState()
        self._server = _Serp(self.state)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> SerpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def closed_port_url() -> str:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


@functools.lru_cache(maxsize=1)
def shared_classifier() -> Any:
    """The committed intent classifier, loaded once per run; None before one is committed (the
    Assistant then routes by its rules)."""
    from models.intent import IntentClassifier
    from models.settings import IntentSettings

    settings = IntentSettings()
    if not (ROOT / settings.adapter_dir / "adapter_config.json").is_file():
        return None
    clf = IntentClassifier(settings, ROOT)
    clf.warm_up()
    return clf
