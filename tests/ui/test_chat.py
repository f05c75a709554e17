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
    assert "two mon" in shown[restart_at - 1]
    assert shown[restart_at + 1] == "Two months [1]."
    assert "two mon" not in state.messages[-1]["content"]
    assert state.messages[-1]["content"].startswith("Two months")


def test_plain_notice_keeps_the_streamed_text():
    events = [Token("Partial"), Notice("web search unavailable", "warning"), Token(" answer.")]
    events.append(Done(Answer(text="Partial answer.", provider="extractive"), trace={}))
    state = ChatState(session=object())
    list(run_turn(_respond(events), state, "q"))
    assert state.messages[-1]["content"] == "Partial answer."
