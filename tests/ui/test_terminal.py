"""The terminal front ends on a real tiny library: `ask --json` through a real subprocess of
launch.py, `ask` as text, and the chat loop with its commands and the typing fallback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
import yaml

from assistant.assistant import Assistant
from tests.assistant.turn_fixtures import build_library, make_config, shared_classifier
from tests.conftest import ROOT
from ui.terminal import Chat, run_ask


@pytest.fixture(scope="module")
def library(tmp_path_factory, minilm):
    return build_library(tmp_path_factory, minilm)


def _has_microphone() -> bool:
    from ui.recorder import RecorderError, input_device

    try:
        input_device()
        return True
    except RecorderError:
        return False


@pytest.mark.slow
def test_ask_json_through_a_real_subprocess(tmp_path, library):
    raw = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    raw["embedder"]["backend"] = "minilm"
    raw["store"]["uri"] = library.uri
    raw["intent"]["adapter_dir"] = str(ROOT / "models" / "intent_adapter")
    cfg_file = tmp_path / "config.yaml"
    cfg_file.write_text(yaml.safe_dump(raw), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(HF_HUB_OFFLINE="1", OMP_WAIT_POLICY="PASSIVE")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "launch.py"), "ask", "How often should I check the brake pads?", "--json",
         "--config", str(cfg_file)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)  # exactly one JSON object on stdout
    assert {"answer", "intent", "sources", "provider", "timings_ms"} <= set(out)
    assert out["intent"] == "rag_search" and out["provider"] == "extractive"
    assert "500 kilometres" in out["answer"]
    assert out["sources"][0]["source_path"] == "bicycle.md"
    for s in out["sources"]:
        assert {"source_path", "chunk_id", "score"} <= set(s) and isinstance(s["score"], float)
    assert [c["source_path"] for c in out["cited"]] == ["bicycle.md"]
    cited = out["cited"][0]  # the passage's character span in the file
    assert cited["span_in"] == "file" and cited["page"] is None
    text = (library.root / "bicycle.md").read_text(encoding="utf-8")
    assert "500 kilometres" in text[cited["char_start"] : cited["char_end"]]
    assert out["timings_ms"]["total"] > 0 and "retrieve" in out["timings_ms"]
    trace = (tmp_path / "data" / "traces.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(trace) == 1 and json.loads(trace[0])["intent"]["label"] == "rag_search"


def test_ask_prints_the_answer_and_its_sources(tmp_path, library):
    cfg = make_config(tmp_path, library)
    a = Assistant(cfg, embedder=library.embedder, store=library.store, classifier=shared_classifier())
    out = io.StringIO()
    assert run_ask(cfg, "How much is the pet deposit for a dog?", out=out, assistant=a) == 0
    text = out.getvalue()
    assert "300 euros" in text and "[1] Rental agreement for Flat 4B (lease.md)" in text


def test_chat_commands_answers_and_typing_fallback(tmp_path, library, capsys):
    cfg = make_config(tmp_path, library)
    a = Assistant(cfg, embedder=library.embedder, store=library.store, classifier=shared_classifier())
    lines = iter([
        "hello", "/memory buffer", "/web on", "/web off", "How much is the monthly rent?",
        "what about dogs?", "What was my first question?", "/memory nonsense", "/bogus", "/quit", "never read",
    ])  # fmt: skip
    prompts: list[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        return next(lines)

    out, err = io.StringIO(), io.StringIO()
    chat = Chat(cfg, True, out, err, read=read, assistant=a)
    assert chat.run() == 0
    o, e = out.getvalue(), err.getvalue()
    if _has_microphone():
        assert chat.voice and prompts[0].strip().endswith("(Enter to talk)>")
    else:  # no microphone: a clear message, and the chat goes on by typing
        assert not chat.voice and "No microphone found" in e and "type your questions" in e
    assert "Hello! I'm Hark" in o
    assert "memory: buffer" in o and "always web search: on" in o and "always web search: off" in o
    assert "950 euros" in o and "[1] Rental agreement for Flat 4B (lease.md)" in o
    assert "(searching for:" in e  # the follow-up was rewritten
    assert 'Your first question was: "hello"' in o
    assert (
        "memory strategies: window, buffer, summary, none (now buffer)" in o and "unknown command /bogus" in o
    )
    s = chat.session
    assert s.memory_strategy == "buffer" and not s.always_web_search
    assert s.memory.questions == [
        "hello",
        "How much is the monthly rent?",
        "what about dogs?",
        "What was my first question?",
    ]


def test_chat_ends_on_end_of_input(tmp_path, library):
    cfg = make_config(tmp_path, library)

    def read(prompt: str) -> str:
        raise EOFError

    a = Assistant(cfg, embedder=library.embedder, store=library.store, classifier=shared_classifier())
    assert Chat(cfg, False, io.StringIO(), io.StringIO(), read=read, assistant=a).run() == 0


def test_chat_speaks_the_first_sentence_before_the_answer_has_finished(hark_config, monkeypatch):
    """Spoken answers in the terminal: a real eSpeak NG synthesiser; playback is recorded instead of
    sent to a sound card (this machine has none). The first sentence must play while the answer is
    still streaming."""
    import threading

    import ui.recorder
    from assistant.events import Answer, Done, Token
    from models.tts import Synthesiser

    consumed: list[int] = []
    played: list[tuple[int, int]] = []  # (tokens consumed when the clip played, samples)
    more = threading.Event()

    def events():
        tokens = ["The notice period ", "is two months. ", "Rent is due ", "on the first ", "working day."]
        for i, t in enumerate(tokens, 1):
            consumed.append(i)
            yield Token(t)
            if i == 2:  # hold the stream until the first sentence has been spoken
                assert more.wait(60), "the first sentence was not spoken while the answer streamed"
        yield Done(Answer(text="".join(tokens), provider="extractive"), trace={})

    def play(rate, samples):
        played.append((len(consumed), len(samples)))
        more.set()

    monkeypatch.setattr(ui.recorder, "play", play)
    assistant = Assistant(hark_config, synthesiser=Synthesiser(hark_config.tts))
    chat = Chat(hark_config, voice=False, out=io.StringIO(), err=io.StringIO(), assistant=assistant)
    seen = list(chat._speaking(events()))
    assert isinstance(seen[-1], Done) and len(seen) == 6  # every event passes through unchanged
    assert len(played) == 2  # two sentences, two clips
    assert played[0][0] == 2 and played[0][1] > 1000  # spoken after 2 of 5 tokens, real audio


def test_ask_after_a_change_of_embedder_embeds_the_library_again_first(tmp_path, library, capsys):
    from knowledge.ingest import Ingestor
    from knowledge.settings import IngestSettings, StoreSettings
    from knowledge.store import ChunkStore
    from tests.knowledge.test_reindex import _Renamed

    uri = str(tmp_path / "lancedb")
    old = ChunkStore.open(uri, "old-model", library.embedder.dim, StoreSettings())
    Ingestor(old, _Renamed(library.embedder, "old-model"), IngestSettings()).ingest([library.root])
    new = ChunkStore.open(uri, library.embedder.identity, library.embedder.dim, StoreSettings())
    cfg = make_config(tmp_path, store__uri=uri)
    a = Assistant(cfg, embedder=library.embedder, store=new, classifier=shared_classifier())
    out = io.StringIO()
    assert run_ask(cfg, "How much is the pet deposit for a dog?", out=out, assistant=a) == 0
    assert "300 euros" in out.getvalue()
    err = capsys.readouterr().err
    assert "indexed with another embedder" in err and library.embedder.identity in err
    assert new.count() == old.count() and {d.source_path for d in new.documents()} == {
        d.source_path for d in old.documents()
    }
