"""The real Gradio app over a library of 20 "people", for the load test and `bench/load.py`.

Each project has a document with a city and a mascot that no other document mentions. A session
asks about one project, then a follow-up ("and what is its mascot?") that only its own memory can
resolve: a follow-up rewritten with another session's project is a crossed session.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

PEOPLE: list[tuple[str, str, str]] = [  # (project, city, mascot): no two share a city or a mascot
    ("Aurelia", "Tromsø", "bassoon"), ("Bastian", "Valparaíso", "theremin"),
    ("Celeste", "Ulaanbaatar", "harpsichord"), ("Dmitri", "Reykjavík", "didgeridoo"),
    ("Elowen", "Timbuktu", "marimba"), ("Faustino", "Kathmandu", "bagpipes"),
    ("Greta", "Hobart", "sitar"), ("Hamish", "Ushuaia", "accordion"),
    ("Ingrid", "Zanzibar", "banjo"), ("Jasper", "Samarkand", "cello"),
    ("Katarina", "Tbilisi", "oboe"), ("Lorcan", "Nuuk", "ukulele"),
    ("Mireille", "Lhasa", "trombone"), ("Nikolai", "Cusco", "xylophone"),
    ("Ottilie", "Svalbard", "mandolin"), ("Percival", "Hanoi", "glockenspiel"),
    ("Quintessa", "Marrakesh", "tuba"), ("Rasmus", "Yakutsk", "zither"),
    ("Solveig", "Montevideo", "clarinet"), ("Tobiah", "Windhoek", "harmonica"),
]

# gradio_client's posts default to httpx's 5 s; on a loaded 2-core machine the queue's answer to a
# join can take longer than that (a browser would simply wait), so the clients wait like a browser
CLIENT_TIMEOUT = 120.0

POLICY_V1 = "The vault policy codeword is ALPHAQUARTZ. The vault opens at dawn."
POLICY_V2 = "The vault policy codeword is BETAGARNET. The vault opens at dusk."


def project_doc(name: str, city: str, mascot: str) -> str:
    return (
        f"# Project {name}\n\n"
        f"Project {name} is based in the city of {city}. The mascot of Project {name} is a {mascot}, "
        f"painted on every crate the project ships.\n"
    )


def write_library(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, city, instrument in PEOPLE:
        (folder / f"project_{name.lower()}.md").write_text(project_doc(name, city, instrument), encoding="utf-8")
    (folder / "policy.txt").write_text(POLICY_V1)
    return folder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class App:
    url: str
    assistant: Any
    cfg: Any
    base: Path
    library_dir: Path
    demo: Any = field(repr=False, default=None)

    def close(self) -> None:
        if self.demo is not None:
            self.demo.close()


def start_app(base: Path, embedder: Any = None, *, concurrency: int = 4, providers: dict | None = None,
              max_upload_files: int = 30) -> App:
    """The real app (real Assistant, MiniLM, extractive answers unless `providers`) on a free port."""
    from assistant.assistant import Assistant
    from assistant.config import load_config
    from ui.app import build_app, serve
    from ui.launch_plan import LaunchPlan

    docs = write_library(base / "docs")
    raw: dict[str, Any] = {
        "embedder": {"backend": "minilm"},
        "store": {"data_dir": str(base / "data")},
        "speech": {"model": "tiny.en", "warm_up": False},
        "tts": {"enabled": False},
        "trace": {"path": str(base / "data" / "traces.jsonl"), "log_path": str(base / "data" / "hark.log")},
        "ui": {"library_dir": str(base / "data" / "library"), "concurrency_limit": concurrency,
               "max_queue": 256, "max_upload_mb": 5, "max_upload_files": max_upload_files},
        "llm": {"order": list(providers or {}), "providers": providers or {}, "cooldown_seconds": 0,
                "connect_timeout": 1.0, "first_token_timeout": 1.5, "total_timeout": 20.0},
    }
    cfg = load_config(ROOT / "config.yaml", **raw)
    cfg._base_dir = ROOT
    assistant = Assistant(cfg, embedder=embedder)
    report = assistant.ingest([docs])
    assert report.totals["added"] == len(PEOPLE) + 1, report.files
    (base / "data" / "library").mkdir(parents=True, exist_ok=True)
    demo = build_app(assistant, cfg)
    url, _ = serve(demo, cfg, LaunchPlan(host="127.0.0.1", port=free_port(), share=False, auth=None), block=False)
    return App(url=url, assistant=assistant, cfg=cfg, base=base, library_dir=base / "data" / "library", demo=demo)


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(text_of(p.get("text", "") if isinstance(p, dict) else p) for p in content)
    if isinstance(content, dict):
        return str(content.get("text", ""))
    return str(content)


def strip_html(s: str) -> str:
    return re.sub(r"<[^>]+>", " ", s)


@dataclass
class SessionLog:
    person: int
    turns: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""


def run_session(url: str, person: int, follow_up: bool = True, policy_asks: int = 0) -> SessionLog:
    """One gradio_client session: a question about one project, a follow-up, optional policy asks."""
    from gradio_client import Client

    name, _city, _instr = PEOPLE[person]
    log = SessionLog(person)
    try:
        client = Client(url, verbose=False, httpx_kwargs={"timeout": CLIENT_TIMEOUT})
        questions = [f"In which city is Project {name} based?"]
        if follow_up:
            questions.append("And what is its mascot?")
        questions += ["What is the vault policy codeword?"] * policy_asks
        for q in questions:
            t0 = time.perf_counter()
            messages, _box, evidence, meta, *_ = client.predict(q, api_name="/ask")
            log.turns.append({
                "q": q, "seconds": time.perf_counter() - t0,
                "users": [text_of(m["content"]) for m in messages if m["role"] == "user"],
                "answer": next(text_of(m["content"]) for m in reversed(messages) if m["role"] == "assistant"),
                "evidence": strip_html(evidence or ""), "meta": strip_html(meta or ""),
            })
    except Exception as exc:  # noqa: BLE001 - reported by the caller
        log.error = f"{type(exc).__name__}: {exc}"
    return log


def run_sessions(url: str, n: int, **kw: Any) -> list[SessionLog]:
    logs: list[SessionLog | None] = [None] * n

    def go(i: int) -> None:
        logs[i] = run_session(url, i % len(PEOPLE), **kw)

    threads = [threading.Thread(target=go, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    return [lg if lg is not None else SessionLog(-1, error="did not finish") for lg in logs]
