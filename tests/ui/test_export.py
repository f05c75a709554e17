"""The conversation download: questions, answers and cited sources (file, page) as Markdown and JSON,
from the turns one browser tab folded with ui/chat.py."""

from __future__ import annotations

import json
from pathlib import Path

from assistant.events import NOT_KNOWN, Answer, Done, Sources, Token, Transcript
from knowledge.types import Hit, Retrieval
from ui.chat import ChatState, run_turn
from ui.export import conversation_json, conversation_markdown, export_files


def _respond(events):
    def respond(session, user_input, cancel=None):
        yield from events

    return respond


def _chat() -> ChatState:
    lease = Hit("c1", "docs/lease.pdf", "Lease", "The notice period is two months.", 0.9, pages=[3], section="Ending")
    state = ChatState(session=object())
    first = [
        Sources(Retrieval("q", [lease], [lease], relevant=True)),
        Token("Two months [1]."),
        Done(Answer("Two months [1].", "extractive", cited=[lease]), trace={}),
    ]
    list(run_turn(_respond(first), state, "What is the notice period?"))
    second = [Transcript("Who painted the moon?", 1.0), Done(Answer(NOT_KNOWN, "none", not_known=True), trace={})]
    list(run_turn(_respond(second), state, object()))  # spoken: the transcript is the question
    return state


def test_markdown_has_each_question_answer_and_cited_file_and_page():
    md = conversation_markdown(_chat().turns)
    assert "## 1. What is the notice period?" in md and "Two months [1]." in md
    assert "1. Lease (docs/lease.pdf, p. 3, section “Ending”)" in md
    assert "## 2. Who painted the moon?" in md and NOT_KNOWN in md
    assert md.count("Sources:") == 1  # none under the not-known answer


def test_json_and_the_written_files_hold_the_same_conversation(tmp_path: Path):
    state = _chat()
    data = conversation_json(state.turns)
    assert [t["question"] for t in data["turns"]] == ["What is the notice period?", "Who painted the moon?"]
    cited = data["turns"][0]["cited"][0]
    assert cited["source_path"] == "docs/lease.pdf" and cited["pages"] == [3] and "two months" in cited["passage"]
    assert data["turns"][1]["not_known"] is True and data["turns"][1]["cited"] == []
    md_path, json_path = export_files(state.turns)
    assert md_path.endswith(".md") and "Two months" in Path(md_path).read_text(encoding="utf-8")
    assert json.loads(Path(json_path).read_text(encoding="utf-8"))["turns"] == data["turns"]
