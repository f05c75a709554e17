"""Follow-up rewriting on a scripted dialogue: heuristic without an LLM, through the real LLM chain
on a loopback server with one, and a new topic is never rewritten."""

from __future__ import annotations

import pytest

from assistant.components import Components
from assistant.config import ProviderSettings
from assistant.items import list_items
from assistant.memory import Exchange
from assistant.rewrite import FollowUpRewriter, consistent, detect, topic_of
from tests.assistant.turn_fixtures import make_config
from tests.llm_server import Fail, LLMServer, Reply

PENALTIES = Exchange(
    user="What are the penalties for late payment?",
    assistant="There are three penalties:\n1. A late fee of 25 euros [1]\n2. Interest at 8% per year [2]\n"
    "3. Termination after 60 days [1]",
    query="What are the penalties for late payment?",
    sources=["lease.md", "rules.md"],
)
TAGS = Exchange(user="Which build option skips the test suite?", assistant="nocheck: This tag says not to run the tests [1].",
                query="Which build option skips the test suite?")  # fmt: skip
SYMBOLS = Exchange(user="and which one keeps the debugging symbols?", assistant="nostrip keeps them [1].",
                   query="which build option keeps the debugging symbols?")  # fmt: skip
CURIE = Exchange(user="Who was Marie Curie?", assistant="Marie Curie was a physicist who won two Nobel Prizes.",
                 query="Who was Marie Curie?")  # fmt: skip

# (last exchange, follow-up, words the standalone query must contain)
DIALOGUE = [
    (PENALTIES, "tell me more", ["penalties", "late payment"]),
    (PENALTIES, "What about them?", ["penalties", "late payment"]),
    (PENALTIES, "and the second one?", ["interest", "8%"]),
    (PENALTIES, "what about the last one", ["termination", "60 days"]),
    (PENALTIES, "Why?", ["penalties"]),
    (PENALTIES, "what about smoking?", ["what are the penalties for smoking"]),  # the question, for smoking
    (TAGS, "and which one keeps the debugging symbols?", ["which build option keeps the debugging symbols"]),
    (SYMBOLS, "what about parallel builds?", ["which build option keeps parallel builds"]),  # not "… symbols parallel builds"
    (Exchange(user="How is the course assessed?", assistant="By a written exam [1].", query="How is the course assessed?"),
     "and what about attendance?", ["course", "attendance"]),  # a subject keeps its place
    (CURIE, "When did she die?", ["marie curie", "die"]),
    (CURIE, "what did he discover", ["marie curie", "discover"]),
    (CURIE, "Did an illness end her career?", ["marie curie's career"]),  # her: not the illness
    (Exchange(user="What is the default scoring strategy for multiple questions?", assistant="haut=2 [1].",
              query="What is the default scoring strategy for multiple questions?"),
     "and for simple ones?", ["what is the default scoring strategy for simple questions"]),  # ones: questions
    (Exchange(user="What duration does the first note get if I give none?", assistant="A quarter note [1].",
              query="What duration does the first note get if I give none?"),
     "and the notes after it?", ["what duration does the notes after the first note"]),  # asked in its place
    (Exchange(user="What does the -nosafe option of asy do?", assistant="It allows unsafe mode [1].",
              query="What does the -nosafe option of asy do?"),
     "and the -safe one?", ["what does the -safe option of asy do"]),  # one: the option
    (Exchange(user="Which ID range does the server give guest user accounts?", assistant="5000-5999 [1].",
              query="Which ID range does the server give guest user accounts?"),
     "and admin users?", ["which id range does the server give admin users?"]),  # in the phrase sharing "user"
    (Exchange(user="How many old backups does the nightly job keep?", assistant="Seven [1].",
              query="How many old backups does the nightly job keep?"),
     "where does it store them?", ["old backups"]),  # what was counted
]
NEW_TOPICS = [
    (PENALTIES, "What is the notice period in the rental agreement?"),
    (PENALTIES, "How often should I check the brake pads?"),
    (CURIE, "Who wrote the Harry Potter books?"),
    (CURIE, "Is it true that cats are allowed in the flat?"),
    (CURIE, "Did radium lose its popularity as a cure?"),  # its: the question's own subject
    (None, "tell me more"),  # nothing to follow up on
]


@pytest.mark.parametrize("last,question,must", DIALOGUE)
def test_heuristic_rewrites_follow_ups_into_standalone_queries(last, question, must):
    rw = FollowUpRewriter().rewrite(question, last)
    assert rw.rewritten and rw.method == "heuristic" and rw.original == question
    for word in must:
        assert word in rw.query.lower(), (question, rw.query)


