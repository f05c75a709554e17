"""One chat turn in the browser: `Assistant.respond` events → what the Gradio components show.

`ChatState` is the per-browser-tab value kept in `gr.State`: the assistant `Session` (memory and
switches), the rendered messages and, for each answer, its sources panel and rerank picture.
`TurnView` folds the events of one turn into those views; it decides nothing about the answer.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from assistant.events import (
    Answer,
    AudioInput,
    Done,
    IntentEvent,
    Notice,
    Restart,
    Rewritten,
    Sources,
    Token,
    Transcript,
)
from knowledge.types import Hit
from models.runtime.errors import HarkError
from ui.render import link_citations, meta_markdown, numbered_sources, sources_html
from ui.rerank_chart import rerank_summary, rerank_svg
from ui.speaker import SpeechQueue
from ui.voice import VoiceState, now_ms

log = logging.getLogger(__name__)

THINKING = "…"
LISTENING = "🎙️ (transcribing…)"
NOT_HEARD = "🎙️ (no speech recognised)"
# streamed tokens reach the page at most this often (every other event at once): one update per
# token (40 a second from a local model) kept the server's diffing and the page's Markdown
# rendering busy beside the speech synthesis
TOKEN_UPDATE_S = 0.08


@dataclass
class TurnView:
    """The rendered evidence of one answer."""

    number: int
    sources: str = ""
    rerank: str = ""
    meta: str = ""
    numbered: list[Hit] = field(default_factory=list)  # the panel's sources: [n] is numbered[n - 1]
    kind: str = "documents"
    question: str = ""  # as typed, or as transcribed
    answer: Answer | None = None  # the final answer, once the turn is done

    def source(self, n: int) -> Hit | None:
        return self.numbered[n - 1] if 1 <= n <= len(self.numbered) else None


@dataclass
class ChatState:
    """Everything one browser tab owns. Created lazily by the first event of the tab."""

    session: Any  # assistant.session.Session
    messages: list[dict[str, Any]] = field(default_factory=list)  # what the Chatbot shows
    message_turns: list[int] = field(default_factory=list)  # the turn number of each message
    turns: list[TurnView] = field(default_factory=list)
    cancel: threading.Event | None = None
    speech: SpeechQueue = field(default_factory=SpeechQueue)  # sentences of the running answer
    voice: VoiceState = field(default_factory=VoiceState)  # the microphone side (ui/voice.py)

    def stop(self) -> bool:
        """Cancel the running answer, if any."""
        stopped = False
        if self.cancel is not None and not self.cancel.is_set():
            self.cancel.set()
            stopped = True
        cancel_session = getattr(self.session, "cancel", None)
        if callable(cancel_session):
            stopped = bool(cancel_session()) or stopped
        return stopped

    def turn_view(self, index: int | None) -> TurnView | None:
        """The view of the answer at chat message `index` (None → the latest answer)."""
        if not self.turns:
            return None
        if index is None or not 0 <= index < len(self.message_turns):
            return self.turns[-1]
        # a user message belongs to the answer that follows it: same turn number
        number = self.message_turns[index]
        return next((t for t in self.turns if t.number == number), self.turns[-1])


def evidence_html(view: TurnView | None) -> str:
    """Rerank picture and sources of one answer, for the evidence column."""
    if view is None:
        return '<div class="hark-sources empty">Sources and the rerank picture appear here after an answer.</div>'
    return view.rerank + view.sources


@dataclass
class _Turn:
    """Mutable state of the running turn."""

    view: TurnView
    user_msg: dict[str, Any]
    answer_msg: dict[str, Any]
    text: str = ""
    intent: IntentEvent | None = None
    rewritten: Rewritten | None = None
    hits: list[Hit] = field(default_factory=list)
    candidates: list[Hit] = field(default_factory=list)
    kind: str = "documents"
    notices: list[str] = field(default_factory=list)
    marks: dict[str, Any] = field(default_factory=dict)  # when its stages happened (VoiceState.marks)

    def meta(self) -> str:
        line = meta_markdown(self.intent, self.rewritten)
        notes = " · ".join(self.notices)
        return " · ".join(p for p in (line, notes) if p)


NO_SOURCES = '<div class="hark-sources empty">No sources: your documents do not hold this answer.</div>'


def _render_evidence(turn: _Turn, answer: Answer | None) -> None:
    cited = answer.cited if answer is not None else []
    n = turn.view.number
    turn.view.kind = turn.kind
    if answer is not None and answer.not_known:  # nothing supports a "not known": no list to mislead
        turn.view.sources, turn.view.rerank, turn.view.numbered = NO_SOURCES, "", []
        return
    turn.view.numbered = numbered_sources(turn.hits, cited)
    turn.view.sources = sources_html(turn.hits, n, cited=cited, kind=turn.kind)
    if turn.kind == "documents" and turn.hits:
        svg = rerank_svg(turn.candidates or turn.hits, turn.hits, cited)
        summary = rerank_summary(turn.candidates or turn.hits, turn.hits, cited)
        turn.view.rerank = (
            f'<div class="hark-rerank-box"><h4>Rerank for answer {n}</h4>{svg}'
            f'<div class="hark-rerank-note">{summary}</div></div>'
        )
    else:
        turn.view.rerank = ""


def run_turn(
    respond: Callable[..., Iterator[Any]],
    state: ChatState,
    user_input: str | AudioInput,
    on_answer_text: Callable[[str], None] | None = None,
    on_answer_end: Callable[[], None] | None = None,
) -> Iterator[ChatState]:
    """Drive one turn, yielding the state after each event that changes what is shown.

    `on_answer_text` receives each streamed piece of answer text (used to speak sentences), on the
    turn's own thread as it comes (`_produce`), whatever the page's pace; `on_answer_end` is called
    there when the turn has no more (its last sentence is complete).
    """
    number = len(state.turns) + 1
    shown = user_input if isinstance(user_input, str) else LISTENING
    turn = _Turn(
        view=TurnView(number=number, question=user_input if isinstance(user_input, str) else ""),
        user_msg={"role": "user", "content": shown},
        answer_msg={"role": "assistant", "content": THINKING},
    )
    marks = state.voice.marks
    if "turn" in marks:  # not a spoken turn's release: the marks of this turn start here
        marks = state.voice.marks = {}
    marks["turn"] = now_ms()
    turn.marks = state.speech.marks = marks
    state.turns.append(turn.view)
    state.messages += [turn.user_msg, turn.answer_msg]
    state.message_turns += [number, number]
    cancel = threading.Event()
    state.cancel = cancel
    events: queue.Queue[Any] = queue.Queue()
    producer = threading.Thread(
        target=contextvars.copy_context().run,
        args=(_produce, respond, state.session, user_input, cancel, events, marks, on_answer_text, on_answer_end),
        name="hark-turn",
        daemon=True,
    )
    producer.start()  # the turn starts before the page has its first view
    failed = finished = False
    shown_at: float | None = None  # when streamed text was last shown
    held = False  # tokens not shown yet
    try:
        yield state
        while True:
            wait = max(0.0, shown_at + TOKEN_UPDATE_S - time.monotonic()) if held and shown_at is not None else None
            try:
                event = events.get(timeout=wait)
            except queue.Empty:  # the held tokens' time has come (the stream may have paused)
                turn.view.meta = turn.meta()
                held, shown_at = False, time.monotonic()
                yield state
                continue
            if event is _END:
                finished = True
                break
            if isinstance(event, _Raised):
                raise event.error
            if not _apply(turn, event):
                continue
            now = time.monotonic()
            if isinstance(event, Token) and shown_at is not None and now - shown_at < TOKEN_UPDATE_S:
                held = True
                continue
            shown_at = now if isinstance(event, Token) else None  # after a restart: at once
            turn.view.meta = turn.meta()
            held = False
            yield state
    except HarkError as exc:
        _fail(turn, exc.message + (f" ({exc.hint})" if exc.hint else ""))
        failed = True
    except Exception:  # noqa: BLE001 - a turn that breaks shows a message, never a traceback
        log.exception("turn %d failed", number)
        _fail(turn, "Something went wrong while answering. Please try again.")
        failed = True
    finally:
        settled = _settle(turn, user_input, cancel)
        if state.cancel is cancel:
            state.cancel = None
        if not finished:  # nobody shows the rest (the page went away, or the turn failed): stop it
            cancel.set()
    if failed or settled or held:
        turn.view.meta = turn.meta()
        yield state  # the last view never leaves a placeholder ("transcribing…", "…") or a held token behind


@dataclass(frozen=True)
class _Raised:
    error: BaseException


_END = object()


def _produce(
    respond: Callable[..., Iterator[Any]],
    session: Any,
    user_input: str | AudioInput,
    cancel: threading.Event,
    events: queue.Queue[Any],
    marks: dict[str, Any],
    on_answer_text: Callable[[str], None] | None,
    on_answer_end: Callable[[], None] | None = None,
) -> None:
    """Run the turn on a thread of its own, handing its events to the page's generator, and the
    answer's text to `on_answer_text` the moment it comes: the speech never waits for the page to
    take the previous view (Gradio processes one yielded view before it asks for the next)."""
    spoken = False  # answer text since the last restart
    try:
        for event in respond(session, user_input, cancel=cancel):
            _mark(marks, event)
            if on_answer_text is not None:
                if isinstance(event, Token):
                    on_answer_text(event.text)
                    spoken = spoken or bool(event.text.strip())
                elif isinstance(event, Restart):
                    spoken = False
                elif isinstance(event, Done) and event.answer.text.strip() and not spoken:
                    on_answer_text(event.answer.text)  # answers that arrive whole (no tokens) are spoken too
            events.put(event)
    except BaseException as exc:  # noqa: BLE001 - raised again in the page's generator
        events.put(_Raised(exc))
    finally:
        try:
            if on_answer_end is not None:
                on_answer_end()
        finally:
            events.put(_END)


def _settle(turn: _Turn, user_input: str | AudioInput, cancel: threading.Event) -> bool:
    """Replace placeholders left by a turn that ended without them being filled; True if changed."""
    changed = False
    if cancel.is_set() and turn.answer_msg["content"] in (THINKING, ""):
        turn.answer_msg["content"] = "_(stopped)_"
        changed = True
    if isinstance(user_input, AudioInput) and turn.user_msg["content"] == LISTENING:
        turn.user_msg["content"] = NOT_HEARD
        changed = True
    return changed


def _fail(turn: _Turn, message: str) -> None:
    text = turn.text.strip()
    turn.answer_msg["content"] = (text + "\n\n" if text else "") + f"⚠️ {message}"


_MARKS = {Transcript: "transcript", Sources: "sources", Token: "first_token"}


def _mark(marks: dict[str, Any], event: Any) -> None:
    """When the turn reached each stage (the event's arrival, not its view), and from its trace
    whether the early search was taken, its timings, and whether it was run ahead and adopted
    (`ui.voice.VoiceState.marks`, read by bench.voice)."""
    name = _MARKS.get(type(event))
    if name is not None:
        marks.setdefault(name, now_ms())
    if isinstance(event, Done) and isinstance(event.trace, dict) and event.trace:
        trace = event.trace
        if "prefetched" in trace:
            marks.update(prefetched=trace["prefetched"], timings_ms=trace.get("timings_ms", {}))
        marks["ahead"] = bool(trace.get("ahead", False))


def _apply(turn: _Turn, event: Any) -> bool:
    """Fold one event into the turn; True when something visible changed."""
    if isinstance(event, Transcript):
        turn.user_msg["content"] = f"🎙️ {event.text}"
        turn.view.question = event.text
    elif isinstance(event, IntentEvent):
        turn.intent = event
    elif isinstance(event, Rewritten):
        turn.rewritten = event
    elif isinstance(event, Sources):
        turn.hits, turn.candidates, turn.kind = list(event.hits), list(event.candidates), event.kind
        _render_evidence(turn, None)
    elif isinstance(event, Token):
        turn.text += event.text
        turn.answer_msg["content"] = turn.text
    elif isinstance(event, Notice):
        if isinstance(event, Restart):  # a provider broke mid-answer: the partial text is void
            turn.text = ""
            turn.answer_msg["content"] = ""
        icon = {"warning": "⚠️", "error": "⛔"}.get(event.level, "ℹ️")
        turn.notices.append(f"{icon} {event.text}")
    elif isinstance(event, Done):
        answer = event.answer
        turn.view.answer = answer
        if turn.hits or answer.cited or answer.not_known:
            _render_evidence(turn, answer)
        turn.answer_msg["content"] = link_citations(answer.text, turn.view.number, len(answer.cited))
    else:
        return False
    return True
