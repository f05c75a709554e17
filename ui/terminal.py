"""The terminal front ends: `ask` (one turn) and `chat` (a conversation), on `Assistant.respond`.

Both render the same events as the Gradio app; there is no logic here beyond rendering and input.
`ask --json` prints one JSON object: answer, intent, sources (source_path, chunk_id, score, …),
provider, timings_ms, plus cited sources (with the page and character span of each passage), the
rewritten query and notices.
"""

from __future__ import annotations

import json
import logging
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from assistant.assistant import Assistant
from assistant.config import HarkConfig
from assistant.events import (
    Answer,
    AudioInput,
    Done,
    Event,
    IntentEvent,
    Notice,
    Restart,
    Rewritten,
    Sources,
    Token,
    Transcript,
)
from assistant.memory import STRATEGIES
from assistant.session import Session
from knowledge.citations import quoted
from knowledge.types import Hit
from models.runtime.errors import HarkError

log = logging.getLogger(__name__)

HELP = """Commands:
  /web on|off        always search the web for this session
  /memory STRATEGY   window | buffer | summary | none
  /speak on|off      read answers aloud
  /reasoning NAME    reasoning strategy (named in assistant/prompts/reasoning.yaml)
  /profile NAME      prompt profile
  /reset             forget this conversation
  /status            models, providers and the library
  /quit              leave (or Ctrl-D)
Ctrl-C while an answer is coming stops it."""


@dataclass
class TurnResult:
    """What a turn produced, collected from its events."""

    answer: Answer | None = None
    trace: dict[str, Any] = field(default_factory=dict)
    intent: IntentEvent | None = None
    transcript: str = ""
    rewritten: str = ""
    hits: list[Hit] = field(default_factory=list)
    source_kind: str = "documents"
    notices: list[Notice] = field(default_factory=list)
    streamed: str = ""


def _hit_json(h: Hit, rank: int) -> dict[str, Any]:
    return {
        "rank": rank,
        "source_path": h.source_path,
        "chunk_id": h.chunk_id,
        "score": None if h.score is None else round(float(h.score), 6),
        "title": h.title,
        "pages": list(h.pages),
        "section": h.section,
    }


def _location_json(assistant: Assistant, hit: Hit, quote: str = "") -> dict[str, Any]:
    """`page`, `char_start`, `char_end` of a cited passage (of the sentences the answer quotes from
    it, `quote`, where they are found) and what the span counts in (`span_in`: "pdf_page" — the
    page's text as pypdfium2 reads it —, "file" — the text file —, or null)."""
    try:
        _path, loc = assistant.locate_source(hit, quote)
    except Exception as exc:  # noqa: BLE001 - the answer is printed without the location
        log.warning("could not locate %s: %s", hit.source_path, exc)
        return {"page": min(hit.pages) if hit.pages else None, "char_start": None, "char_end": None, "span_in": None}
    where = loc.to_json()
    return {
        "page": where["page"],
        "char_start": where["char_start"],
        "char_end": where["char_end"],
        "span_in": {"pdf": "pdf_page", "text": "file"}.get(loc.kind) if loc.found else None,
    }


def result_json(r: TurnResult) -> dict[str, Any]:
    a = r.answer
    return {
        "answer": a.text if a else "",
        "intent": r.intent.label if r.intent else None,
        "intent_confidence": round(r.intent.confidence, 4) if r.intent else None,
        "intent_source": r.intent.source if r.intent else None,
        "rewritten_query": r.rewritten or None,
        "source_kind": r.source_kind,
        "sources": [_hit_json(h, i) for i, h in enumerate(r.hits, 1)],
        "cited": [_hit_json(h, i) for i, h in enumerate(a.cited if a else [], 1)],
        "provider": a.provider if a else None,
        "not_known": bool(a.not_known) if a else True,
        "timings_ms": r.trace.get("timings_ms", {}),
        "notices": [n.text for n in r.notices],
    }


