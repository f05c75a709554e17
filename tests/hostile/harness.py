"""Build a real Assistant for the hostile tests: MiniLM, a LanceDB table in a temp folder, whisper
tiny.en, the extractive answerer or loopback LLM providers, and a loopback web search.

`make_assistant(tmp, embedder, library=..., providers=...)` returns a `Rig` holding the Assistant,
its config and the paths a test scans (trace file, log file, data folder).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import ROOT


@dataclass
class Rig:
    assistant: Any
    cfg: Any
    root: Path
    trace_path: Path
    log_path: Path
    report: Any = None

    def turn(self, session: Any, text_or_audio: Any) -> TurnResult:
        events = list(self.assistant.respond(session, text_or_audio))
        return TurnResult(events)


@dataclass
class TurnResult:
    events: list[Any]
    answer: str = ""
    provider: str = ""
    notices: list[str] = field(default_factory=list)
    tokens: str = ""
    trace: dict[str, Any] = field(default_factory=dict)
    intent: str = ""
    sources: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        from assistant.events import Done, IntentEvent, Notice, Sources, Token

        for e in self.events:
            if isinstance(e, Token):
                self.tokens += e.text
            elif isinstance(e, Notice):
                self.notices.append(e.text)
            elif isinstance(e, IntentEvent):
                self.intent = e.label
            elif isinstance(e, Sources):
                self.sources = [h.source_path for h in e.hits]
            elif isinstance(e, Done):
                self.answer = e.answer.text
                self.provider = e.answer.provider
                self.trace = e.trace

    @property
    def everything(self) -> str:
        """Every string a user or a log reader could see from this turn."""
        import json

        return "\n".join([self.answer, self.tokens, *self.notices, json.dumps(self.trace, default=str)])


def provider_block(kind: str, model: str, base_url: str, key_env: list[str]) -> dict[str, Any]:
    return {"kind": kind, "model": model, "base_url": base_url, "key_env": key_env}


def make_assistant(
    root: Path,
    embedder: Any,
    *,
    library: Path | None = None,
    providers: dict[str, dict[str, Any]] | None = None,
    order: list[str] | None = None,
    web_url: str | None = None,
    web_timeout: float = 2.0,
    speech_model: str = "tiny.en",
    llm_timeouts: tuple[float, float, float] = (2.0, 3.0, 15.0),
    extra: dict[str, Any] | None = None,
    transcriber: Any = None,
    store: Any = None,
) -> Rig:
    """A real Assistant over `library` (ingested now) or a shared `store`. No providers → extractive."""
    from assistant.assistant import Assistant
    from assistant.config import load_config

    providers = providers or {}
    raw: dict[str, Any] = {
        "embedder": {"backend": "minilm"},
        "store": {"data_dir": str(root / "data")},
        "speech": {"model": speech_model, "warm_up": False},
        "tts": {"enabled": False},
        "trace": {"path": str(root / "data" / "traces.jsonl"), "log_path": str(root / "data" / "hark.log")},
        "llm": {
            "order": order or list(providers),
            "providers": providers,
            "connect_timeout": llm_timeouts[0],
            "first_token_timeout": llm_timeouts[1],
            "total_timeout": llm_timeouts[2],
            "cooldown_seconds": 0,
        },
        "ui": {"library_dir": str(root / "data" / "library")},
    }
    if web_url:
        raw["websearch"] = {"base_url": web_url, "timeout": web_timeout}
    for k, v in (extra or {}).items():
        raw.setdefault(k, {}).update(v)
    cfg = load_config(ROOT / "config.yaml", **raw)
    cfg._base_dir = ROOT  # the intent adapter and prompts resolve against the repository
    assistant = Assistant(cfg, embedder=embedder, transcriber=transcriber, store=store)
    rig = Rig(assistant, cfg, root, root / "data" / "traces.jsonl", root / "data" / "hark.log")
    if library is not None:
        rig.report = assistant.ingest([library])
    return rig


def all_log_text(caplog: Any) -> str:
    """Every captured log record, formatted with its arguments and any exception text."""
    out = []
    fmt = logging.Formatter("%(levelname)s %(name)s %(message)s")
    for rec in caplog.records:
        try:
            out.append(fmt.format(rec))
        except Exception:  # noqa: BLE001
            out.append(str(rec.msg))
    return "\n".join(out)
