"""ui/chat.py folds Assistant events into what one browser tab shows."""

from __future__ import annotations

from assistant.events import Answer, Done, Notice, Restart, Token
from ui.chat import ChatState, run_turn


def _respond(events):
    def respond(session, user_input, cancel=None):
        yield from events

    return respond


def test_restart_discards_the_partial_answer_of_a_broken_provider():
    events = [
        Token("The notice period is"),
        Token(" two mon"),
        Restart("The first provider dropped mid-answer; answering again with the next one."),
        Token("Two months [1]."),
        Done(Answer(text="Two months [1].", provider="groq"), trace={}),
    ]
    state = ChatState(session=object())
    shown = []
    for st in run_turn(_respond(events), state, "notice period?"):
        shown.append(st.messages[-1]["content"])
    # right after the restart, nothing of the void partial answer is left on screen
    restart_at = shown.index("")
    assert shown[restart_at - 1].startswith("The notice period is")
    assert shown[restart_at + 1] == "Two months [1]."
    assert "two mon" not in state.messages[-1]["content"]
    assert state.messages[-1]["content"].startswith("Two months")


def test_tokens_streamed_faster_than_the_page_needs_are_shown_together_and_none_is_lost():
    import time

    from ui.chat import TOKEN_UPDATE_S

    words = [f" w{i}" for i in range(40)]

    def respond(session, user_input, cancel=None):
        for w in words:  # 40 tokens a second, a local model's pace
            time.sleep(0.025)
            yield Token(w)

    state = ChatState(session=object())
    shown = [st.messages[-1]["content"] for st in run_turn(respond, state, "q")]
    texts = [t for t in shown if t.startswith(" w")]
    assert texts[0] == " w0"  # the first token at once
    assert texts[-1] == "".join(words)  # the last view holds every token, though no Done came
    assert len(texts) < len(words) / 2  # one view per ~TOKEN_UPDATE_S, not one per token
    assert len(texts) >= len(words) * 0.025 / TOKEN_UPDATE_S / 2  # but the text keeps moving


def test_slow_tokens_are_each_shown_when_they_come():
    import time

    from ui.chat import TOKEN_UPDATE_S

    def respond(session, user_input, cancel=None):
        for w in ("One", " two", " three."):
            yield Token(w)
            time.sleep(TOKEN_UPDATE_S * 1.5)

    state = ChatState(session=object())
    shown = [st.messages[-1]["content"] for st in run_turn(respond, state, "q")]
    assert [t for t in shown if t[:1] == "O"] == ["One", "One two", "One two three."]


def test_plain_notice_keeps_the_streamed_text():
    events = [Token("Partial"), Notice("web search unavailable", "warning"), Token(" answer.")]
    events.append(Done(Answer(text="Partial answer.", provider="extractive"), trace={}))
    state = ChatState(session=object())
    list(run_turn(_respond(events), state, "q"))
    assert state.messages[-1]["content"] == "Partial answer."


def _hit(i: int):
    from knowledge.types import Hit

    return Hit(f"c{i}", f"doc{i}.pdf", f"Doc {i}", f"text {i}", score=0.5, pages=[i])


def _sources(hits):
    from assistant.events import Sources
    from knowledge.types import Retrieval

    return Sources(Retrieval("q", hits, hits, relevant=True))


def test_a_not_known_answer_shows_no_source_list():
    from assistant.events import NOT_KNOWN

    hits = [_hit(1), _hit(2)]
    events = [_sources(hits), Done(Answer(text=NOT_KNOWN, provider="extractive", not_known=True), trace={})]
    state = ChatState(session=object())
    list(run_turn(_respond(events), state, "q"))
    view = state.turns[-1]
    assert "doc1.pdf" not in view.sources and "No sources" in view.sources
    assert view.rerank == "" and view.source(1) is None


def test_sources_are_numbered_as_in_the_panel():
    hits = [_hit(i) for i in range(1, 9)]
    events = [
        _sources(hits),
        Done(Answer(text="x [1] [2]", provider="extractive", cited=[hits[3], hits[0]]), trace={}),
    ]
    state = ChatState(session=object())
    list(run_turn(_respond(events), state, "q"))
    view = state.turns[-1]
    assert [view.source(n).chunk_id for n in (1, 2, 3)] == ["c4", "c1", "c2"]
    assert 'id="hark-src-1-3"' in view.sources and "doc2.pdf" in view.sources.split('id="hark-src-1-3"')[1]
    assert view.source(8) is None  # five others at most, as the panel shows


