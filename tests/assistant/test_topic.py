"""The conversation's topic: what the opening question names, kept beside the referent a follow-up
leans on, given to a question that names nothing, and never to one that names its own subject or
points at the last exchange ("this movie")."""

from __future__ import annotations

import pytest

from assistant.memory import Exchange
from assistant.rewrite import FollowUpRewriter, rewrite_question
from assistant.session import Session
from assistant.topic import opening_topic, topic_of_conversation, with_topic
from tests.assistant.turn_fixtures import make_config


@pytest.mark.parametrize(
    ("opening", "topic"),
    [
        ("Tell me about Frank Zappa, Disbandment.", "Frank Zappa"),
        ("Tell me about All About Eve, Development.", "All About Eve"),
        ("Tell me about Michael Bennett (theater), Early life and career.", "Michael Bennett"),
        ("Tell me about A. C. Bhaktivedanta Swami Prabhupada, Religious journey.", "A. C. Bhaktivedanta Swami Prabhupada"),
        ("Tell me about Boy band, Early history.", "Boy band"),
        ("What does CRAN stand for?", "CRAN"),
        ("How do I import the standard X11 colors in Asymptote?", "Asymptote"),  # where it is asked
        ("how do I get better at cooking rice?", ""),  # names nothing
    ],
)  # fmt: skip
def test_the_topic_is_what_the_opening_names(opening, topic):
    assert opening_topic(opening) == topic


def _session(tmp_path, opening, pairs):
    session = Session.from_config(make_config(tmp_path))
    session.remember(Exchange(user=opening, assistant="", query=opening))
    for q, a in pairs:
        session.remember(Exchange(user=q, assistant=a, query=q))
    return session


def _query(session, question):
    return rewrite_question(question, session.memory, FollowUpRewriter()).query


ZAPPA = [("What group disbanded?", "Zappa and the Mothers of Invention"),
         ("When did they disband?", "In late 1969, Zappa broke up the band.")]  # fmt: skip


def test_a_question_that_names_nothing_is_asked_of_the_topic(tmp_path):
    session = _session(tmp_path, "Tell me about Frank Zappa, Disbandment.", ZAPPA)
    assert "Frank Zappa" in _query(session, "Why were there financial problems?")
    # naming the topic, a name of the conversation, or pointing at the last exchange: left as asked
    for own in ("Why did Zappa break up the band?", "Did the Mothers of Invention tour again?",
                "What year did this album come out?", "What is a three-way amp switcher?"):  # fmt: skip
        assert _query(session, own) == own


def test_a_pronoun_is_resolved_to_the_person_the_conversation_is_about(tmp_path):
    # the section's words ("Marriage") are no person; an initial keeps the name whole
    session = _session(tmp_path, "Tell me about Bill W., Marriage, work, and alcoholism.",
                       [("When did they get married?", "1918")])  # fmt: skip
    query = _query(session, "How did alcohol impact his life?")
    assert "Bill W" in query and "Marriage" not in query
    # a name with a capital inside ("DiFiglia") is a person's
    session = _session(tmp_path, "Tell me about Michael Bennett (theater), Early life and career.",
                       [("Where was Bennett born?", "Bennett was born Michael Bennett DiFiglia in Buffalo, New York,")])  # fmt: skip
    query = _query(session, "When was he born?")
    assert "Michael Bennett" in query and "Early" not in query


def test_anything_else_names_the_topic_not_what_it_goes_beyond(tmp_path):
    session = _session(tmp_path, "Tell me about Nina Tucker, Casting.",
                       [("Who was the casting director?", "I don't know.")])  # fmt: skip
    query = _query(session, "Are there any other interesting aspects about this article?")
    assert query.endswith("(Nina Tucker)?") and "casting director" not in query


def test_a_manuals_term_is_a_subject_of_its_own(tmp_path):
    session = _session(tmp_path, "How do I enter a pickup measure in LilyPond?", [])
    session.memory.clear()
    session.remember(Exchange(user="How do I enter a pickup measure in LilyPond?", query="",
                              assistant="A pickup is entered with the keyword \\partial, followed by a duration."))  # fmt: skip
    assert _query(session, "what does partial 8 mean?") == "what does partial 8 mean?"


def test_the_topic_is_kept_when_the_memory_folds_the_opening_away(tmp_path):
    session = Session.from_config(make_config(tmp_path, memory__window_exchanges=1))
    session.remember(Exchange(user="Tell me about The Cult, Ceremony and the lawsuit.", assistant="", query=""))
    for q, a in [("What was Ceremony?", "The Cult's fifth album."), ("Who sued?", "A Native American boy's parents.")]:
        session.remember(Exchange(user=q, assistant=a, query=q))
    assert topic_of_conversation(session.memory.questions).text == "The Cult"
    assert "The Cult" in _query(session, "How was it settled?")
    assert with_topic("How was it settled (The Cult)?", "How was it settled?", topic_of_conversation(
        session.memory.questions)) == "How was it settled (The Cult)?"  # fmt: skip


def test_and_x_keeps_the_topic_and_an_answers_one_letter_name_is_no_referent(tmp_path):
    session = Session.from_config(make_config(tmp_path))
    session.remember(Exchange(user="Which language are LilyPond note names in by default?", query="",
                              assistant="The default input language for note names is ‘nederlands’ (Dutch). A note name "
                                        "consists of a base name referring to the steps of the C major scale."))  # fmt: skip
    query = _query(session, "how do I write a sharp?")
    assert query == "how do I write a sharp (LilyPond)?", query  # not "(C)": a note, not what is asked about
    session.remember(Exchange(user="how do I write a sharp?", query=query,
                              assistant="A sharp pitch is made by adding ‘is’ to the name."))  # fmt: skip
    assert _query(session, "and a flat?") == "how do I write a flat (LilyPond)?"
