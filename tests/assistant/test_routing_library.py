"""Routing by where the answer is, on a real library (real Ingestor, LanceDB in a temp folder, MiniLM):
a question the library answers goes to the documents whatever the classifier says about "session";
a question about this conversation, a greeting, still get their own short replies."""

from __future__ import annotations

import pytest

from assistant.assistant import Assistant
from assistant.events import IntentEvent, Sources
from assistant.memory import Exchange
from tests.assistant.turn_fixtures import make_config, shared_classifier

# written for this test: a short R introduction, where "session" is the manual's own word
R_GUIDE = """# Getting started with R

## Starting and ending a session
Start R by typing R at the shell prompt. To end an R session, type q() at the R prompt. R then asks
whether to save the workspace image: answer y to keep the objects of the session in the file .RData
of the working directory, n to quit without saving them, or c to cancel and go back to the session.

## The workspace
Objects made during a session are kept in the workspace. The function ls() lists them and rm()
removes them. The history of the commands typed is written to .Rhistory when the workspace is saved.

## Getting help
help(solve) or ?solve opens the help page of the function solve. help.start() opens the HTML help
in a web browser, and example(topic) runs the examples of a help page.
"""
PACKAGES = """# R packages

install.packages("name") downloads a package from CRAN, the Comprehensive R Archive Network, and
installs it into the library folder. library(name) attaches an installed package to the search path.
update.packages() checks CRAN for newer versions of the installed packages.
"""


@pytest.fixture(scope="module")
def r_library(tmp_path_factory, minilm):
    from knowledge.ingest import Ingestor
    from knowledge.settings import IngestSettings, StoreSettings
    from knowledge.store import ChunkStore

    base = tmp_path_factory.mktemp("r_library")
    docs = base / "docs"
    docs.mkdir()
    (docs / "r-intro.md").write_text(R_GUIDE, encoding="utf-8")
    (docs / "r-packages.md").write_text(PACKAGES, encoding="utf-8")
    uri = str(base / "lancedb")
    store = ChunkStore.open(uri, minilm.identity, minilm.dim, StoreSettings(data_dir=str(base)))
    Ingestor(store, minilm, IngestSettings(isolation="inline")).ingest([docs])
    assert store.count() >= 2
    return uri, store, minilm


class _Says:
    """A classifier whose prediction is this test's input (the routing around it is under test)."""

    def __init__(self, label: str, confidence: float = 0.9) -> None:
        from models.intent import IntentPrediction

        self.prediction = IntentPrediction(label, confidence, {label: confidence})

    def predict(self, text: str):
        return self.prediction


def _assistant(tmp_path, r_library, classifier) -> Assistant:
    uri, store, emb = r_library
    cfg = make_config(tmp_path, None, store__uri=uri)
    return Assistant(cfg, embedder=emb, store=store, classifier=classifier)


def _intent(events) -> IntentEvent:
    return next(e for e in events if isinstance(e, IntentEvent))


@pytest.mark.parametrize("label", ["conversation_meta", "greeting"])
def test_a_question_the_library_answers_goes_to_the_documents_whatever_the_label(tmp_path, r_library, label):
    a = _assistant(tmp_path, r_library, _Says(label))
    events = list(a.respond(a.new_session(), "How do I end an R session?"))
    intent, done = _intent(events), events[-1]
    assert (intent.label, intent.source) == ("rag_search", "library")
    assert next(e for e in events if isinstance(e, Sources)).kind == "documents"
    assert "q()" in done.answer.text and not done.answer.not_known
    assert done.trace["intent"]["predicted"] == label and done.trace["relevant"] is True


def test_the_shipped_classifier_and_the_library_answer_the_session_question(tmp_path, r_library):
    a = _assistant(tmp_path, r_library, shared_classifier())
    s = a.new_session()
    done = list(a.respond(s, "How do I end an R session?"))[-1]
    assert done.trace["intent"]["label"] == "rag_search" and "q()" in done.answer.text
    assert s.memory.last.intent == "rag_search"


@pytest.mark.parametrize("classifier", [_Says("conversation_meta"), None])
def test_a_question_about_this_conversation_stays_with_the_conversation(tmp_path, r_library, classifier):
    a = _assistant(tmp_path, r_library, classifier or shared_classifier())
    s = a.new_session()
    s.memory.add(Exchange(user="How do I install a package?", assistant="With install.packages() [1].",
                          intent="rag_search", query="How do I install a package?"))  # fmt: skip
    events = list(a.respond(s, "What did I ask you first in this session?"))
    assert (_intent(events).label, events[-1].answer.provider) == ("conversation_meta", "memory")
    assert events[-1].answer.text == 'Your first question was: "How do I install a package?"'
    assert not any(isinstance(e, Sources) for e in events)
    assert "candidates" not in events[-1].trace  # words about the chat: the library is not even asked


def test_an_unconfirmed_conversation_label_keeps_its_reply_when_the_library_has_no_answer(tmp_path, r_library):
    a = _assistant(tmp_path, r_library, _Says("conversation_meta"))
    s = a.new_session()
    s.memory.add(Exchange(user="How do I install a package?", assistant="With install.packages() [1].",
                          intent="rag_search", query="How do I install a package?"))  # fmt: skip
    events = list(a.respond(s, "which topic came up earlier?"))
    done = events[-1]
    assert (_intent(events).label, done.answer.provider) == ("conversation_meta", "memory")
    assert done.trace["relevant"] is False  # the library was asked and does not answer it
    assert s.memory.last.intent == "conversation_meta" and s.memory.last.query == "which topic came up earlier?"


def test_a_greeting_formula_is_greeted_without_a_search(tmp_path, r_library):
    a = _assistant(tmp_path, r_library, _Says("greeting"))
    events = list(a.respond(a.new_session(), "hello there!"))
    assert (_intent(events).label, events[-1].answer.provider) == ("greeting", "greeting")
    assert "candidates" not in events[-1].trace


@pytest.mark.parametrize("question", ["wht currency does brazil use?", "who paintd the night watch#"])
def test_a_noisy_world_question_goes_to_the_web_when_it_is_on_else_not_known(tmp_path, r_library, monkeypatch,
                                                                             question):  # fmt: skip
    from tests.serp_server import SerpServer

    uri, store, emb = r_library
    a = _assistant(tmp_path, r_library, shared_classifier())
    events = list(a.respond(a.new_session(), question))  # no web search key: the library does not know
    assert events[-1].answer.not_known and _intent(events).label == "web_search"
    monkeypatch.setenv("SERPAPI_API_KEY", "serp-test-WORLD")
    with SerpServer() as serp:
        cfg = make_config(tmp_path, None, store__uri=uri, websearch__base_url=serp.url)
        a = Assistant(cfg, embedder=emb, store=store, classifier=shared_classifier())
        events = list(a.respond(a.new_session(), question))
        assert next(e for e in events if isinstance(e, Sources)).kind == "web" and len(serp.state.requests) == 1