def test_a_recording_that_was_not_heard_never_keeps_the_transcribing_bubble():
    """The turn of a too-short clip ends with a notice and the "didn't catch" answer and no
    transcript: the last view shown must not still say "transcribing…"."""
    from assistant.events import AudioInput
    from ui.chat import LISTENING, NOT_HEARD

    msg = "I didn't catch that — the recording was too short to hold a question."
    events = [Notice(msg, "warning"), Done(Answer(text=msg, provider="speech"), trace={})]
    state = ChatState(session=object())
    shown = [st.messages[0]["content"] for st in run_turn(_respond(events), state, AudioInput(path="x.wav"))]
    assert shown[0] == LISTENING and shown[-1] == NOT_HEARD
    assert state.messages[-1]["content"] == msg


def test_a_failing_turn_replaces_the_transcribing_bubble_in_its_last_view():
    from assistant.events import AudioInput
    from ui.chat import NOT_HEARD

    def broken(session, user_input, cancel=None):
        raise RuntimeError("decoder crashed")
        yield  # pragma: no cover

    state = ChatState(session=object())
    views = [
        (st.messages[0]["content"], st.messages[1]["content"])
        for st in run_turn(broken, state, AudioInput(path="x.wav"))
    ]
    assert views[-1][0] == NOT_HEARD and "Something went wrong" in views[-1][1]


def test_a_voice_turn_marks_when_each_stage_happened():
    """The marks bench.voice reads: a release's marks carry on into its turn, in the order the
    stages ran, and the next (typed) turn starts its own."""
    from assistant.events import Transcript
    from ui.speaker import SpeechQueue

    events = [Transcript("notice period?", 0.1), Token("Two months"), Token(", in writing [1]."), Token(" More.")]
    events.append(Done(Answer(text="Two months, in writing [1]. More.", provider="groq"), trace={}))
    state = ChatState(session=object())
    state.voice.marks = {"release": 1.0}
    speech = state.speech = SpeechQueue()
    list(run_turn(_respond(events), state, "q", on_answer_text=speech.feed))
    speech.finish()
    assert list(speech.sentences())  # the speaker takes the first clause
    marks = state.voice.marks
    assert list(marks) == ["release", "turn", "transcript", "first_token", "first_clause"]
    assert marks["turn"] <= marks["transcript"] <= marks["first_token"] <= marks["first_clause"]
    state.speech = SpeechQueue()
    list(run_turn(_respond(events[1:]), state, "typed"))
    assert "release" not in state.voice.marks and "turn" in state.voice.marks


def test_the_answer_is_spoken_as_it_comes_even_while_the_page_is_slow_to_take_a_view():
    import threading

    heard: list[str] = []
    all_heard = threading.Event()

    def respond(session, user_input, cancel=None):
        yield Token("Two months")
        yield Token(" [1].")
        yield Done(Answer(text="Two months [1].", provider="local"), trace={})

    def speak(text):
        heard.append(text)
        if len(heard) == 2:
            all_heard.set()

    ended = threading.Event()
    turns = run_turn(respond, ChatState(session=object()), "notice period?", on_answer_text=speak,
                     on_answer_end=ended.set)
    next(turns)  # the page took the first view and is busy rendering it: nothing more is asked for
    assert all_heard.wait(5)  # the whole answer reached the speech meanwhile
    assert ended.wait(5)  # and its end, so the last sentence is complete without waiting for the page
    assert heard == ["Two months", " [1]."]  # once each: Done's whole text is not spoken again
    views = list(turns)
    assert views[-1].messages[-1]["content"].startswith("Two months")


def test_a_whole_answer_without_tokens_is_spoken_once():
    heard: list[str] = []
    events = [Done(Answer(text="I'm sorry, that information is not known to me.", provider="extractive"), trace={})]
    list(run_turn(_respond(events), ChatState(session=object()), "q", on_answer_text=heard.append))
    assert heard == ["I'm sorry, that information is not known to me."]


def test_a_page_that_goes_away_stops_the_turn():
    import threading
    import time

    stopped = threading.Event()

    def respond(session, user_input, cancel=None):
        while not cancel.is_set():  # a long answer, streaming until it is told to stop
            yield Token(" more")
            time.sleep(0.01)
        stopped.set()

    turns = run_turn(respond, ChatState(session=object()), "q")
    next(turns)
    next(turns)
    turns.close()  # Gradio closes the generator of a page that went away
    assert stopped.wait(5)