class Renderer:
    """Prints events as they arrive (chat) or stays quiet and only collects (ask)."""

    def __init__(self, out: TextIO, err: TextIO, live: bool) -> None:
        self.out, self.err, self.live = out, err, live

    def consume(self, events: Any) -> TurnResult:
        r = TurnResult()
        for ev in events:
            self.render(ev, r)
        if self.live and r.answer is not None:
            final = r.answer.text.strip()
            if final and final != r.streamed.strip():
                # the authoritative text differs from the stream (restart, cot/react, cancel)
                self.out.write(("\n" if r.streamed else "") + final)
            self.out.write("\n")
            self._sources(r)
            self.out.flush()
        return r

    def render(self, ev: Event, r: TurnResult) -> None:
        if isinstance(ev, Transcript):
            r.transcript = ev.text
            self._say(f'(heard: "{ev.text}")\n', self.out)
        elif isinstance(ev, IntentEvent):
            r.intent = ev
        elif isinstance(ev, Rewritten):
            r.rewritten = ev.query
            self._say(f"(searching for: {ev.query})\n", self.err)
        elif isinstance(ev, Sources):
            r.hits, r.source_kind = list(ev.hits), ev.kind
        elif isinstance(ev, Token):
            r.streamed += ev.text
            self._say(ev.text, self.out)
        elif isinstance(ev, Notice):
            if isinstance(ev, Restart):  # the partial answer is void; a new one follows
                r.streamed = ""
                self._say("\n", self.out)
            r.notices.append(ev)
            self.err.write(f"[{ev.level}] {ev.text}\n" if self.live else f"hark: {ev.text}\n")
            self.err.flush()
        elif isinstance(ev, Done):
            r.answer, r.trace = ev.answer, ev.trace

    def _sources(self, r: TurnResult) -> None:
        cited = r.answer.cited if r.answer else []
        for i, h in enumerate(cited, 1):
            where = f", {h.page_label}" if h.page_label else ""
            self.out.write(f"  [{i}] {h.title or h.source_path} ({h.source_path}{where})\n")

    def _say(self, text: str, stream: TextIO) -> None:
        if self.live and text:
            stream.write(text)
            stream.flush()


# ---- ask ----------------------------------------------------------------------------------------------
def run_ask(
    cfg: HarkConfig,
    question: str,
    as_json: bool = False,
    *,
    out: TextIO | None = None,
    assistant: Assistant | None = None,
) -> int:
    """One turn with a fresh session. Exit code 0 when an answer was produced."""
    out = out or sys.stdout
    assistant = assistant or Assistant(cfg)
    reindex_first(cfg, assistant, sys.stderr)
    session = assistant.new_session()
    r = Renderer(out, sys.stderr, live=False).consume(assistant.respond(session, question))
    if as_json:
        data = result_json(r)
        text = r.answer.text if r.answer and not r.answer.not_known else ""
        for n, (entry, hit) in enumerate(zip(data["cited"], r.answer.cited if r.answer else [], strict=True), 1):
            entry.update(_location_json(assistant, hit, quoted(text, n)))
        out.write(json.dumps(data, ensure_ascii=False) + "\n")
    else:
        out.write((r.answer.text if r.answer else "") + "\n")
        Renderer(out, sys.stderr, live=True)._sources(r)
    out.flush()
    return 0 if r.answer is not None else 1


def reindex_first(cfg: HarkConfig, assistant: Assistant, err: TextIO) -> None:
    """After a change of embedder, embed the library again before the first answer (said on stderr)."""
    if not cfg.ingest.auto_reindex:
        return
    from ui.cli_ingest import format_report

    done = assistant.reindex_previous()
    if done is not None:
        what, report = done
        err.write(f"note: {what}\n{format_report(report)}\n")


# ---- chat ---------------------------------------------------------------------------------------------
def _threaded(assistant: Assistant, session: Session, user_input: str | AudioInput, cancel: threading.Event):
    """Run the turn in a worker so Ctrl-C in the main thread can cancel it cleanly."""
    q: queue.SimpleQueue = queue.SimpleQueue()
    end = object()

    def work() -> None:
        try:
            for ev in assistant.respond(session, user_input, cancel):
                q.put(ev)
        finally:
            q.put(end)

    threading.Thread(target=work, name="hark-turn", daemon=True).start()
    while True:
        try:
            item = q.get(timeout=0.2)
        except queue.Empty:
            continue
        except KeyboardInterrupt:
            cancel.set()
            continue
        if item is end:
            return
        yield item