@pytest.mark.parametrize("last,question", NEW_TOPICS)
def test_a_new_topic_is_not_rewritten(last, question):
    calls = []
    rw = FollowUpRewriter(lambda m: calls.append(m) or "SHOULD NOT BE USED").rewrite(question, last)
    assert not rw.rewritten and rw.query == question and rw.method == "none"
    assert calls == []  # no LLM call for a question that stands on its own


def test_helpers():
    assert topic_of("What are the penalties for late payment?") == "the penalties for late payment"
    assert list_items(PENALTIES.assistant) == [
        "A late fee of 25 euros",
        "Interest at 8% per year",
        "Termination after 60 days",
    ]
    assert list_items("Options: 1. red 2. green 3. blue") == ["red", "green", "blue"]
    assert detect("tell me more", None) == ""


@pytest.fixture
def chain_parts(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-REWRITE")
    with LLMServer() as server:
        cfg = make_config(tmp_path)
        cfg.llm.order = ["openai"]
        cfg.llm.providers = {
            "openai": ProviderSettings(
                kind="openai", model="gpt-test", base_url=server.openai_url, key_env=["OPENAI_API_KEY"]
            )  # fmt: skip
        }
        cfg.llm.first_token_timeout = 5
        yield server, Components(cfg)


def test_llm_rewrite_through_the_real_chain(chain_parts):
    server, parts = chain_parts
    server.script("gpt-test", Reply("  interest at 8% per year on late payment\n"))
    rewriter = FollowUpRewriter(parts.complete, parts.llm_available)
    rw = rewriter.rewrite("and the second one?", PENALTIES, "User: What are the penalties...\nAssistant: ...")
    assert rw.method == "llm" and rw.query == "interest at 8% per year on late payment"
    body = server.requests[0].body
    prompt = " ".join(m["content"] for m in body["messages"])
    assert "and the second one?" in prompt and "standalone" in prompt.lower()


def test_llm_failure_falls_back_to_the_heuristic(chain_parts):
    server, parts = chain_parts
    server.script("gpt-test", Fail(500), Fail(500))
    rw = FollowUpRewriter(parts.complete, parts.llm_available).rewrite("and the second one?", PENALTIES)
    assert rw.method == "heuristic" and "interest" in rw.query.lower()


CRAN = Exchange(user="What does CRAN stand for?", query="What does CRAN stand for?",
                assistant="CRAN stands for the Comprehensive R Archive Network [1].")  # fmt: skip
CONVERSATION = "User: What does CRAN stand for?\nAssistant: CRAN stands for the Comprehensive R Archive Network [1]."


def test_an_llm_rewrite_is_used_only_when_it_keeps_to_the_conversation(chain_parts):
    server, parts = chain_parts
    server.script(
        "gpt-test",
        Reply("Who maintains the Comprehensive R Archive Network (CRAN)?"),  # the conversation's words: used
        Reply("What is the weather forecast for Paris tomorrow?"),  # words from nowhere: not used
        Reply("CRAN"),  # drops the question's own word "maintains": not used
    )
    rewriter = FollowUpRewriter(parts.complete, parts.llm_available)
    first, foreign, dropped = (rewriter.rewrite("Who maintains it?", CRAN, CONVERSATION) for _ in range(3))
    assert first.method == "llm" and first.query == "Who maintains the Comprehensive R Archive Network (CRAN)?"
    for rw in (foreign, dropped):  # the heuristic's rewrite instead
        assert rw.method == "heuristic" and rw.query == "Who maintains CRAN?"
    assert len(server.requests) == 3


def test_consistent():
    assert consistent("who maintains it?", "Who maintains CRAN?", CONVERSATION)
    assert consistent("who maintanes it?", "Who maintains CRAN?", CONVERSATION)  # a typo of the question's word
    assert not consistent("who maintains it?", "Who funds CRAN?", CONVERSATION)  # "maintains" dropped
    assert not consistent("who maintains it?", "Who maintains CRAN mirrors in Austria?", CONVERSATION)
    assert not consistent("who maintains it?", "", CONVERSATION)


def test_the_answer_is_written_for_the_words_that_name_the_subject():
    from assistant.memory import ConversationMemory
    from assistant.rewrite import rewrite_question

    memory = ConversationMemory()
    memory.add(Exchange(user="How do I turn off automatic beams?", assistant="Use \\autoBeamOff [1].",
                        query="How do I turn off automatic beams?"))  # fmt: skip
    back = rewrite_question("and what about turning them back on?", memory, FollowUpRewriter())
    assert "automatic beams" in back.query and back.answered == back.query, back  # "them" names nothing
    about = rewrite_question("and what about manual beams?", memory, FollowUpRewriter())
    assert about.answered == "and what about manual beams?"  # it names its own subject
