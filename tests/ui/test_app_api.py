"""The app's API through gradio_client against the real app: streamed answers with sources,
voice questions, per-session memory, and uploads that are sanitised and limited."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import httpx
import pytest
from gradio_client import Client, handle_file

pytestmark = pytest.mark.slow


def _text(content) -> str:
    """Flatten a chatbot message content (a string or a list of parts) to text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(_text(p.get("text", "") if isinstance(p, dict) else p) for p in content)
    if isinstance(content, dict):
        return str(content.get("text", ""))
    return str(content)


def _last(messages: list[dict], role: str) -> str:
    return next(_text(m["content"]) for m in reversed(messages) if m["role"] == role)


@pytest.fixture(scope="module")
def client(hark_app):
    return Client(hark_app.url, verbose=False)


def test_ask_streams_updates_then_a_cited_answer(hark_app):
    client = Client(hark_app.url, verbose=False)
    job = client.submit("How long is the notice period for the tenant?", api_name="/ask")
    updates = list(job)  # every intermediate output of the generator
    assert len(updates) >= 3, "the answer should arrive as a stream of updates"
    first_messages = updates[0][0]
    assert _last(first_messages, "assistant") == "…"  # the placeholder shown before any token
    messages, _box, evidence, meta, *_ = job.result()
    answer = _last(messages, "assistant")
    assert "two months" in answer
    assert re.search(r'<a class="hark-cite" href="#hark-src-1-1">\[1\]</a>', answer)
    assert 'id="hark-src-1-1"' in evidence and "rental_agreement.md" in evidence
    assert "<svg" in evidence and "dense" in evidence
    assert "intent" in meta


def test_each_client_session_has_its_own_memory(hark_app):
    a, b = Client(hark_app.url, verbose=False), Client(hark_app.url, verbose=False)
    a.predict("How long is the notice period for the tenant?", api_name="/ask")
    b.predict("What pressure should the city bike tyres have?", api_name="/ask")
    messages_a, _, _, meta_a, *_ = a.predict("and for the landlord?", api_name="/ask")
    messages_b, *_ = b.predict("thanks, and how often should I lubricate the chain?", api_name="/ask")
    users_a = [_text(m["content"]) for m in messages_a if m["role"] == "user"]
    assert users_a == ["How long is the notice period for the tenant?", "and for the landlord?"]
    assert "three months" in _last(messages_a, "assistant")
    assert "notice period" in meta_a  # the follow-up was rewritten from A's own history
    assert "300 kilometres" in _last(messages_b, "assistant")
    assert not any("notice" in _text(m["content"]) for m in messages_b)


def test_concurrent_sessions_get_their_own_answers(hark_app):
    questions = {
        "rent": ("How much is the rent per month?", "950 euros"),
        "tyres": ("What pressure for the city bike tyres?", "4.5 bar"),
        "tomato": ("When are tomatoes planted out?", "May"),
        "deposit": ("How much is the security deposit?", "1,900 euros"),
    }
    results: dict[str, object] = {}

    def run(key: str, question: str) -> None:
        try:
            results[key] = Client(hark_app.url, verbose=False).predict(question, api_name="/ask")
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            results[key] = exc

    threads = [threading.Thread(target=run, args=(k, q)) for k, (q, _) in questions.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for key, (question, expected) in questions.items():
        out = results[key]
        assert not isinstance(out, Exception), f"{key}: {out!r}"
        messages = out[0]
        assert [_text(m["content"]) for m in messages if m["role"] == "user"] == [question]
        assert expected in _last(messages, "assistant"), (key, _last(messages, "assistant"))


def test_voice_question_through_the_api(client, spoken_question):
    messages, _, evidence, *_ = client.predict(handle_file(str(spoken_question)), api_name="/voice")
    heard = _last(messages, "user").lower()
    assert heard.startswith("🎙️") and "notice" in heard and "rental" in heard
    answer = _last(messages, "assistant")
    assert "months" in answer and "rental_agreement.md" in evidence


def test_upload_sanitises_names_and_enforces_limits(hark_app, tmp_path):
    client = Client(hark_app.url, verbose=False)
    hostile = tmp_path / "$(touch pwned);notes `id`.txt"
    hostile.write_text("The spare key of the shed is hidden under the blue flower pot by the door.")
    big = tmp_path / "big.txt"
    big.write_bytes(b"word " * 300_000)  # 1.5 MB > the 1 MB limit of the test config
    # the server refuses an oversized upload before it is stored, whatever the client does
    with httpx.Client() as http:
        r = http.post(f"{hark_app.url}gradio_api/upload", files={"files": ("big.txt", big.read_bytes())})
    assert r.status_code == 413 and "maximum allowed size" in r.text
    with pytest.raises(ValueError, match="exceeds the maximum file size"):
        client.predict([handle_file(str(big))], api_name="/upload")

    report, table, _pick = client.predict([handle_file(str(hostile))], api_name="/upload")
    lib = hark_app.library_dir
    saved = sorted(p.name for p in lib.iterdir())
    assert len(saved) == 1 and all(ch.isalnum() or ch in "._ -" for ch in saved[0]), saved
    assert "touch" in saved[0] and "notes" in saved[0]
    assert not (Path.cwd() / "pwned").exists() and not (tmp_path / "pwned").exists()
    assert "Indexed 1 of 1 files" in report
    rows = table["data"] if isinstance(table, dict) else table
    assert any(r[0] == saved[0] and int(r[1]) >= 1 for r in rows)
    messages, *_ = client.predict("Where is the spare key of the shed?", api_name="/ask")
    assert "blue flower pot" in _last(messages, "assistant")
    # the upload exists only inside the library folder, and no temporary copy is left behind
    copies = [Path(d) / f for d, _, fs in os.walk(hark_app.base_dir) for f in fs if "notes" in f]
    assert copies == [lib / saved[0]]
    assert not any(p.name.startswith(".upload-") for p in lib.iterdir())

    too_many = [tmp_path / f"n{i}.txt" for i in range(6)]
    for p in too_many:
        p.write_text("x y z")
    report, *_ = client.predict([handle_file(str(p)) for p in too_many], api_name="/upload")
    assert "Too many files: 6" in report and "limit is 5" in report
    assert sorted(p.name for p in lib.iterdir()) == saved