class Chat:
    """The terminal conversation loop (typing, or push-to-talk with `voice`)."""

    def __init__(
        self,
        cfg: HarkConfig,
        voice: bool,
        out: TextIO,
        err: TextIO,
        read: Callable[[str], str] = input,
        assistant: Assistant | None = None,
    ) -> None:
        self.cfg, self.out, self.err, self.read = cfg, out, err, read
        self.assistant = assistant or Assistant(cfg)
        reindex_first(cfg, self.assistant, err)
        self.session = self.assistant.new_session()
        self.voice = voice and self._microphone_ok()
        self.renderer = Renderer(out, err, live=True)

    def _microphone_ok(self) -> bool:
        from ui.recorder import RecorderError, input_device

        try:
            input_device()
            return True
        except RecorderError as exc:
            self.err.write(f"{exc.message} {exc.hint}\nVoice input is off; type your questions.\n")
            return False

    def run(self) -> int:
        self.out.write("Hark — ask about your documents. /help for commands, /quit to leave.\n")
        st = self.assistant.status()
        if st.get("warning"):
            self.err.write(f"warning: {st['warning']}\n")
        while True:
            try:
                line = self.read("\nyou (Enter to talk)> " if self.voice else "\nyou> ")
            except EOFError:
                self.out.write("\n")
                return 0
            except KeyboardInterrupt:
                self.out.write("\n")
                return 0
            line = line.strip()
            if line.startswith("/"):
                if self._command(line) is False:
                    return 0
                continue
            user_input: str | AudioInput | None = line
            if not line:
                if not self.voice:
                    continue
                user_input = self._record()
                if user_input is None:
                    continue
            self.out.write("hark> ")
            events = _threaded(self.assistant, self.session, user_input, threading.Event())
            if self.session.speak_answers:
                events = self._speaking(events)
            self.renderer.consume(events)

    def _record(self) -> AudioInput | None:
        from ui.recorder import RecorderError, record_until_enter

        prompts = iter([None])

        def wait(msg: str) -> object:
            if next(prompts, "second") is None:  # Enter was already pressed at the prompt
                self.out.write("Listening… ")
                return None
            return self.read("(press Enter to stop) ")

        try:
            rate, samples = record_until_enter(max_seconds=self.cfg.speech.max_seconds, wait=wait)
        except RecorderError as exc:
            self.err.write(f"{exc.message} {exc.hint}\n")
            self.voice = False
            return None
        return AudioInput(samples=samples, sample_rate=rate)

    def _speaking(self, events: Iterator[Event]) -> Iterator[Event]:
        """Pass the events through while a worker speaks the answer sentence by sentence as it
        streams: the first sentence plays before the answer has finished."""
        texts: queue.SimpleQueue[str | None] = queue.SimpleQueue()

        def tokens() -> Iterator[str]:
            while (text := texts.get()) is not None:
                yield text

        worker = threading.Thread(target=self._speak, args=(tokens(),), name="hark-speak", daemon=True)
        worker.start()
        streamed = False
        try:
            for ev in events:
                if isinstance(ev, Token):
                    texts.put(ev.text)
                    streamed = True
                elif isinstance(ev, Done) and not streamed and ev.answer.text.strip():
                    texts.put(ev.answer.text)  # answers that arrive whole are spoken too
                yield ev
        finally:
            texts.put(None)
            worker.join()

    def _speak(self, tokens: Iterator[str]) -> None:
        from assistant.speak import speak_stream
        from ui.recorder import RecorderError, play

        try:
            synth = self.assistant.synthesiser()
            for rate, samples in speak_stream(tokens, synth):
                play(rate, samples)
        except (HarkError, RecorderError) as exc:
            self.err.write(f"Spoken answers are off: {exc.message}\n")
            self.session.speak_answers = False
            for _ in tokens:  # drain, so the producer's end marker is consumed
                pass

    def _command(self, line: str) -> bool:
        cmd, _, arg = line[1:].partition(" ")
        cmd, arg = cmd.lower(), arg.strip().lower()
        on = arg in ("on", "yes", "true", "1")
        s = self.session
        if cmd in ("quit", "exit", "q"):
            return False
        if cmd == "help":
            self.out.write(HELP + "\n")
        elif cmd == "web":
            s.always_web_search = on
            self.out.write(f"always web search: {'on' if on else 'off'}\n")
        elif cmd == "speak":
            s.speak_answers = on
            self.out.write(f"spoken answers: {'on' if on else 'off'}\n")
        elif cmd == "memory":
            if arg not in STRATEGIES:
                self.out.write(f"memory strategies: {', '.join(STRATEGIES)} (now {s.memory_strategy})\n")
            else:
                s.memory_strategy = arg  # type: ignore[assignment]
                self.out.write(f"memory: {arg}\n")
        elif cmd == "reasoning" and arg:
            s.reasoning = arg
            self.out.write(f"reasoning: {arg}\n")
        elif cmd == "profile" and arg:
            s.profile = arg
            self.out.write(f"profile: {arg}\n")
        elif cmd == "reset":
            s.reset()
            self.out.write("conversation forgotten\n")
        elif cmd == "status":
            self.out.write(json.dumps(self.assistant.status(), indent=2, default=str) + "\n")
        else:
            self.out.write(f"unknown command /{cmd}; /help lists them\n")
        return True


def run_chat(cfg: HarkConfig, voice: bool = False) -> int:
    return Chat(cfg, voice, sys.stdout, sys.stderr).run()
