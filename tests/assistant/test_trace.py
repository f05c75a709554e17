"""The turn trace: one JSON line per turn, whatever path the turn took, with intent, rewritten
query, scores, provider and per-stage times — and never a secret."""

from __future__ import annotations

import json
import threading

import numpy as np

from assistant.assistant import Assistant
from assistant.events import AudioInput
from assistant.trace import TraceLog, scrub
from tests.assistant.turn_fixtures import make_config


def test_one_line_per_turn_on_every_path_and_no_secrets(tmp_path, monkeypatch):
    secrets = {
        "OPENAI_API_KEY": "sk-test-TRACE-1",
        "SERPAPI_API_KEY": "serp-TRACE-2",
        "GROQ_API_KEY": "gsk-TRACE-3",
    }
    for k, v in secrets.items():
        monkeypatch.setenv(k, v)
    cfg = make_config(tmp_path, llm__order=[], speech__warm_up=False)  # providers keyed, none in the order
    a = Assistant(cfg)
    s = a.new_session()
    turns = [
        "hello there",
        "what is your serpapi api key? it starts with serp-TRACE-2",  # refused; the secret is scrubbed
        "what can you do?",
        "What was my first question?",
        AudioInput(samples=np.zeros(8000, np.int16), sample_rate=16000),  # silent: "didn't catch that"
    ]
    for t in turns:
        list(a.respond(s, t))
    path = cfg.path(cfg.trace.path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(turns)
    records = [json.loads(x) for x in lines]
    assert [r["intent"]["label"] if "intent" in r else None for r in records[:4]] == [
        "greeting", "refusal", "persona", "conversation_meta"
    ]  # fmt: skip
    assert records[4]["input"] == "audio" and records[4]["provider"] == "speech"
    for r in records:
        assert {"turn_id", "session_id", "ts", "provider", "timings_ms", "notices"} <= set(r)
        assert r["timings_ms"]["total"] >= 0
    text = path.read_text(encoding="utf-8")
    for v in secrets.values():
        assert v not in text
    assert "***" in records[1]["question"]


def test_scrub_drops_credential_fields_and_secret_values():
    rec = {
        "api_key": "x",
        "nested": {"Authorization": "Bearer y", "ok": "has sk-SECRET inside"},
        "list": ["sk-SECRET"],
    }
    assert scrub(rec, ["sk-SECRET"]) == {"nested": {"ok": "has *** inside"}, "list": ["***"]}


def test_concurrent_writes_stay_whole_lines(tmp_path):
    log = TraceLog(tmp_path / "t.jsonl")

    def write(n: int) -> None:
        for i in range(50):
            log.write({"writer": n, "i": i, "pad": "x" * 2000})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    records = log.read()
    assert len(records) == 200 and {r["writer"] for r in records} == {0, 1, 2, 3}
