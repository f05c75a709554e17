"""Follow-ups resolved to what they refer to: the heuristic rewriter on follow-ups phrased as people
speak them (no LLM), a conversation replayed into a real Session whose queries never pile up, and
"Who maintains it?" after "What does CRAN stand for?" searched and answered through a real turn on a
real small library."""

from __future__ import annotations

import pytest

from assistant.assistant import Assistant
from assistant.events import Rewritten
from assistant.memory import Exchange
from assistant.referent import names_in, phrases_in, salient
from assistant.rewrite import FollowUpRewriter, rewrite_question
from assistant.session import Session
from tests.assistant.turn_fixtures import make_config, shared_classifier

R_DOCS = {
    "r-faq.md": """# R frequently asked questions

## What is CRAN?
CRAN stands for the Comprehensive R Archive Network. It is a network of servers around the world
that store identical copies of R, its documentation and its contributed packages.

## Who maintains CRAN?
CRAN is maintained by the CRAN team, a small group of volunteers of the R project who check every
package that is submitted.

## Ending a session
To end an R session, type q(). R then asks whether to save the workspace image, so that the objects
you created are restored the next time R starts in the same folder.
""",
    "install.md": """# Installing R

## Linux
On Linux, install R with the package manager of your distribution, for example apt install r-base.

## Windows
On Windows, download the installer from CRAN and run it; it puts R in the Start menu.
""",
}

# (the conversation so far: (question, answer) pairs, the follow-up, words the query must hold, words it must not)
SPOKEN = [
    ([("What does CRAN stand for?", "CRAN stands for the Comprehensive R Archive Network [1].")],
     "Who maintains it?", ["who maintains cran"], ["stand"]),
    ([("What does CRAN stand for?", "CRAN stands for the Comprehensive R Archive Network [1].")],
     "and who maintains it?", ["maintains cran"], ["stand"]),
    ([("How do I install R on Linux?", "Use the package manager of your distribution [1].")],
     "and for Windows?", ["install r", "windows"], ["linux"]),
    ([("How do I install R on Linux?", "Use the package manager of your distribution [1].")],
     "what about Windows?", ["install r on windows"], ["linux"]),
    ([("How do I set the CRAN mirror?", "Use chooseCRANmirror() [2].")],
     "what's the default?", ["default", "the cran mirror"], ["set"]),
    ([("How do I end an R session?", "Type q() to end an R session [1].")],
     "does it save the workspace?", ["an r session save the workspace"], ["end"]),
    ([("What is the default port of PostgreSQL?", "PostgreSQL listens on port 5432 [3].")],
     "how do I change it?", ["change the default port of postgresql"], []),
    ([("Tell me about Joan Leslie, Career.", ""), ("What films was she in?", "Sergeant York and High Sierra.")],
     "Who blacklisted her?", ["who blacklisted joan leslie?"], ["'s"]),
    ([("Tell me about Frank Zappa, Disbandment.", ""), ("When did they disband?", "In late 1969 Zappa broke up the band.")],
     "What kind of music did they play?", ["frank zappa play"], ["disband"]),
    ([("Tell me about INXS, Early years.", ""), ("How did the band get started?", "The band formed in Sydney in 1977.")],
     "Did the band tour?", ["tour", "inxs"], ["started", "formed"]),
    # the conversation moved on: "it" is what the last question was about, not the first subject
    ([("What does CRAN stand for?", "CRAN stands for the Comprehensive R Archive Network [1]."),
      ("How do I end an R session?", "Type q() to end an R session; R asks whether to save the workspace [1].")],
     "does it save the workspace?", ["does an r session save the workspace"], ["cran"]),
    ([("Which UID range does Debian give ordinary user accounts?", "1000-59999 [1]."),
      ("What is the default paper size of DocBook FO output?", "USletter [2].")],
     "and how do I print it double sided?", ["the default paper size of docbook fo output"], ["uid"]),
]  # fmt: skip
STANDALONE = [
    ([("What does CRAN stand for?", "CRAN stands for the Comprehensive R Archive Network [1].")],
     "How often should I check the brake pads?"),
    ([("Tell me about Julian Assange, Personal life.", "")], "Did Assange get married?"),
    ([("Tell me about Bill Monroe, Career.", "")], "What was folk revival?"),
    ([("How do I set the CRAN mirror?", "Use chooseCRANmirror() [2].")], "What is the capital of France?"),
]  # fmt: skip


def _exchanges(pairs):
    return [Exchange(user=q, assistant=a, query=q) for q, a in pairs]


@pytest.mark.parametrize("pairs,question,must,must_not", SPOKEN)
def test_spoken_follow_ups_name_what_they_refer_to(pairs, question, must, must_not):
    kept = _exchanges(pairs)
    rw = FollowUpRewriter().rewrite(question, kept[-1], "", kept)
    assert rw.rewritten and rw.method == "heuristic", rw
    query = rw.query.lower()
    for words in must:
        assert words in query, (question, rw.query)
    for word in must_not:
        assert word not in query.replace(question.lower(), ""), (question, rw.query)


@pytest.mark.parametrize("pairs,question", STANDALONE)
def test_a_question_that_names_its_subject_is_left_alone(pairs, question):
    kept = _exchanges(pairs)
    rw = FollowUpRewriter().rewrite(question, kept[-1], "", kept)
    assert rw.query == question and not rw.rewritten


def test_noun_phrases_and_salience():
    assert names_in("Zappa and the Mothers of Invention broke up in 1969. In October they played.", set()) == [
        "Zappa and the Mothers of Invention"]  # "In", "October": no names  # fmt: skip
    assert names_in("Was Rosalind Franklin's IQ ever tested?", set()) == ["Rosalind Franklin", "IQ"]
    assert phrases_in("What are the penalties for late payment?") == ["the penalties for late payment"]
    assert phrases_in("Did the band tour?") == ["the band"]
    # "Darin" in the answers counts for "Bobby Darin", the conversation's subject
    ranked = salient(_exchanges([("Tell me about Bobby Darin, Early life.", ""),
                                 ("Where was he born?", "Darin was born in the Bronx, New York City.")]))  # fmt: skip
    assert ranked[0].text == "Bobby Darin" and all(c.text != "Darin" for c in ranked)


def test_a_replayed_conversation_does_not_pile_up(tmp_path):
    """A dialog through a real Session, each question remembered with the query Hark made of it:
    every query is the question with one referent named, never the earlier questions' words."""
    session = Session.from_config(make_config(tmp_path))
    rewriter = FollowUpRewriter()
    turns = [
        ("Tell me about Walter Scott, Early life.", ""),
        ("where was he born?", "Scott was born in College Wynd in the Old Town of Edinburgh in 1771."),
        ("what did he do after school?", "In October 1783 he went to the University of Edinburgh."),
        ("what did he study there?", "He studied classics, and later law at the University of Edinburgh."),
        ("did his parents support it?", "His father, a solicitor, wanted him to follow him into the law."),
        ("when did he start writing?", "He began collecting the ballads of the Scottish Borders in the 1790s."),
    ]
    queries = []
    for question, answer in turns:
        q = rewrite_question(question, session.memory, rewriter)
        queries.append(q.query)
        session.remember(Exchange(user=question, assistant=answer, query=q.query))
    assert queries[1:] == [
        "where was Walter Scott born?",
        "what did Walter Scott do after school?",
        "what did Walter Scott study there?",
        "did Walter Scott's parents support it?",
        "when did Walter Scott start writing?",
    ]


@pytest.fixture(scope="module")
def r_library(tmp_path_factory, minilm):
    from knowledge.ingest import Ingestor
    from knowledge.settings import IngestSettings, StoreSettings
    from knowledge.store import ChunkStore

    base = tmp_path_factory.mktemp("r_library")
    docs = base / "docs"
    docs.mkdir()
    for name, text in R_DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    uri = str(base / "lancedb")
    store = ChunkStore.open(uri, minilm.identity, minilm.dim, StoreSettings(data_dir=str(base)))
    Ingestor(store, minilm, IngestSettings()).ingest([docs])
    assert store.count() >= len(R_DOCS)
    return uri, store, minilm


def test_who_maintains_it_searches_for_crans_maintainers(tmp_path, r_library):
    uri, store, emb = r_library
    cfg = make_config(tmp_path, llm__order=[])  # offline: the heuristic rewriter, the extractive answer
    cfg.store.uri = uri
    a = Assistant(cfg, embedder=emb, store=store, classifier=shared_classifier())
    s = a.new_session()
    first = list(a.respond(s, "What does CRAN stand for?"))[-1]
    assert "Comprehensive R Archive Network" in first.answer.text
    events = list(a.respond(s, "Who maintains it?"))
    done = events[-1]
    assert [e.query for e in events if isinstance(e, Rewritten)] == ["Who maintains CRAN?"]
    assert done.trace["query"] == "Who maintains CRAN?" and done.trace["question"] == "Who maintains it?"
    assert done.trace["rewrite"]["method"] == "heuristic"
    assert "CRAN team" in done.answer.text and not done.answer.not_known
    ended = list(a.respond(s, "How do I end an R session?"))[-1]
    assert ended.trace["query"] == "How do I end an R session?" and "q()" in ended.answer.text


def test_the_subject_survives_the_memory_folding_it_away(tmp_path):
    """With a window of one exchange the opening is only in the summary: a later "he" still finds it."""
    cfg = make_config(tmp_path, memory__window_exchanges=1)
    session = Session.from_config(cfg)
    session.remember(Exchange(user="Tell me about Walter Scott, Early life.", assistant="", query="Tell me about Walter Scott, Early life."))
    session.remember(Exchange(user="Which school did the boy attend?", assistant="The Royal High School in Edinburgh.",
                              query="Which school did the boy attend?"))  # fmt: skip
    assert "Walter Scott" in session.memory.summary and len(session.memory.exchanges) == 1
    q = rewrite_question("what did he study at university?", session.memory, FollowUpRewriter())
    assert q.query == "what did Walter Scott study at university?"
